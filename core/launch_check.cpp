#include "core/launch_check.h"

#include <cerrno>
#include <map>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "core/halide_compat.h"
#include "core/kernel_assertions.h"
#include "core/let_scope.h"

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// CUDA's block dimension limits (x, y, z) since compute capability 2.0
// (CUDA C Programming Guide, "Technical Specifications per Compute
// Capability"); OpenCL devices report theirs, POCL's CPU device allows as
// many. The per-block total is the profile's max_threads_per_block.
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};

std::string text_of(const Expr &e) {
    std::ostringstream s;
    s << e;
    return s.str();
}

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
class LaunchFinder : public IRVisitor {
public:
    std::vector<KernelLaunch> launches;

protected:
    using IRVisitor::visit;

    void visit(const LetStmt *op) override {
        op->value.accept(this);
        lets.push(op->name, op->value);
        op->body.accept(this);
        lets.pop(op->name);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        lets.push(op->name, op->value);
        op->body.accept(this);
        lets.pop(op->name);
    }
    void visit(const Call *op) override {
        if (is_kernel_launch(op)) {
            KernelLaunch l;
            const Expr name = lets.resolve(op->args[1]);
            if (const StringImm *s = name.as<StringImm>())
                l.kernel = s->value;
            else
                l.kernel = text_of(name);
            for (int d = 0; d < 3; d++) {
                const Expr t = lets.resolve(op->args[5 + d]);
                l.threads_expr[d] = text_of(t);
                if (auto c = const_int(t)) l.threads[d] = *c;
            }
            const Expr smem = lets.resolve(op->args[8]);
            l.shared_mem_expr = text_of(smem);
            if (auto c = const_int(smem)) l.shared_mem_bytes = *c;
            launches.push_back(std::move(l));
        }
        IRVisitor::visit(op);
    }

private:
    LetScope lets;
};

} // namespace

std::vector<KernelLaunch> kernel_launches(const Halide::Module &module) {
    LaunchFinder finder;
    for (const auto &f : module.functions())
        f.body.accept(&finder);
    return std::move(finder.launches);
}

std::vector<std::string> launch_violations(const KernelLaunch &l, const GpuProfile &gpu) {
    static const char *dims = "xyz";
    std::vector<std::string> out;
    const std::string where = "kernel '" + l.kernel + "'";
    int64_t total = 1;
    bool all_constant = true;
    for (int d = 0; d < 3; d++) {
        if (!l.threads[d]) {
            all_constant = false;
            out.push_back(where + " has a thread extent in " + dims[d] + " that is not a constant (" +
                          l.threads_expr[d] + "): Halide would size the block at run time");
            continue;
        }
        total *= *l.threads[d];
        if (*l.threads[d] > kMaxBlockDim[d]) {
            out.push_back(where + " asks for " + std::to_string(*l.threads[d]) + " threads in " + dims[d] +
                          ", over the limit of " + std::to_string(kMaxBlockDim[d]) + " per block dimension");
        }
    }
    if (all_constant && total > gpu.max_threads_per_block) {
        out.push_back(where + " asks for " + std::to_string(total) + " threads per block (" +
                      std::to_string(*l.threads[0]) + " x " + std::to_string(*l.threads[1]) + " x " +
                      std::to_string(*l.threads[2]) + "), over the limit of " +
                      std::to_string(gpu.max_threads_per_block) + " on " + gpu.name);
    }
    if (!l.shared_mem_bytes) {
        out.push_back(where + " has a shared memory size that is not a constant (" + l.shared_mem_expr +
                      "): Halide would size it at run time");
    } else if (*l.shared_mem_bytes > gpu.shared_mem_per_block_bytes) {
        out.push_back(where + " asks for " + std::to_string(*l.shared_mem_bytes) +
                      " bytes of shared memory per block, over the limit of " +
                      std::to_string(gpu.shared_mem_per_block_bytes) + " on " + gpu.name);
    }
    return out;
}

Halide::Target launch_check_target(const Halide::Target &target) {
    if (!target.has_feature(Target::CUDA)) return target;
    Halide::Target t = target;
    t.set_features({Target::CUDA, Target::CUDACapability30, Target::CUDACapability32,
                    Target::CUDACapability35, Target::CUDACapability50, Target::CUDACapability61,
                    Target::CUDACapability70, Target::CUDACapability75, Target::CUDACapability80,
                    Target::CUDACapability86},
                   false);
    return t.with_feature(Target::OpenCL).with_feature(Target::CLDoubles);
}

namespace {

std::string lower_and_check_for(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                const GpuProfile &gpu, const EstimatedShapes &shapes) {
    Halide::Module m("", target);
    const std::vector<KernelAssertion> assertions = kernel_assertions(pipeline, target, &m);
    std::string all;
    for (const KernelLaunch &l : kernel_launches(m)) {
        for (const std::string &v : launch_violations(l, gpu))
            all += (all.empty() ? "" : "; ") + v;
    }
    // Each distinct assertion once (a kernel's unrolled copies repeat them),
    // evaluated where the GPU will not check it.
    std::set<std::string> seen;
    for (const KernelAssertion &a : assertions) {
        std::ostringstream key;
        key << a.kernel << " " << a.condition;
        if (!seen.insert(key.str()).second) continue;
        const std::string failure = first_failure(a, shapes);
        if (!failure.empty()) all += (all.empty() ? "" : "; ") + failure;
    }
    return all;
}

std::string lower_and_check(const Halide::Pipeline &pipeline, const Halide::Target &target,
                            const GpuProfile &gpu, const EstimatedShapes &shapes) {
    const Halide::Target quick = launch_check_target(target);
    if (quick != target) {
        try {
            return lower_and_check_for(pipeline, quick, gpu, shapes);
        } catch (const Halide::Error &) {
            // Something OpenCL C cannot express: lower as the target itself.
        }
    }
    return lower_and_check_for(pipeline, target, gpu, shapes);
}

} // namespace

std::string check_kernel_launches(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                  const GpuProfile &gpu, const EstimatedShapes &shapes) {
    // Lowered in a child process: lowering takes names from Halide's
    // per-process counters, and in this process the generator's own kernels
    // would then be named differently from what the emitted schedule gives
    // when compiled into the generator (`_kernel_f...__1`): the schedule
    // source must reproduce the plugin's build exactly. A lowering error is
    // the generator's to report, with its own message, when it lowers next.
    int fds[2];
    if (pipe(fds) != 0) return lower_and_check(pipeline, target, gpu, shapes);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return lower_and_check(pipeline, target, gpu, shapes);
    }
    if (pid == 0) {
        close(fds[0]);
        std::string found;
        try {
            found = lower_and_check(pipeline, target, gpu, shapes);
        } catch (...) {
            _exit(3);
        }
        size_t at = 0;
        while (at < found.size()) {
            const ssize_t n = write(fds[1], found.data() + at, found.size() - at);
            if (n <= 0) _exit(4);
            at += static_cast<size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string found;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        found.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
    return found;
}

} // namespace gpusched
