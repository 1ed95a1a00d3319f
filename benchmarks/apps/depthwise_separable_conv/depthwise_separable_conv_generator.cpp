// Depthwise-separable convolution (Vanhoucke 2014; the MobileNet block):
// a 3x3 convolution of each input channel on its own, then a 1x1 convolution
// that mixes channels, then ReLU.
//
// depthwise(x, y, ci, n) = sum over (kx, ky) in [-1, 1]^2 of
//     dw_filter(kx + 1, ky + 1, ci) * input(x + kx, y + ky, ci, n)
// with zero padding ("same" size), then
// output(x, y, co, n) = max(0, bias(co) + sum over ci of pw_filter(ci, co) * depthwise(x, y, ci, n)).
// Tensors are NCHW-style: x innermost. Stages: padded input, depthwise
// (pure + 1 update), pointwise (pure + 1 update), output (ReLU) = 4 Funcs.
// Sizes (a MobileNet-like layer): batch 4, 32 input channels, 16 output
// channels, 112x112. See docs/apps/depthwise_separable_conv.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class DepthwiseSeparableConv : public Generator<DepthwiseSeparableConv> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 4>> input{"input"};         // (x, y, ci, n)
    Input<Buffer<float, 3>> dw_filter{"dw_filter"}; // (kx, ky, ci)
    Input<Buffer<float, 2>> pw_filter{"pw_filter"}; // (ci, co)
    Input<Buffer<float, 1>> bias{"bias"};           // (co)
    Output<Buffer<float, 4>> output{"output"};      // (x, y, co, n)

    void generate() {
        padded = BoundaryConditions::constant_exterior(input, 0.0f);

        rd = RDom(0, 3, 0, 3, "rd");
        depthwise(x, y, c, n) = 0.0f;
        depthwise(x, y, c, n) += dw_filter(rd.x, rd.y, c) * padded(x + rd.x - 1, y + rd.y - 1, c, n);

        rc = RDom(0, pw_filter.dim(0).extent(), "rc");
        pointwise(x, y, c, n) = bias(c);
        pointwise(x, y, c, n) += pw_filter(rc, c) * depthwise(x, y, rc, n);

        output(x, y, c, n) = max(0.0f, pointwise(x, y, c, n));

        // A MobileNet-like layer: N = 4, CI = 32, CO = 16, 112x112.
        constexpr int kW = 112, kH = 112, kCI = 32, kCO = 16, kN = 4;
        input.set_estimates({{0, kW}, {0, kH}, {0, kCI}, {0, kN}});
        dw_filter.set_estimates({{0, 3}, {0, 3}, {0, kCI}});
        pw_filter.set_estimates({{0, kCI}, {0, kCO}});
        bias.set_estimates({{0, kCO}});
        output.set_estimates({{0, kW}, {0, kH}, {0, kCO}, {0, kN}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    RDom rd, rc;
    Func padded{"padded"}, depthwise{"depthwise"}, pointwise{"pointwise"};

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule(
            "depthwise_separable_conv", schedule, get_target(), GPUSCHED_GENERATOR_AUTOSCHEDULED(),
            gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: depthwise, pointwise and the ReLU each their own kernel(s),
    // 16x16 threads over (x, y); the padding is inlined.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        for (Func f : {depthwise, pointwise}) {
            f.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
            f.update().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        }
        output.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
    }

    // One fused kernel. A block owns a 32x4 pixel tile of one image and all
    // output channels. The depthwise result for the tile and all input
    // channels (32 x 4 x CI floats: 16 KB at CI = 32; the 48 KB per-block
    // limit allows CI <= 96) is computed once into shared memory, with the
    // 3x3 taps unrolled, and the pointwise 1x1 conv reads it from there:
    // each thread computes 4 output channels of one pixel in registers
    // (unrolled), so each shared load feeds 4 FMAs; the channel reduction is
    // split by 4 and unrolled. ReLU is applied as the result is written.
    // 128 threads per block, 32 along x for coalescing.
    void schedule_manual() {
        Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, co{"co"}, ci{"ci"};
        RVar rco{"rco"}, rci{"rci"};
        output.compute_root()
            .tile(x, y, xo, yo, xi, yi, 32, 4)
            .split(c, co, ci, 4, TailStrategy::GuardWithIf)
            .reorder(ci, xi, yi, co, xo, yo, n)
            .gpu_blocks(xo, yo, n)
            .gpu_threads(xi, yi)
            .unroll(ci);
        pointwise.compute_at(output, xi)
            .unroll(c)
            .update()
            .split(rc, rco, rci, 4, TailStrategy::GuardWithIf)
            .reorder(c, rci, rco)
            .unroll(c)
            .unroll(rci);
        depthwise.compute_at(output, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        depthwise.update().reorder(rd.x, rd.y, x, y, c).gpu_threads(x, y).unroll(rd.x).unroll(rd.y);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(DepthwiseSeparableConv, depthwise_separable_conv)
