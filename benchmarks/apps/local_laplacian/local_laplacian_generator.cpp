// Local Laplacian filter (Paris, Hasinoff and Kautz 2011, in the fast sampled form of Aubry et al.
// 2014): edge-aware detail enhancement of a 16-bit RGB image. The luminance is remapped around
// `levels` sampled intensities g_k (remap(d) = beta*d + alpha*d*exp(-d^2 (levels-1)^2 / 2), which
// boosts details smaller than one intensity step and leaves large edges alone), a Gaussian
// pyramid of each remapped image is built, and the output Laplacian pyramid takes, per pixel and
// level, the Laplacian coefficient of the two remapped images whose g_k bracket the pixel's own
// (pyramid-smoothed) luminance, interpolated linearly. Collapsing that pyramid gives the new
// luminance; colour is carried over by the ratio input / luminance.
//
// With alpha = 0 and beta = 1 the remap is the identity and the pipeline reconstructs its input
// exactly (a Laplacian pyramid collapses to what it was built from) - the tests rely on that.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 uint16 input,
// 8 intensity levels, 8 pyramid levels. Stage Funcs for J pyramid levels: clamped, floating, gray,
// remapped (4); per level below the finest, a 2-Func downsampling for each of the two Gaussian
// pyramids, a 2-Func upsampling plus the difference for the Laplacian pyramid, and a 2-Func
// upsampling plus the sum for the collapse (10 per level); out_l_pyr per level (J); color and
// the output (2): 11J - 4 = 84 for J = 8.
#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <vector>

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class LocalLaplacian : public Generator<LocalLaplacian> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> pyramid_levels{"pyramid_levels", 8, 2, 12};
    GeneratorParam<int> levels{"levels", 8, 2, 64}; // sampled intensities g_k

    Input<Buffer<uint16_t>> input{"input", 3};
    Input<float> alpha{"alpha"}; // detail gain
    Input<float> beta{"beta"};   // large-scale (edge) gain
    Output<Buffer<uint16_t>> output{"output", 3};

    void generate() {
        const int J = pyramid_levels;
        const int K = levels;

        Func clamped = BoundaryConditions::repeat_edge(input);
        floating(x, y, c) = cast<float>(clamped(x, y, c)) / 65535.0f;
        gray(x, y) = 0.299f * floating(x, y, 0) + 0.587f * floating(x, y, 1) + 0.114f * floating(x, y, 2);

        // Level 0 of the remapped pyramids: one image per sampled intensity g_k.
        Expr gk = cast<float>(k) / (K - 1);
        Expr d = gray(x, y) - gk;
        Expr sigma_scale = 0.5f * (K - 1) * (K - 1); // detail scale = one intensity step
        remapped(x, y, k) = gk + beta * d + alpha * d * exp(-d * d * sigma_scale);

        g_pyr.resize(J);
        l_pyr.resize(J);
        in_pyr.resize(J);
        out_l_pyr.resize(J);
        out_g_pyr.resize(J);
        g_pyr[0] = remapped;
        in_pyr[0] = gray;
        for (int j = 1; j < J; j++) {
            g_pyr[j] = downsample(g_pyr[j - 1], "g_pyr_" + std::to_string(j));
            in_pyr[j] = downsample(in_pyr[j - 1], "in_pyr_" + std::to_string(j));
        }
        // Laplacian pyramids: level minus the upsampled next level; the top is the Gaussian top.
        l_pyr[J - 1] = g_pyr[J - 1];
        for (int j = 0; j < J - 1; j++) {
            Func up = upsample(g_pyr[j + 1], "g_up_" + std::to_string(j));
            Func l("l_pyr_" + std::to_string(j));
            l(x, y, k) = g_pyr[j](x, y, k) - up(x, y, k);
            l_pyr[j] = l;
        }
        // Output Laplacian pyramid: interpolate between the two remapped images bracketing the
        // pixel's smoothed luminance at that level.
        for (int j = 0; j < J; j++) {
            Expr level = in_pyr[j](x, y) * (K - 1);
            Expr li = clamp(cast<int>(level), 0, K - 2);
            Expr lf = level - li;
            Func ol("out_l_pyr_" + std::to_string(j));
            ol(x, y) = (1.0f - lf) * l_pyr[j](x, y, li) + lf * l_pyr[j](x, y, li + 1);
            out_l_pyr[j] = ol;
        }
        // Collapse.
        out_g_pyr[J - 1] = out_l_pyr[J - 1];
        for (int j = J - 2; j >= 0; j--) {
            Func up = upsample(out_g_pyr[j + 1], "out_up_" + std::to_string(j));
            Func og("out_g_pyr_" + std::to_string(j));
            og(x, y) = up(x, y) + out_l_pyr[j](x, y);
            out_g_pyr[j] = og;
        }
        // Colour by ratio; the tiny epsilon only guards black pixels.
        const float eps = 1e-6f;
        color(x, y, c) = out_g_pyr[0](x, y) * (floating(x, y, c) + eps) / (gray(x, y) + eps);
        output(x, y, c) = cast<uint16_t>(clamp(color(x, y, c), 0.0f, 1.0f) * 65535.0f + 0.5f);

        // RGB in, RGB out: fixing the channel extent lets schedules unroll over it.
        input.dim(2).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        alpha.set_estimate(1.0f / 7.0f);
        beta.set_estimate(1.0f);
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("local_laplacian", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, k{"k"};
    Func floating{"floating"}, gray{"gray"}, remapped{"remapped"}, color{"color"};
    std::vector<Func> g_pyr, l_pyr, in_pyr, out_l_pyr, out_g_pyr;
    std::vector<Func> down_x, up_x; // the separable halves, for scheduling

    // [1 3 3 1]/8 in x then y, keeping every second sample. Works on 2-D (x, y) and 3-D
    // (x, y, k) Funcs alike.
    Func downsample(Func f, const std::string &name) {
        const std::vector<Var> args = f.args();
        auto call = [&](Expr xx, Expr yy) {
            std::vector<Expr> a = {xx, yy};
            a.insert(a.end(), args.begin() + 2, args.end());
            return a;
        };
        Func dx(name + "_dx"), dy(name);
        dx(args) = (f(call(2 * x - 1, y)) + 3.0f * (f(call(2 * x, y)) + f(call(2 * x + 1, y))) +
                    f(call(2 * x + 2, y))) /
                   8.0f;
        dy(args) = (dx(call(x, 2 * y - 1)) + 3.0f * (dx(call(x, 2 * y)) + dx(call(x, 2 * y + 1))) +
                    dx(call(x, 2 * y + 2))) /
                   8.0f;
        down_x.push_back(dx);
        return dy;
    }

    // Linear 2x upsampling ([1 3]/4 per axis), the adjoint of the downsampling's spacing.
    Func upsample(Func f, const std::string &name) {
        const std::vector<Var> args = f.args();
        auto call = [&](Expr xx, Expr yy) {
            std::vector<Expr> a = {xx, yy};
            a.insert(a.end(), args.begin() + 2, args.end());
            return a;
        };
        Func ux(name + "_ux"), uy(name);
        ux(args) = 0.25f * f(call((x / 2) - 1 + 2 * (x % 2), y)) + 0.75f * f(call(x / 2, y));
        uy(args) = 0.25f * ux(call(x, (y / 2) - 1 + 2 * (y % 2))) + 0.75f * ux(call(x, y / 2));
        up_x.push_back(ux);
        return uy;
    }

    std::vector<Func> stage_funcs() {
        std::vector<Func> fs = {gray, remapped};
        for (size_t j = 1; j < g_pyr.size(); j++)
            fs.push_back(g_pyr[j]);
        for (size_t j = 1; j < in_pyr.size(); j++)
            fs.push_back(in_pyr[j]);
        for (size_t j = 0; j + 1 < l_pyr.size(); j++)
            fs.push_back(l_pyr[j]);
        for (auto &f : out_l_pyr)
            fs.push_back(f);
        for (size_t j = 0; j + 1 < out_g_pyr.size(); j++)
            fs.push_back(out_g_pyr[j]);
        for (auto &f : down_x)
            fs.push_back(f);
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
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        const int J = pyramid_levels;
        const int K = levels;
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        // Big levels get 32x8 blocks (coalesced rows); levels of at most ~100 pixels on a side
        // get 8x8 so that there are still blocks for every SM.
        auto tile = [&](Func f, int j) {
            const int tx = j < 4 ? 32 : 8, ty = 8;
            f.gpu_tile(x, y, xo, yo, xi, yi, tx, ty);
        };
        // Level 0 of the remapped pyramid is pointwise in gray: inline it (and gray is cheap
        // enough to recompute from the input where needed... but it feeds three consumers, so
        // keep it in its own kernel).
        gray.compute_root();
        tile(gray, 0);
        // Each Gaussian level is one kernel: the x-downsampling it reads is staged in shared
        // memory per block (32 x 18 x 8 floats = 18 KB for a 32x8 block), every thread handles
        // all K intensity samples of its pixel (k unrolled), so the 4 y-taps are amortised.
        for (int j = 1; j < J; j++) {
            Func g = g_pyr[j];
            g.compute_root().bound(k, 0, K).reorder(k, x, y).unroll(k);
            tile(g, j);
            down_x[2 * (j - 1)]
                .compute_at(g, xo)
                .store_in(MemoryType::GPUShared)
                .reorder(k, x, y)
                .unroll(k)
                .gpu_threads(x, y);
            Func in = in_pyr[j];
            in.compute_root();
            tile(in, j);
            down_x[2 * (j - 1) + 1].compute_at(in, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        }
        // The output Laplacian coefficients read the remapped pyramid at two data-dependent k:
        // inline l_pyr and the upsampling into them (two taps each) and compute every collapse
        // level as one kernel that also does its out_l_pyr.
        for (int j = 0; j + 1 < J; j++) {
            Func og = out_g_pyr[j];
            og.compute_root();
            tile(og, j);
        }
        // The top of the output pyramid is tiny; its own kernel.
        out_l_pyr[J - 1].compute_root();
        tile(out_l_pyr[J - 1], J - 1);
        // The output: three channels per thread.
        out.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(LocalLaplacian, local_laplacian)
