// Max filter: every output pixel is the maximum of the (edge-clamped) input over a disc of
// radius `radius` around it, per channel. Computed the way a fast implementation would:
// vertical running maxima over power-of-two heights (level l = max over [y, y + 2^l)), built by
// doubling; for each column offset t = |dx| the disc's column has half-height
// h(t) = floor(sqrt(r^2 - t^2)), and its vertical max over [y - h, y + h] is the max of two
// overlapping power-of-two windows; the output takes the maximum over the 2r+1 columns.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 float input,
// radius 26. Stage Funcs: clamped, vert_log_1 .. vert_log_5, vert, max_filter (8), plus the
// anonymous inline maximum.
#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <vector>

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class MaxFilter : public Generator<MaxFilter> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> radius{"radius", 26, 1, 128};

    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        const int r = radius;
        // Longest column is 2r+1 pixels; levels up to floor(log2(2r+1)).
        int levels = 1;
        while ((1 << levels) <= 2 * r + 1)
            levels++;

        Func clamped = BoundaryConditions::repeat_edge(input);
        vert_log.clear();
        vert_log.push_back(clamped);
        for (int l = 1; l < levels; l++) {
            Func f("vert_log_" + std::to_string(l));
            f(x, y, c) = max(vert_log[l - 1](x, y, c), vert_log[l - 1](x, y + (1 << (l - 1)), c));
            vert_log.push_back(f);
        }

        // vert(x, y, c, t): max of column x over [y - h(t), y + h(t)]. The level depends on t only,
        // so a schedule that unrolls t makes the select below collapse to a single level.
        Expr h = clamp(cast<int>(floor(sqrt(cast<float>(r * r - t * t)))), 0, r);
        Expr len = 2 * h + 1;
        // Largest level l with 2^l <= len, by counting (exact, unlike a float log2).
        Expr lvl = 0;
        for (int l = 1; l < levels; l++)
            lvl += select(len >= (1 << l), 1, 0);
        Expr lo = y - h;
        Expr hi_start = y + h + 1 - (1 << lvl);
        Expr v = vert_log[0](x, lo, c);
        Expr w = vert_log[0](x, hi_start, c);
        for (int l = levels - 1; l >= 0; l--) {
            v = select(lvl == l, vert_log[l](x, clamp(lo, y - r, y + r), c), v);
            w = select(lvl == l, vert_log[l](x, clamp(hi_start, y - r, y + r), c), w);
        }
        vert(x, y, c, t) = max(v, w);

        RDom dx(-r, 2 * r + 1, "dx");
        output(x, y, c) = maximum(vert(x + dx, y, c, cast<int>(abs(dx))));

        input.dim(2).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("max_filter", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, t{"t"};
    std::vector<Func> vert_log; // [0] is the clamped input
    Func vert{"vert"};

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        const int r = radius;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (size_t l = 1; l < vert_log.size(); l++)
                vert_log[l].compute_root();
            vert.compute_root();
            return;
        case ScheduleKind::Naive:
            for (size_t l = 1; l < vert_log.size(); l++)
                gpusched_apps::naive_gpu(vert_log[l]);
            gpusched_apps::naive_gpu(vert);
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual: {
            Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
            // The doubling levels are two loads each: one cheap kernel per level, channels as
            // a third block dimension.
            for (size_t l = 1; l < vert_log.size(); l++) {
                vert_log[l].compute_root().gpu_tile(x, y, c, xo, yo, Var("co"), xi, yi, Var("ci"), 32, 8, 1);
            }
            // One 32x4 output tile per block and channel. The column maxima it needs, for all
            // r+1 heights, go to shared memory: (32+2r) x 4 x (r+1) floats = 84*4*27*4 B = 36 KB
            // at r = 26 (< 48 KB), 84x4 threads. t is unrolled, so each copy reads one level.
            out.compute_root().gpu_tile(x, y, c, xo, yo, Var("co"), xi, yi, Var("ci"), 32, 4, 1);
            vert.compute_at(out, xo)
                .store_in(MemoryType::GPUShared)
                .bound_extent(t, r + 1)
                .reorder(t, x, y, c)
                .unroll(t)
                .gpu_threads(x, y);
            return;
        }
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(MaxFilter, max_filter)
