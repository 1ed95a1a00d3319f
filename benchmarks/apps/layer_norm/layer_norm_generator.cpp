// Layer normalization (a transformer's LayerNorm) over the 768 features of each of 8192 tokens,
// one of issue 27's shapes: two reductions per token whose outputs (8192 values) are
// far fewer than a GPU's resident threads, each only 768 long. Unsplit, each token's mean and
// variance run serially in one thread: 8192 busy threads of 270,000 (an H100's).
//
// row_sum(y) = sum over x of input(x, y); mean(y) = row_sum(y) / n; row_sqdev(y) = sum over x of
// (input(x, y) - mean(y))^2; inv_std(y) = 1 / sqrt(row_sqdev(y) / n + eps);
// output(x, y) = (input(x, y) - mean(y)) * inv_std(y) * gamma(x) + beta(x), with n the number of
// features and eps = 1e-5. The variance is computed in two passes, around the mean, rather than
// in one as sum(x^2)/n - mean^2: activations often sit far from zero relative to their spread,
// and the one-pass form subtracts two nearly equal floats (at a mean of 100 and unit variance,
// sum(x^2)/n is ~10^4 and its rounding noise, about 2^-24 * 10^4 * sqrt(768) = 0.017, is 1.7% of
// the variance; at a mean of 1000 it is 170%, and the variance can come out negative, making
// 1/sqrt NaN). The two-pass form adds only squares of deviations, each computed exactly when
// x and mean are within a factor 2 of each other (Sterbenz), so its error is the float summation
// bound's plus the square of the mean's rounding error (the first-order term cancels, since the
// deviations sum to zero); it costs a second read of the row, which a fused schedule keeps in
// cache. Stages: the input wrappers (input, gamma, beta), row_sum and row_sqdev (pure definition
// + one update each over a 1-D RDom covering the features), mean, inv_std and output (8 Funcs,
// two updates). Size: 768 features x 8192 tokens, float. See docs/apps/layer_norm.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (every Func at root, each
// token's reductions serial in one GPU thread: the paper's search space) or "manual" (the expert
// schedule below: a warp per token, 8 tokens per block, one kernel).

#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class LayerNorm : public Generator<LayerNorm> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> gamma{"gamma"};
    Input<Buffer<float, 1>> beta{"beta"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        const Expr eps = 1e-5f;
        const Expr n = cast<float>(input.dim(0).extent());
        r = RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        row_sum(y) = 0.0f;
        row_sum(y) += input(r, y);
        mean(y) = row_sum(y) / n;
        row_sqdev(y) = 0.0f;
        const Expr dev = input(r, y) - mean(y);
        row_sqdev(y) += dev * dev;
        inv_std(y) = 1.0f / sqrt(row_sqdev(y) / n + eps);
        output(x, y) = (input(x, y) - mean(y)) * inv_std(y) * gamma(x) + beta(x);

        input.set_estimates({{0, 768}, {0, 8192}});
        gamma.set_estimates({{0, 768}});
        beta.set_estimates({{0, 768}});
        output.set_estimates({{0, 768}, {0, 8192}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("layer_norm", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    Var x{"x"}, y{"y"};
    Func row_sum{"row_sum"}, mean{"mean"}, row_sqdev{"row_sqdev"}, inv_std{"inv_std"};
    RDom r;

    // Every Func at root, five kernels. The reductions' updates are tiled 16 tokens to a block, one
    // thread per token running all its features serially; mean and inv_std are 16-wide 1-D tiles,
    // output a plain 16x16 tile.
    void schedule_naive() {
        Var yo("naive_uyo"), yi("naive_uyi");
        for (Func f : {row_sum, mean, row_sqdev, inv_std})
            gpusched_apps::naive_gpu(f);
        row_sum.update().gpu_tile(y, yo, yi, 16, TailStrategy::GuardWithIf);
        row_sqdev.update().gpu_tile(y, yo, yi, 16, TailStrategy::GuardWithIf);
        gpusched_apps::naive_gpu(output);
    }

    // One kernel; a block is 32 x 8 threads, a warp per token and 8 tokens per block (1024
    // blocks at 8192 tokens). Each reduction is split with rfactor into 32 partials per token,
    // partial u covering the features x = u mod 32 (lane u: a warp reads 32 neighbouring floats,
    // 24 loads per lane at 768 features), kept in shared memory; one thread per token then adds
    // its 32 partials. mean and inv_std are computed once per token into shared memory, and the
    // output tile is written by the same threads, 24 coalesced features per lane.
    void schedule_manual() {
        const int kLanes = 32, kTokens = 8;
        Var u("u"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
        RVar rxo("rxo"), rxi("rxi");

        Func out = output;
        out.compute_root()
            .split(x, xo, xi, kLanes, TailStrategy::GuardWithIf)
            .split(y, yo, yi, kTokens, TailStrategy::GuardWithIf)
            .reorder(xo, xi, yi, yo)
            .gpu_blocks(yo)
            .gpu_threads(xi, yi);

        // rfactor copies the update's schedule to the intermediate: split first.
        Func sum_partial =
            row_sum.update().split(r, rxo, rxi, kLanes, TailStrategy::GuardWithIf).rfactor(rxi, u);
        Func sqdev_partial =
            row_sqdev.update().split(r, rxo, rxi, kLanes, TailStrategy::GuardWithIf).rfactor(rxi, u);
        for (Func partial : {sum_partial, sqdev_partial}) {
            partial.compute_at(out, yo).store_in(MemoryType::GPUShared).gpu_threads(u, y);
            partial.update().reorder(rxo, u, y).gpu_threads(u, y);
        }
        // The per-token values: one thread per token.
        for (Func f : {row_sum, mean, row_sqdev, inv_std}) {
            f.compute_at(out, yo).store_in(MemoryType::GPUShared).gpu_threads(y);
        }
        row_sum.update().reorder(rxi, y).gpu_threads(y);
        row_sqdev.update().reorder(rxi, y).gpu_threads(y);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(LayerNorm, layer_norm)
