// Non-local means denoising (Buades, Coll and Morel 2005) of a float RGB image. Every pixel
// becomes a weighted average of the pixels in a search window around it, weighted by how similar
// the patch around each candidate is to the patch around the pixel itself:
//   w(p, q) = exp(-|P(p) - P(q)|^2 / (3 * patch_size^2 * sigma^2)),
// where |P(p) - P(q)|^2 sums squared RGB differences over a patch_size x patch_size patch. The
// patch distance for one offset (dx, dy) is a box filter of the per-pixel squared difference,
// computed separably (y then x). A fourth, constant channel accumulates the weights, and the
// output divides by it.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 input, 7x7
// patches, 7x7 search window, sigma about 0.12. Stage Funcs: clamped, d, blur_d_y, blur_d, w,
// non_local_means_sum, nl_means (7), plus the anonymous inline sums.
#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class NlMeans : public Generator<NlMeans> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> patch_size{"patch_size", 7, 1, 15};
    GeneratorParam<int> search_area{"search_area", 7, 1, 15};

    Input<Buffer<float>> input{"input", 3};
    Input<float> sigma{"sigma"};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        const int ph = patch_size / 2, sh = search_area / 2;
        Expr inv_sigma_sq = -1.0f / (sigma * sigma * patch_size * patch_size * 3);

        clamped = BoundaryConditions::repeat_edge(input);

        // Squared RGB difference between p and p + (dx, dy).
        Expr dc0 = clamped(x, y, 0) - clamped(x + dx, y + dy, 0);
        Expr dc1 = clamped(x, y, 1) - clamped(x + dx, y + dy, 1);
        Expr dc2 = clamped(x, y, 2) - clamped(x + dx, y + dy, 2);
        d(x, y, dx, dy) = dc0 * dc0 + dc1 * dc1 + dc2 * dc2;

        // Patch distance: separable box filter of d.
        RDom p(-ph, patch_size, "p");
        blur_d_y(x, y, dx, dy) = sum(d(x, y + p, dx, dy));
        blur_d(x, y, dx, dy) = sum(blur_d_y(x + p, y, dx, dy));

        w(x, y, dx, dy) = fast_exp(blur_d(x, y, dx, dy) * inv_sigma_sq);

        // Weighted sum over the search window; channel 3 sums the weights.
        s = RDom(-sh, search_area, -sh, search_area, "s");
        Expr value = select(c == 3, 1.0f, clamped(x + s.x, y + s.y, clamp(c, 0, 2)));
        nlm_sum(x, y, c) = 0.0f;
        nlm_sum(x, y, c) += w(x, y, s.x, s.y) * value;

        output(x, y, c) = nlm_sum(x, y, c) / nlm_sum(x, y, 3);

        input.dim(2).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        sigma.set_estimate(0.12f);
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("nl_means", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, dx{"dx"}, dy{"dy"};
    Func clamped{"clamped"}, d{"d"}, blur_d_y{"blur_d_y"}, blur_d{"blur_d"}, w{"w"},
        nlm_sum{"non_local_means_sum"};
    RDom s;

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            // d and w are pointwise: inline, as in the naive schedule.
            for (Func f : {blur_d_y, blur_d, nlm_sum})
                f.compute_root();
            return;
        case ScheduleKind::Naive:
            // d and w are pointwise maps of their single consumer: inlined, the rest at root.
            for (Func f : {blur_d_y, blur_d, nlm_sum})
                gpusched_apps::naive_gpu(f);
            gpusched_apps::naive_gpu_update(nlm_sum.update(), {x, y, c}, {s.x, s.y});
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        // One 16x8 output tile per block. Its patch distances need blur_d_y over (16+6) x 8
        // pixels for all 49 offsets: 22*8*49 floats = 34.5 KB of shared memory (< 48 KB), computed
        // once per block by 22x8 threads; blur_d (7 adds) and the weights are inlined where used.
        out.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        blur_d_y.compute_at(out, xo).store_in(MemoryType::GPUShared).reorder(dx, dy, x, y).gpu_threads(x, y);
        // The 4-channel weighted sum lives in registers per thread, channels unrolled so the
        // weight is computed once per offset and used four times.
        nlm_sum.compute_at(out, xi).bound(c, 0, 4).reorder(c, x, y).unroll(c);
        nlm_sum.update().reorder(c, s.x, s.y, x, y).unroll(c);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(NlMeans, nl_means)
