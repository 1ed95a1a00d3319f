#include "core/kernel_assertions.h"

#include <set>
#include <sstream>

#include "core/let_scope.h"

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// A buffer's shape as the pipeline's arguments give it ("in.min.0",
// "out.extent.1"): kept as a variable, to be given the estimated sizes.
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

// Records every assertion inside a GPU loop with its enclosing lets and GPU
// loops. Runs as a custom lowering pass, which Halide 14 applies after bounds
// inference and the last simplification and before the GPU offload (where
// the device code generator drops them).
class KernelAssertionFinder : public IRMutator {
public:
    explicit KernelAssertionFinder(std::vector<KernelAssertion> *found) : found_(found) {}

protected:
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        lets_.push(op->name, op->value);
        Stmt s = IRMutator::visit(op);
        lets_.pop(op->name);
        return s;
    }
    Stmt visit(const For *op) override {
        if (!is_gpu_loop(op)) return IRMutator::visit(op);
        // The outermost GPU loop names the kernel's Func (its loops are
        // "func.s0.var...").
        const bool outermost = loops_.empty();
        if (outermost) kernel_ = op->name.substr(0, op->name.find('.'));
        loops_.push_back(GpuLoop{op->name, lets_.resolve(op->min, is_buffer_shape),
                                 lets_.resolve(op->extent, is_buffer_shape)});
        Stmt s = IRMutator::visit(op);
        loops_.pop_back();
        if (outermost) kernel_.clear();
        return s;
    }
    Stmt visit(const AssertStmt *op) override {
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
            found_->push_back(std::move(a));
        }
        return IRMutator::visit(op);
    }

private:
    std::vector<KernelAssertion> *found_;
    std::string kernel_;
    std::vector<GpuLoop> loops_;
    LetScope lets_;
};

std::string join_extents(const VarValues &v, const std::vector<std::string> &outputs) {
    std::ostringstream s;
    for (size_t o = 0; o < outputs.size(); o++) {
        s << (o ? ", " : "") << outputs[o] << " is ";
        for (int d = 0;; d++) {
            auto it = v.find(outputs[o] + ".extent." + std::to_string(d));
            if (it == v.end()) break;
            s << (d ? " x " : "") << static_cast<int64_t>(it->second);
        }
    }
    return s.str();
}

} // namespace

std::vector<KernelAssertion> kernel_assertions(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                               Halide::Module *lowered) {
    std::vector<KernelAssertion> found;
    Halide::Pipeline p = pipeline;
    // The pass is owned by the pipeline's shared contents; the deleter is a
    // no-op because it lives on this stack, and it is removed again before
    // returning so the caller's pipeline (which shares those contents) is
    // lowered without it.
    KernelAssertionFinder finder(&found);
    p.add_custom_lowering_pass(&finder, [] {});
    try {
        Halide::Module m = p.compile_to_module(p.infer_arguments(), "gpusched_launch_check", target);
        if (lowered) *lowered = m;
    } catch (...) {
        p.clear_custom_lowering_passes();
        throw;
    }
    p.clear_custom_lowering_passes();
    return found;
}

std::string first_failure(const KernelAssertion &a, const EstimatedShapes &shapes) {
    const std::vector<std::string> &outputs = shapes.outputs;
    const std::string what =
        "kernel of '" + a.kernel + "' " +
        (a.bound.empty() ? "has an assertion"
                         : "checks that the bound of " + a.bound + " covers what is read") +
        ", which the GPU code drops";
    // Enough positions for every block and thread of a realistic kernel at
    // every swept size; past it, the rest of a size is not tried.
    constexpr int64_t kMaxPositions = int64_t{1} << 20;
    std::vector<bool> uses(a.loops.size(), false);
    const std::set<std::string> used = free_variables(a.condition);
    for (size_t i = 0; i < a.loops.size(); i++)
        uses[i] = used.count(a.loops[i].name) > 0;
    for (int64_t delta = 0; delta < kExtentSweep; delta++) {
        VarValues v = shapes.values;
        for (const std::string &o : outputs) {
            for (int d = 0;; d++) {
                const std::string ext = o + ".extent." + std::to_string(d);
                auto it = v.find(ext);
                if (it == v.end()) break;
                it->second += static_cast<double>(delta);
                const std::string mn = o + ".min." + std::to_string(d);
                if (v.count(mn)) v[o + ".max." + std::to_string(d)] = v[mn] + it->second - 1;
            }
        }
        std::vector<int64_t> lo, count;
        for (size_t i = 0; i < a.loops.size(); i++) {
            const GpuLoop &l = a.loops[i];
            auto m = evaluate(l.min, v);
            auto e = evaluate(l.extent, v);
            if (!m || !e) {
                std::ostringstream b;
                b << "[" << l.min << ", extent " << l.extent << "]";
                return what + " (" + l.name + "'s bounds " + b.str() +
                       " cannot be evaluated at the estimated sizes)";
            }
            lo.push_back(*m);
            // Only the loops the condition reads are walked; the others
            // stay at their first position.
            count.push_back(uses[i] ? std::max<int64_t>(*e, 0) : std::min<int64_t>(*e, 1));
        }
        const CompiledExpr check(a.condition, [&](const std::string &name) {
            VarBinding b;
            for (size_t i = 0; i < a.loops.size(); i++)
                if (a.loops[i].name == name) b.slot = static_cast<int>(i);
            if (b.slot < 0) {
                auto it = v.find(name);
                if (it != v.end()) b.constant = it->second;
            }
            return b;
        });
        // Every combination of GPU loop positions (an odometer).
        std::vector<int64_t> pos(lo);
        bool empty = false;
        for (int64_t c : count)
            empty = empty || c == 0;
        for (int64_t n = 0; !empty && n < kMaxPositions; n++) {
            const std::optional<int64_t> holds = check.evaluate(pos.data());
            if (!holds) {
                std::ostringstream c;
                c << a.condition;
                return what + ": it cannot be evaluated at the estimated sizes (" + c.str() + ")";
            }
            if (*holds == 0) {
                std::ostringstream s;
                s << what << ": it fails when " << join_extents(v, outputs) << " at";
                for (size_t i = 0; i < pos.size(); i++)
                    if (uses[i]) s << " " << a.loops[i].name << " = " << pos[i];
                return s.str();
            }
            size_t i = pos.size();
            while (i > 0) {
                --i;
                if (++pos[i] < lo[i] + count[i]) break;
                pos[i] = lo[i];
                if (i == 0) empty = true; // wrapped around: all tried
            }
            if (pos.empty()) break;
        }
    }
    return {};
}

} // namespace gpusched
