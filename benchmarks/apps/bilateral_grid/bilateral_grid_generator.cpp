// Bilateral grid (Chen, Paris and Durand 2007): an edge-aware blur of a grayscale float image.
// The image is splatted into a coarse 3-D grid (x/s_sigma, y/s_sigma, intensity/r_sigma) holding
// (sum of values, count) per cell, the grid is blurred with a [1 4 6 4 1] kernel along z, x and
// y, and every pixel slices the blurred grid back out by trilinear interpolation at its own
// (x, y, intensity) position; value / count is the result. Pixels across a strong edge land in
// different intensity bins, so they do not blur into each other.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560 input,
// s_sigma = 8, r_sigma = 0.1. Stage Funcs: clamped, histogram, blurz, blurx, blury,
// interpolated, bilateral_grid (7).
#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class BilateralGrid : public Generator<BilateralGrid> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    // Spatial cell size in pixels and intensity bin width; both shape the grid's bounds, so they
    // are compile-time parameters (the slice's z index must be bounded for bounds inference).
    GeneratorParam<int> s_sigma{"s_sigma", 8};
    GeneratorParam<float> r_sigma{"r_sigma", 0.1f};

    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        const int s = s_sigma;
        const float inv_r = 1.0f / (float)r_sigma;
        const int z_max = (int)inv_r; // intensities in [0, 1] map to bins 0 .. z_max

        clamped = BoundaryConditions::repeat_edge(input);

        // Splat: cell (x, y) gathers the s x s pixels centred on (x*s, y*s).
        RDom r(0, s, 0, s, "r");
        Expr val = clamp(clamped(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
        Expr zi = clamp(cast<int>(val * inv_r + 0.5f), 0, z_max);
        histogram(x, y, z, c) = 0.0f;
        histogram(x, y, zi, c) += select(c == 0, val, 1.0f);
        splat_r = r;

        // Separable [1 4 6 4 1] blur of the grid, z first (the cheapest to reuse).
        blurz(x, y, z, c) = histogram(x, y, z - 2, c) + 4 * histogram(x, y, z - 1, c) +
                            6 * histogram(x, y, z, c) + 4 * histogram(x, y, z + 1, c) +
                            histogram(x, y, z + 2, c);
        blurx(x, y, z, c) = blurz(x - 2, y, z, c) + 4 * blurz(x - 1, y, z, c) + 6 * blurz(x, y, z, c) +
                            4 * blurz(x + 1, y, z, c) + blurz(x + 2, y, z, c);
        blury(x, y, z, c) = blurx(x, y - 2, z, c) + 4 * blurx(x, y - 1, z, c) + 6 * blurx(x, y, z, c) +
                            4 * blurx(x, y + 1, z, c) + blurx(x, y + 2, z, c);

        // Slice: trilinear interpolation at the pixel's own grid position.
        Expr v = clamp(clamped(x, y), 0.0f, 1.0f);
        Expr zv = v * inv_r;
        Expr zc = clamp(cast<int>(zv), 0, z_max);
        Expr zf = zv - zc;
        Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
        Expr xc = x / s, yc = y / s;
        auto at = [&](Expr dx, Expr dy, Expr dz) { return blury(xc + dx, yc + dy, zc + dz, c); };
        interpolated(x, y, c) =
            lerp(lerp(lerp(at(0, 0, 0), at(1, 0, 0), xf), lerp(at(0, 1, 0), at(1, 1, 0), xf), yf),
                 lerp(lerp(at(0, 0, 1), at(1, 0, 1), xf), lerp(at(0, 1, 1), at(1, 1, 1), xf), yf), zf);

        output(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);

        input.set_estimates({{0, 1536}, {0, 2560}});
        output.set_estimates({{0, 1536}, {0, 2560}});

        apply_schedule(gpusched_apps::parse_schedule("bilateral_grid", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
    Func clamped{"clamped"}, histogram{"histogram"}, blurz{"blurz"}, blurx{"blurx"}, blury{"blury"},
        interpolated{"interpolated"};
    RDom splat_r;

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (Func f : {histogram, blurz, blurx, blury, interpolated})
                f.compute_root();
            return;
        case ScheduleKind::Naive:
            for (Func f : {histogram, blurz, blurx, blury, interpolated})
                gpusched_apps::naive_gpu(f);
            // The splat owns its (x, y) cell, so tiling over cells is race-free.
            gpusched_apps::naive_gpu_update(histogram.update(), {x, y, c}, {splat_r.x, splat_r.y});
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        Var xo("xo"), yo("yo"), zo("zo"), xi("xi"), yi("yi"), zi("zi");
        // Splat: one thread per grid cell, both channels accumulated together (c unrolled) so the
        // 64 input reads per cell are shared by the value and the count.
        histogram.compute_root().reorder(c, z, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        histogram.update()
            .reorder(c, splat_r.x, splat_r.y, x, y)
            .unroll(c)
            .gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        // The grid is small (192x320x11x2 at the paper's size): z blur in its own kernel over all
        // three grid dimensions, c unrolled.
        blurz.compute_root()
            .reorder(c, x, y, z)
            .unroll(c)
            .gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 16, 4, 4);
        // y blur per 16x16x1 block; the x blur it needs (16 x 20 x 1 x 2 floats = 2.5 KB) is staged
        // in shared memory at block level, so each blurz value is read once per block.
        blury.compute_root()
            .reorder(c, x, y, z)
            .unroll(c)
            .gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 16, 16, 1);
        blurx.compute_at(blury, xo)
            .store_in(MemoryType::GPUShared)
            .reorder(c, x, y, z)
            .unroll(c)
            .gpu_threads(x, y);
        // Slicing is 16 gathers per pixel; inline it into the output (both channels share the
        // address arithmetic) and use wide 32x8 blocks for coalesced output stores.
        out.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(BilateralGrid, bilateral_grid)
