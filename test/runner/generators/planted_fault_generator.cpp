// A pipeline whose GPU build carries a planted fault, so the runner's tests
// have real failures to record and survive. The fault is only in builds for
// a GPU target (CUDA or OpenCL): the CPU reference stays correct, as a user's
// pipeline does when only its GPU schedule is broken.
//
// fault=none   correct everywhere
// fault=crash  the kernel reads 8 GB before the input, which Halide was
//              promised (unsafe_promise_clamped) stays in bounds: SIGSEGV on
//              POCL, an illegal address on a GPU
// fault=hang   a reduction of 2^30 steps per pixel that never contributes
//              (the input is never above 1e30): far past any timeout
// fault=wrong  the GPU build adds 0.5 to every value
// fault=slow   the autoscheduled GPU build runs a reduction of 2^14 steps per
//              pixel that never contributes; the naive schedule's build does
//              not: the naive baseline is faster than every sample

#include "Halide.h"

namespace {

using namespace Halide;

class PlantedFault : public Generator<PlantedFault> {
public:
    GeneratorParam<std::string> fault{"fault", "none"};
    GeneratorParam<std::string> schedule{"schedule", "none"};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        const std::string f = fault;
        const bool gpu = get_target().has_gpu_feature();
        Func stage("stage");
        if (gpu && f == "crash") {
            Expr far = unsafe_promise_clamped(x - 2000000000, 0, 63);
            stage(x, y) = input(far, y) * 2.f + 1.f;
        } else {
            stage(x, y) = input(x, y) * 2.f + 1.f;
        }
        RDom r(0, 1 << 30);
        if (gpu && f == "hang") stage(x, y) += select(input(x, y) > 1e30f, cast<float>(r.x), 0.f);
        RDom slow(0, 1 << 14);
        if (gpu && f == "slow" && std::string(schedule) != "naive")
            stage(x, y) += select(input(x, y) > 1e30f, cast<float>(slow.x), 0.f);
        output(x, y) = (gpu && f == "wrong") ? stage(x, y) + 0.5f : stage(x, y);
        input.set_estimates({{0, 64}, {0, 32}});
        output.set_estimates({{0, 64}, {0, 32}});
        if (std::string(schedule) == "naive") {
            Var xo, yo, xi, yi;
            stage.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
            if (gpu && f == "hang") stage.update().gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
            output.gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(PlantedFault, planted_fault)
