// Unsharp mask: sharpens a colour image by boosting its luminance detail.
//
// gray = Rec.601 luminance of the input; blur = separable Gaussian (sigma 1.5,
// 7 taps, vertical pass then horizontal pass) of gray; sharpen = 2 * gray -
// blur; ratio = sharpen / gray; output = input * ratio, per channel. Scaling
// all three channels by the luminance ratio sharpens without shifting hue.
// Edges repeat the border pixel. Stages: input clamp, gray, blur_y, blur_x,
// sharpen, ratio, output (7 Funcs). Sizes from the paper's suite: 1536x2560
// RGB float. See docs/apps/unsharp_mask.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <cmath>
#include <string>
#include <vector>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

// Gaussian kernel, sigma 1.5, radius 3, normalised to sum 1. The test's
// reference computes the same weights the same way.
std::vector<float> gaussian_weights() {
    constexpr int kRadius = 3;
    constexpr float kSigma = 1.5f;
    std::vector<float> w(2 * kRadius + 1);
    float sum = 0.0f;
    for (int i = -kRadius; i <= kRadius; i++) {
        w[i + kRadius] = std::exp(-(i * i) / (2.0f * kSigma * kSigma));
        sum += w[i + kRadius];
    }
    for (float &v : w) {
        v /= sum;
    }
    return w;
}

class UnsharpMask : public Generator<UnsharpMask> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        const std::vector<float> w = gaussian_weights();
        const int radius = (int)w.size() / 2;

        clamped = BoundaryConditions::repeat_edge(input);

        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);

        Expr by = 0.0f;
        for (int i = -radius; i <= radius; i++) {
            by += w[i + radius] * gray(x, y + i);
        }
        blur_y(x, y) = by;

        Expr bx = 0.0f;
        for (int i = -radius; i <= radius; i++) {
            bx += w[i + radius] * blur_y(x + i, y);
        }
        blur_x(x, y) = bx;

        sharpen(x, y) = 2.0f * gray(x, y) - blur_x(x, y);
        // Black pixels stay black instead of dividing by zero.
        ratio(x, y) = sharpen(x, y) / max(gray(x, y), 1e-6f);
        output(x, y, c) = ratio(x, y) * clamped(x, y, c);

        // Paper suite size: 1536x2560, RGB.
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule();
    }

private:
    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("unsharp_mask", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    Var x{"x"}, y{"y"}, c{"c"};
    Func clamped{"clamped"}, gray{"gray"}, blur_y{"blur_y"}, blur_x{"blur_x"};
    Func sharpen{"sharpen"}, ratio{"ratio"};

    // Floor: each stencil stage its own kernel; the pointwise sharpen/ratio
    // are inlined into the output.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        for (Func f : {gray, blur_y, blur_x}) {
            f.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        }
        output.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                        TailStrategy::GuardWithIf);
    }

    // One kernel. Each 32x16 block stages gray (tile + 3-pixel halo) and the
    // vertical blur in shared memory, so every input pixel is read from DRAM
    // about once; the horizontal blur, sharpen and ratio are inlined. Each
    // thread produces the three channels of one pixel, unrolled, so the
    // ratio is computed once per pixel. Threads are 32 wide for coalescing.
    // Shared memory: (38 x 22 + 38 x 16) floats = 5.8 KB; threads <= 38 x 22.
    void schedule_manual() {
        Var xo, yo, xi, yi;
        output.compute_root()
            .bound(c, 0, 3)
            .reorder(c, x, y)
            .gpu_tile(x, y, xo, yo, xi, yi, 32, 16)
            .unroll(c);
        blur_y.compute_at(output, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        gray.compute_at(output, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(UnsharpMask, unsharp_mask)
