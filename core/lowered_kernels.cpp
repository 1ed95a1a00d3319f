#include "core/lowered_kernels.h"

#include <set>
#include <sstream>

#include "core/halide_compat.h"
#include "core/let_scope.h"

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

std::string text_of(const Expr &e) {
    std::ostringstream s;
    s << e;
    return s.str();
}

// A buffer's shape as the pipeline's arguments give it ("in.min.0",
// "out.extent.1"): kept as a variable in an assertion, to be given the
// estimated sizes.
bool is_buffer_shape(const std::string &name) {
    size_t dot = name.find_last_of('.');
    if (dot == std::string::npos || dot + 1 == name.size()) return false;
    for (size_t i = dot + 1; i < name.size(); i++)
        if (name[i] < '0' || name[i] > '9') return false;
    const size_t prev = name.find_last_of('.', dot - 1);
    if (prev == std::string::npos) return false;
    const std::string field = name.substr(prev + 1, dot - prev - 1);
    return field == "min" || field == "extent" || field == "max";
}

bool is_gpu_loop(const For *op) {
    return op->for_type == ForType::GPUBlock || op->for_type == ForType::GPUThread ||
           op->for_type == ForType::GPULane;
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entry name the offload gives a kernel: "kernel_" and its outermost
// loop's name, printed as a C name (Halide numbers it where it repeats).
std::string entry_name(const std::string &loop) {
    return c_print_name("kernel_" + loop);
}

void set_launch_values(KernelLaunch &l, const Expr threads[3], const Expr &shared) {
    for (int d = 0; d < 3; d++) {
        l.threads_expr[d] = text_of(threads[d]);
        if (auto c = const_int(threads[d])) l.threads[d] = *c;
    }
    l.shared_mem_expr = text_of(shared);
    if (auto c = const_int(shared)) l.shared_mem_bytes = *c;
}

// A visitor that keeps the value of every let around the point it visits.
class LetTrackingVisitor : public IRVisitor {
protected:
    using IRVisitor::visit;

    void visit(const LetStmt *op) override {
        op->value.accept(this);
        lets_.push(op->name, op->value);
        op->body.accept(this);
        lets_.pop(op->name);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        lets_.push(op->name, op->value);
        op->body.accept(this);
        lets_.pop(op->name);
    }

    LetScope lets_;
};

// Walks a statement lowered up to the GPU offload, keeping the enclosing
// lets, and records each kernel's launch and every assertion inside a GPU
// loop (which device code generation drops with only a warning).
class KernelFinder : public LetTrackingVisitor {
public:
    LoweredKernels found;

protected:
    using LetTrackingVisitor::visit;

    void visit(const For *op) override {
        if (!is_gpu_loop(op)) return IRVisitor::visit(op);
        // The outermost GPU loop is the kernel, and names its Func (its
        // loops are "func.s0.var...").
        const bool outermost = loops_.empty();
        if (outermost) {
            kernel_ = op->name.substr(0, op->name.find('.'));
            for (Expr &t : threads_)
                t = 1;
            shared_ = 0;
        }
        for (int d = 0; d < 3; d++)
            if (ends_with(op->name, gpu_thread_loop_suffix(d))) threads_[d] = lets_.resolve(op->extent);
        loops_.push_back(GpuLoop{op->name, lets_.resolve(op->min, is_buffer_shape),
                                 lets_.resolve(op->extent, is_buffer_shape)});
        IRVisitor::visit(op);
        loops_.pop_back();
        if (outermost) {
            KernelLaunch l;
            l.kernel = entry_name(op->name);
            set_launch_values(l, threads_, simplify(shared_));
            found.launches.push_back(std::move(l));
            kernel_.clear();
        }
    }
    void visit(const Allocate *op) override {
        if (!loops_.empty() && op->memory_type == MemoryType::GPUShared && op->extents.size() == 1)
            shared_ = shared_ + lets_.resolve(op->extents[0]) * op->type.bytes();
        IRVisitor::visit(op);
    }
    void visit(const AssertStmt *op) override {
        if (!loops_.empty()) {
            KernelAssertion a{kernel_, "", lets_.resolve(op->condition, is_buffer_shape), loops_};
            // Halide's message for a bound that does not cover what is
            // required names the Func and the dimension.
            Expr message = op->message;
            while (const Let *l = message.as<Let>())
                message = l->body; // CSE may wrap the call
            const Call *msg = message.as<Call>();
            if (msg && msg->name == "halide_error_explicit_bounds_too_small" && msg->args.size() >= 2) {
                const StringImm *var = msg->args[0].as<StringImm>();
                const StringImm *func = msg->args[1].as<StringImm>();
                if (var && func) a.bound = func->value + "." + var->value;
            }
            found.assertions.push_back(std::move(a));
        }
        IRVisitor::visit(op);
    }

private:
    std::string kernel_;
    std::vector<GpuLoop> loops_;
    Expr threads_[3];
    Expr shared_;
};

bool is_kernel_launch(const Call *op) {
    static const std::set<std::string> runs = {"halide_cuda_run", "halide_opencl_run", "halide_metal_run",
                                               "halide_d3d12compute_run", "halide_openglcompute_run"};
    // In the lowered host code (the user context is added at code
    // generation): (state, entry name, blocks x y z, threads x y z, shared
    // memory bytes, argument sizes, arguments, which are buffers).
    return op->call_type == Call::Extern && runs.count(op->name) && op->args.size() >= 9;
}

// Walks the host code keeping the values of the enclosing lets, so a launch
// argument can be written in terms of constants where it is one.
class LaunchCallFinder : public LetTrackingVisitor {
public:
    std::vector<KernelLaunch> launches;

protected:
    using LetTrackingVisitor::visit;

    void visit(const Call *op) override {
        if (is_kernel_launch(op)) {
            KernelLaunch l;
            const Expr name = lets_.resolve(op->args[1]);
            if (const StringImm *s = name.as<StringImm>())
                l.kernel = s->value;
            else
                l.kernel = text_of(name);
            const Expr threads[3] = {lets_.resolve(op->args[5]), lets_.resolve(op->args[6]),
                                     lets_.resolve(op->args[7])};
            set_launch_values(l, threads, lets_.resolve(op->args[8]));
            launches.push_back(std::move(l));
        }
        IRVisitor::visit(op);
    }
};

} // namespace

LoweredKernels lowered_kernels(const Halide::Internal::Stmt &s) {
    KernelFinder finder;
    s.accept(&finder);
    return std::move(finder.found);
}

std::vector<KernelLaunch> kernel_launches(const Halide::Module &module) {
    LaunchCallFinder finder;
    for (const auto &f : module.functions())
        f.body.accept(&finder);
    return std::move(finder.launches);
}

} // namespace gpusched
