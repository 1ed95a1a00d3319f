// Lens blur: synthetic shallow depth of field from a rectified stereo pair (8-bit RGB left and
// right views). Depth comes from block matching: a cost volume over `slices` disparities
// (squared RGB difference between left(x, y) and right(x - z, y)) is aggregated over a pyramid of
// scales (box-downsampled `cost_levels` times, then collapsed coarse to fine, each level the
// average of itself and the upsampled coarser aggregate), and each pixel takes the disparity of
// least aggregated cost. The blur radius of a pixel is |disparity - focus_depth| scaled by
// blur_radius_scale and capped at max_radius. Rendering gathers `aperture_samples` points on a
// disc (a Fermat spiral of radius max_radius): a sample at distance rho contributes only when
// its own blur radius reaches rho (scatter-as-gather, so a blurry pixel spreads over sharp
// ones, not the other way round); the pixel itself always contributes, and the sum is
// normalised by an alpha channel of ones. An in-focus scene therefore reproduces the left view.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 views, 32
// disparity slices, 32 aperture samples. Stage Funcs with L = 4 cost levels: the two clamped
// views, left_f, right_f, cost (5), 2 per downsampled level and 2 per collapse step (6 + 6),
// depth, radius, input_with_alpha, blur_sum, lens_blur (5) = 22, plus the anonymous argmin.
#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <cmath>
#include <vector>

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class LensBlur : public Generator<LensBlur> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> slices{"slices", 32, 2, 128};
    GeneratorParam<int> cost_levels{"cost_levels", 4, 1, 8};
    GeneratorParam<int> aperture_samples{"aperture_samples", 32, 1, 256};
    GeneratorParam<int> max_radius{"max_radius", 8, 1, 32};

    Input<Buffer<uint8_t>> left{"left", 3};
    Input<Buffer<uint8_t>> right{"right", 3};
    Input<int> focus_depth{"focus_depth"};
    Input<float> blur_radius_scale{"blur_radius_scale"};
    Output<Buffer<uint8_t>> output{"output", 3};

    void generate() {
        const int Z = slices, L = cost_levels, N = aperture_samples, R = max_radius;

        Func lc = BoundaryConditions::repeat_edge(left);
        Func rc = BoundaryConditions::repeat_edge(right);
        left_f(x, y, c) = cast<float>(lc(x, y, c)) / 255.0f;
        right_f(x, y, c) = cast<float>(rc(x, y, c)) / 255.0f;

        // Matching cost at disparity z: the right view sees a point z pixels to the left.
        Expr d0 = left_f(x, y, 0) - right_f(x - z, y, 0);
        Expr d1 = left_f(x, y, 1) - right_f(x - z, y, 1);
        Expr d2 = left_f(x, y, 2) - right_f(x - z, y, 2);
        cost(x, y, z) = d0 * d0 + d1 * d1 + d2 * d2;

        // Cost aggregation over scales.
        std::vector<Func> down(L), agg(L);
        down[0] = cost;
        for (int l = 1; l < L; l++) {
            Func dx("cost_down_x_" + std::to_string(l)), dy("cost_down_" + std::to_string(l));
            dx(x, y, z) = (down[l - 1](2 * x, y, z) + down[l - 1](2 * x + 1, y, z)) * 0.5f;
            dy(x, y, z) = (dx(x, 2 * y, z) + dx(x, 2 * y + 1, z)) * 0.5f;
            down_x.push_back(dx);
            down[l] = dy;
        }
        agg[L - 1] = down[L - 1];
        for (int l = L - 2; l >= 0; l--) {
            Func ux("cost_up_x_" + std::to_string(l)), a("cost_agg_" + std::to_string(l));
            ux(x, y, z) = agg[l + 1](x / 2, y, z);
            a(x, y, z) = 0.5f * down[l](x, y, z) + 0.5f * ux(x, y / 2, z);
            up_x.push_back(ux);
            agg[l] = a;
        }
        down_levels = down;
        agg_levels = agg;

        RDom rz(0, Z, "rz");
        depth(x, y) = cast<int>(argmin(agg[0](x, y, rz))[0]);

        radius(x, y) = min(cast<float>(abs(depth(x, y) - focus_depth)) * blur_radius_scale, (float)R);

        input_with_alpha(x, y, c) = select(c == 3, 1.0f, left_f(x, y, clamp(c, 0, 2)));

        // Aperture samples on a Fermat spiral (golden angle) filling a disc of radius R; the
        // integer offsets are clamped so bounds inference sees a finite footprint.
        RDom k(0, N, "k");
        aperture = k;
        Expr rho = R * sqrt((cast<float>(k) + 0.5f) / N);
        Expr theta = cast<float>(k) * 2.39996323f;
        Expr ox = clamp(cast<int>(round(rho * cos(theta))), -R, R);
        Expr oy = clamp(cast<int>(round(rho * sin(theta))), -R, R);
        Expr dist = sqrt(cast<float>(ox * ox + oy * oy));
        Expr contributes = radius(x + ox, y + oy) >= dist && dist > 0.0f;
        blur_sum(x, y, c) = input_with_alpha(x, y, c);
        blur_sum(x, y, c) += select(contributes, input_with_alpha(x + ox, y + oy, c), 0.0f);

        output(x, y, c) =
            cast<uint8_t>(clamp(blur_sum(x, y, c) / blur_sum(x, y, 3), 0.0f, 1.0f) * 255.0f + 0.5f);

        left.dim(2).set_bounds(0, 3);
        right.dim(2).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        left.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        right.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        focus_depth.set_estimate(13);
        blur_radius_scale.set_estimate(0.5f);
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("lens_blur", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
    Func left_f{"left_f"}, right_f{"right_f"}, cost{"cost"}, depth{"depth"}, radius{"radius"},
        input_with_alpha{"input_with_alpha"}, blur_sum{"blur_sum"};
    std::vector<Func> down_x, up_x, down_levels, agg_levels;
    RDom aperture;

    std::vector<Func> stage_funcs() {
        std::vector<Func> fs = {left_f, right_f, cost, depth, radius, input_with_alpha, blur_sum};
        for (auto &f : down_x)
            fs.push_back(f);
        for (size_t l = 1; l < down_levels.size(); l++)
            fs.push_back(down_levels[l]);
        for (size_t l = 0; l + 1 < agg_levels.size(); l++)
            fs.push_back(agg_levels[l]);
        for (auto &f : up_x)
            fs.push_back(f);
        return fs;
    }

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (Func f : stage_funcs())
                f.compute_root();
            return;
        case ScheduleKind::Naive:
            for (Func f : stage_funcs())
                gpusched_apps::naive_gpu(f);
            gpusched_apps::naive_gpu_update(blur_sum.update(), {x, y, c}, {aperture.x});
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        Var xo("xo"), yo("yo"), zo("zo"), xi("xi"), yi("yi"), zi("zi");
        // The float conversions are inlined into the cost; the cost volume is built and
        // box-downsampled one scale per kernel, the x-halves of each downsampling in shared
        // memory (32 x 16 x 4 floats = 8 KB per 32x8x4 block), slices as a third block dimension.
        cost.compute_root().gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 32, 8, 1);
        for (size_t l = 1; l < down_levels.size(); l++) {
            down_levels[l].compute_root().gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 32, 8, 4);
            down_x[l - 1].compute_at(down_levels[l], xo).store_in(MemoryType::GPUShared).gpu_threads(x, y, z);
        }
        // The collapse is two loads and a lerp per value: every aggregate level is inlined into
        // the argmin except the finest, which has its own kernel with its upsampling inlined.
        for (size_t l = 0; l + 1 < agg_levels.size(); l++) {
            if (l == 0) {
                agg_levels[l].compute_root().gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 32, 8, 1);
            } else {
                agg_levels[l].compute_root().gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 16, 8, 4);
            }
        }
        // Depth and radius: one thread per pixel running the argmin over all slices.
        depth.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        radius.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        // Rendering: one thread per pixel accumulates all four channels in registers (c
        // unrolled), so each aperture sample's radius test is done once for four values.
        out.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        blur_sum.compute_at(out, xi).bound(c, 0, 4).reorder(c, x, y).unroll(c);
        blur_sum.update().reorder(c, aperture.x, x, y).unroll(c);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(LensBlur, lens_blur)
