// Argmax pool: 2x2 average pooling over (x, y), then the index of the
// largest channel at every pooled pixel (a classifier's or a segmentation
// head's final argmax after a pooling layer). A reduction over 256 channels
// whose output, one int32 per pooled pixel (112 x 112 = 12,544 points), is
// too small to fill a GPU with one thread per point: issue 27's shape.
//
// For an input of W x H x C (x, y, channel), the output is W/2 x H/2 int32:
//   avg(x, y, c)  = (in(2x, 2y, c) + in(2x+1, 2y, c) + in(2x, 2y+1, c)
//                    + in(2x+1, 2y+1, c)) / 4;
//   output(x, y)  = the channel c in [0, C) (relative to the input's min)
//                   with the largest avg(x, y, c), the first (smallest c)
//                   on ties.
// NaN inputs are not given any particular treatment.
// Stages: the input wrapper, avg (pure), best (a Tuple Func (value, channel):
// pure definition = channel 0, one update over the channels) and output
// (3 Funcs besides the input, one update). Size: 224 x 224 x 256 float input.
// See docs/apps/argmax_pool.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (every Func
// its own 16x16-tiled kernel, the 256 channels serial in the thread) or
// "manual" (the expert schedule below).

#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <string>

namespace {

using namespace Halide;

class ArgmaxPool : public Generator<ArgmaxPool> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<int32_t, 2>> output{"output"};

    void generate() {
        const Expr x0 = input.dim(0).min(), y0 = input.dim(1).min(), c0 = input.dim(2).min();
        rc = RDom(0, input.dim(2).extent(), "rc");

        const Expr ix = x0 + 2 * x, iy = y0 + 2 * y;
        avg(x, y, c) =
            (input(ix, iy, c) + input(ix + 1, iy, c) + input(ix, iy + 1, c) + input(ix + 1, iy + 1, c)) *
            0.25f;

        // The update visits the channels from the last to the first, and a
        // channel replaces the running best unless its average is smaller:
        // on a tie the later visit, the smaller channel, wins. This is how
        // Halide's associativity table spells an argmax (ties to the newer
        // element), so rfactor can split the channels; the mirrored order
        // turns its ties-to-newer into the first-wins of torch.argmax. The
        // pure definition is channel 0, which the update visits last anyway.
        best(x, y) = Tuple(avg(x, y, c0), 0);
        const Expr k = input.dim(2).extent() - 1 - rc;
        const Expr a = avg(x, y, c0 + k);
        const Expr old_v = best(x, y)[0], old_i = best(x, y)[1];
        best(x, y) = Tuple(max(old_v, a), select(a < old_v, old_i, k));

        output(x, y) = best(x, y)[1];

        input.set_estimates({{0, 224}, {0, 224}, {0, 256}});
        output.set_estimates({{0, 112}, {0, 112}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("argmax_pool", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    Var x{"x"}, y{"y"}, c{"c"};
    RDom rc;
    Func avg{"avg"}, best{"best"};

    // The floor: avg, best's pure definition, its update and the output each
    // their own kernel of 16x16 threads over (x, y); avg's channels and the
    // update's 256 channels serial in the thread.
    void schedule_naive() {
        gpusched_apps::naive_gpu(avg);
        gpusched_apps::naive_gpu(best);
        gpusched_apps::naive_gpu_update(best.update(), {x, y}, {rc});
        gpusched_apps::naive_gpu(output);
    }

    // Two kernels. The channels are split into chunks of 32 contiguous
    // channels, and rfactor makes each chunk's argmax its own point of a
    // partial (x, y, chunk): 112 x 112 x 8 = 100,352 points at the ML size,
    // eight times the output, one thread each (32 x 8 threads over (x, y),
    // blocks over (x, y, chunk)), the chunk's 32 channels serial and unrolled
    // by 4 so the 16 loads of four channels are issued together (avg
    // inlined; a warp's two loads per input row cover 64 contiguous floats).
    // The partial is computed per thread in registers and stored once through
    // a wrapper. The second kernel, one thread per output pixel (32 x 8),
    // merges the chunks in order (chunk 0 holds the highest channels, since
    // the update visits them first), ties to the later chunk: the smallest
    // channel still wins.
    void schedule_manual() {
        constexpr int kChunk = 32, kUnroll = 4;
        RVar rco{"rco"}, rci{"rci"}, rcii{"rcii"};
        Var u{"u"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};

        Func partial = best.update().split(rc, rco, rci, kChunk, TailStrategy::GuardWithIf).rfactor(rco, u);
        Func partial_out = partial.in();
        partial_out.compute_root()
            .split(x, xo, xi, 32, TailStrategy::GuardWithIf)
            .split(y, yo, yi, 8, TailStrategy::GuardWithIf)
            .reorder(xi, yi, xo, yo, u)
            .gpu_blocks(xo, yo, u)
            .gpu_threads(xi, yi);
        partial.compute_at(partial_out, xi);
        partial.update().split(rci, rci, rcii, kUnroll, TailStrategy::GuardWithIf).unroll(rcii);

        output.compute_root()
            .split(x, xo, xi, 32, TailStrategy::GuardWithIf)
            .split(y, yo, yi, 8, TailStrategy::GuardWithIf)
            .reorder(xi, yi, xo, yo)
            .gpu_blocks(xo, yo)
            .gpu_threads(xi, yi);
        best.compute_at(output, xi);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(ArgmaxPool, argmax_pool)
