// Conv layer: one convolutional neural-network layer with ReLU activation.
//
// output(x, y, co, n) = max(0, bias(co) + sum over (kx, ky, ci) of
//     filter(kx, ky, ci, co) * input(x + kx, y + ky, ci, n))
// with a 3x3 filter and no padding, so the input is 2 pixels wider and taller
// than the output. Tensors are NCHW-style: x (width) is the innermost,
// contiguous dimension, then y, channel, batch. Stages: conv (pure + 1
// update), relu = 2 Funcs. Sizes from the paper's suite: batch 5, 128 input
// and output channels, 100x80 output. See docs/apps/conv_layer.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class ConvLayer : public Generator<ConvLayer> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 4>> input{"input"};   // (x, y, ci, n)
    Input<Buffer<float, 4>> filter{"filter"}; // (kx, ky, ci, co)
    Input<Buffer<float, 1>> bias{"bias"};     // (co)
    Output<Buffer<float, 4>> relu{"relu"};    // (x, y, co, n)

    void generate() {
        // Channel count comes from the filter so the reduction is exact.
        r = RDom(0, 3, 0, 3, 0, filter.dim(2).extent(), "r");

        conv(x, y, co, n) = bias(co);
        conv(x, y, co, n) += filter(r.x, r.y, r.z, co) * input(x + r.x, y + r.y, r.z, n);
        relu(x, y, co, n) = max(0.0f, conv(x, y, co, n));

        // Paper suite size: N = 5, CI = CO = 128, 100x80 output.
        constexpr int kW = 100, kH = 80, kCI = 128, kCO = 128, kN = 5;
        input.set_estimates({{0, kW + 2}, {0, kH + 2}, {0, kCI}, {0, kN}});
        filter.set_estimates({{0, 3}, {0, 3}, {0, kCI}, {0, kCO}});
        bias.set_estimates({{0, kCO}});
        relu.set_estimates({{0, kW}, {0, kH}, {0, kCO}, {0, kN}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, co{"co"}, n{"n"};
    RDom r;
    Func conv{"conv"};

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("conv_layer", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: conv and relu each their own kernel, 16x16 threads over (x, y),
    // channels and batch as serial loops around the launches' grid (they are
    // outer dimensions), the whole reduction serial per thread.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        conv.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        conv.update().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        relu.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
    }

    // Register-tiled direct convolution with the input staged in shared
    // memory, one kernel. A block covers 16 x-pixels x 64 output channels of
    // one row of one image, with 4 x 16 = 64 threads; each thread owns a
    // contiguous 4 (x) x 4 (co) tile of accumulators, computed at the thread
    // level so they live in registers (x vectorized, co unrolled).
    // The block first stages its whole input window, 18 x 3 rows x CI
    // channels (27 KB at CI = 128; the 48 KB per-block limit allows
    // CI <= 227), in shared memory with all 64 threads; every thread then
    // runs the full channel reduction from there. The 3x3 taps are unrolled:
    // per input channel a thread reads 18 input values from shared memory
    // and 36 filter values through L1 and issues 144 FMAs. The channel loop
    // is split by 4 and unrolled for instruction-level parallelism. ReLU is
    // applied as the tile is written. Output width must be at least 16 and
    // channels at least 64 (the tiles shift inwards at the edges).
    //
    // Not done: chunking the channel reduction at block level to also stage
    // the filter. That needs the accumulators allocated at block level,
    // which Halide 14 keeps in registers only when striped across warp
    // lanes (gpu_lanes + warp shuffles, CUDA only); with gpu_threads they
    // became a per-thread copy of the block's tile in local memory.
    void schedule_manual() {
        Var xo{"xo"}, xi{"xi"}, xt{"xt"}, xu{"xu"}, coo{"coo"}, coi{"coi"}, cot{"cot"}, cou{"cou"}, t{"t"};
        RVar rzo{"rzo"}, rzi{"rzi"};
        relu.compute_root()
            .split(x, xo, xi, 16)
            .split(co, coo, coi, 64)
            .split(xi, xt, xu, 4)
            .split(coi, cot, cou, 4)
            .reorder(xu, cou, xt, cot, xo, coo, y, n)
            .fuse(y, n, t)
            .gpu_blocks(xo, coo, t)
            .gpu_threads(xt, cot)
            .vectorize(xu)
            .unroll(cou);

        conv.compute_at(relu, xt).vectorize(x).unroll(co);
        conv.update()
            .split(r.z, rzo, rzi, 4, TailStrategy::GuardWithIf)
            .reorder(x, co, r.x, r.y, rzi, rzo)
            .vectorize(x)
            .unroll(co)
            .unroll(r.x)
            .unroll(r.y)
            .unroll(rzi);

        // The staging loop nest uses the same 4 x 16 threads: thread.x walks
        // channels, thread.y the 54 (x, y) positions of the window.
        Func in_s = input.in();
        Var xy{"xy"}, xyo{"xyo"}, xyi{"xyi"}, cio{"cio"}, cii{"cii"};
        in_s.compute_at(relu, xo)
            .store_in(MemoryType::GPUShared)
            .fuse(_0, _1, xy)
            .split(xy, xyo, xyi, 16, TailStrategy::GuardWithIf)
            .split(_2, cio, cii, 4, TailStrategy::GuardWithIf)
            .reorder(cii, xyi, xyo, cio)
            .gpu_threads(cii, xyi);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(ConvLayer, conv_layer)
