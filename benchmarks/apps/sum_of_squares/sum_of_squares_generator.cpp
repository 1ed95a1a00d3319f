// Sum of squares: the whole image reduced to one value (an L2 norm's inner
// sum, a loss), the shape of issue 27's first case. A single output point
// with a 4096 x 4096 reduction domain: unsplit, one GPU thread runs all
// 16.7 million iterations.
//
// output() = sum over x, y of input(x, y)^2, in float. Stages: the input
// wrapper and the output (2 Funcs, one update). Size: 4096 x 4096 float.
// See docs/apps/sum_of_squares.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (the
// reduction in one GPU thread: what every Anderson-family scheduler emits)
// or "manual" (the expert schedule below).

#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class SumOfSquares : public Generator<SumOfSquares> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 0>> output{"output"};

    void generate() {
        r = RDom(0, input.dim(0).extent(), 0, input.dim(1).extent(), "r");
        const Expr v = input(r.x + input.dim(0).min(), r.y + input.dim(1).min());
        output() = 0.0f;
        output() += v * v;

        input.set_estimates({{0, 4096}, {0, 4096}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("sum_of_squares", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) {
            output.compute_root().gpu_single_thread();
            output.update().gpu_single_thread();
        }
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    RDom r;

    // Two kernels. The first: 256 x 64 threads; thread (u, v) sums the 1024
    // pixels with x = u mod 256 and y = v mod 64 (coalesced: neighbouring
    // threads read neighbouring columns). The second adds the 16384 partial
    // sums in one thread.
    void schedule_manual() {
        RVar ryo("ryo"), ryi("ryi"), rxo("rxo"), rxi("rxi");
        Var u("u"), v("v"), ut("ut"), ub("ub"), vt("vt"), vb("vb");
        // rfactor copies the update's schedule to the intermediate: split first.
        Func partial = output.update()
                           .split(r.x, rxo, rxi, 256, TailStrategy::GuardWithIf)
                           .split(r.y, ryo, ryi, 64, TailStrategy::GuardWithIf)
                           .rfactor({{rxi, u}, {ryi, v}});
        partial.compute_root().gpu_tile(u, v, ub, vb, ut, vt, 256, 1, TailStrategy::GuardWithIf);
        partial.update().gpu_tile(u, v, ub, vb, ut, vt, 256, 1, TailStrategy::GuardWithIf);
        output.compute_root().gpu_single_thread();
        output.update().gpu_single_thread();
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(SumOfSquares, sum_of_squares)
