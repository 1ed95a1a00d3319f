#include "core/launch_check.h"

#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/halide_compat.h"
#include "core/kernel_assertions.h"

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// CUDA's block dimension limits (x, y, z) since compute capability 2.0
// (CUDA C Programming Guide, "Technical Specifications per Compute
// Capability"); OpenCL devices report theirs, POCL's CPU device allows as
// many. The per-block total is the profile's max_threads_per_block.
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};

// Thrown by the pass where lower_kernels has what it lowered for.
struct LoweringStopped {};

// The custom lowering pass left on a pipeline: the last before the GPU
// offload, it reads the statement and returns it unchanged.
class LaunchCheckPass : public IRMutator {
public:
    struct Check {
        GpuProfile gpu;
        EstimatedShapes shapes;
    };
    std::optional<Check> check;        // the plugin's check; none: the pass does nothing
    LoweredKernels *capture = nullptr; // lower_kernels: the kernels go here and the lowering stops

    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override {
        if (capture) {
            *capture = lowered_kernels(s);
            throw LoweringStopped{};
        }
        if (check) {
            const std::string violations = kernel_violations(lowered_kernels(s), check->gpu, check->shapes);
            // The search's footprints decided these sizes; Halide's bounds
            // inference decides the launch. Never hand over one a GPU refuses.
            if (!violations.empty())
                halide_user_error("gpusched: launch check failed (a search bug): " + violations);
        }
        return s;
    }
};

LaunchCheckPass *installed_pass(const Halide::Pipeline &pipeline) {
    Halide::Pipeline p = pipeline; // a handle: the same contents
    for (const CustomLoweringPass &c : p.custom_lowering_passes())
        if (auto *pass = dynamic_cast<LaunchCheckPass *>(c.pass)) return pass;
    return nullptr;
}

// The pipeline's pass, installed where it has none; either way the
// pipeline's cached module is dropped, so its next compile lowers (and
// runs the pass) again.
LaunchCheckPass &pass_on(const Halide::Pipeline &pipeline) {
    Halide::Pipeline p = pipeline;
    if (LaunchCheckPass *pass = installed_pass(pipeline)) {
        p.invalidate_cache();
        return *pass;
    }
    auto *pass = new LaunchCheckPass;
    p.add_custom_lowering_pass(pass, [pass] { delete pass; });
    return *pass;
}

} // namespace

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

std::string kernel_violations(const LoweredKernels &kernels, const GpuProfile &gpu,
                              const EstimatedShapes &shapes) {
    std::string all;
    auto add = [&](const std::string &v) { all += (all.empty() ? "" : "; ") + v; };
    for (const KernelLaunch &l : kernels.launches)
        for (const std::string &v : launch_violations(l, gpu))
            add(v);
    // Each distinct assertion once (a kernel's unrolled copies repeat them),
    // evaluated where the GPU will not check it.
    std::set<std::string> seen;
    for (const KernelAssertion &a : kernels.assertions) {
        std::ostringstream key;
        key << a.kernel << " " << a.condition;
        if (!seen.insert(key.str()).second) continue;
        const std::string failure = first_failure(a, shapes);
        if (!failure.empty()) add(failure);
    }
    return all;
}

void check_launches_when_lowered(const Halide::Pipeline &pipeline, const GpuProfile &gpu,
                                 const EstimatedShapes &shapes) {
    pass_on(pipeline).check = LaunchCheckPass::Check{gpu, shapes};
}

void no_launch_check(const Halide::Pipeline &pipeline) {
    if (LaunchCheckPass *pass = installed_pass(pipeline)) pass->check.reset();
}

LoweredKernels lower_kernels(const Halide::Pipeline &pipeline, const Halide::Target &target) {
    LaunchCheckPass &pass = pass_on(pipeline);
    LoweredKernels out;
    pass.capture = &out;
    // However the lowering ends, later ones are the pipeline's own again.
    struct Release {
        LaunchCheckPass &pass;
        ~Release() { pass.capture = nullptr; }
    } release{pass};
    Halide::Pipeline p = pipeline;
    try {
        p.compile_to_module(p.infer_arguments(), "gpusched_lowered_kernels", target);
    } catch (const LoweringStopped &) {
        return out;
    }
    throw std::logic_error("gpusched: a lowering ran no custom lowering pass");
}

std::string check_kernel_launches(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                  const GpuProfile &gpu, const EstimatedShapes &shapes) {
    return kernel_violations(lower_kernels(pipeline, target), gpu, shapes);
}

} // namespace gpusched
