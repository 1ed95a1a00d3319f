// SGEMM: single-precision general matrix multiply, C' = alpha * A * B + beta * C.
//
// Matrices are indexed (column, row), column innermost and contiguous (row
// major): A is K columns x M rows, B is N x K, C and the output N x M.
// output(j, i) = alpha * sum_k A(k, i) * B(j, k) + beta * C(j, i).
// Stages: prod (pure + 1 update), output = 2 Funcs. Sizes from the paper's
// suite: 2048x2048. See docs/apps/sgemm.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class Sgemm : public Generator<Sgemm> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<float> alpha{"alpha"};
    Input<float> beta{"beta"};
    Input<Buffer<float, 2>> a{"a"}; // (k, i)
    Input<Buffer<float, 2>> b{"b"}; // (j, k)
    Input<Buffer<float, 2>> c{"c"}; // (j, i)
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        k = RDom(0, a.dim(0).extent(), "k");

        prod(j, i) = 0.0f;
        prod(j, i) += a(k, i) * b(j, k);
        output(j, i) = alpha * prod(j, i) + beta * c(j, i);

        // Paper suite size: 2048x2048 single precision.
        constexpr int kSize = 2048;
        alpha.set_estimate(1.0f);
        beta.set_estimate(1.0f);
        a.set_estimates({{0, kSize}, {0, kSize}});
        b.set_estimates({{0, kSize}, {0, kSize}});
        c.set_estimates({{0, kSize}, {0, kSize}});
        output.set_estimates({{0, kSize}, {0, kSize}});

        apply_schedule();
    }

private:
    Var j{"j"}, i{"i"};
    RDom k;
    Func prod{"prod"};

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind =
            gpusched_apps::parse_schedule("sgemm", schedule, get_target(), GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                          gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: prod and output each their own kernel, 16x16 threads, one
    // output element per thread, the whole dot product serial.
    void schedule_naive() {
        Var jo, io, ji, ii;
        prod.compute_root().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
        prod.update().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
        output.compute_root().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
    }

    // Register-blocked GEMM, one kernel. Block tile: 64 (j) x 64 (i)
    // outputs, 16 x 16 = 256 threads; each thread owns a contiguous 4 x 4
    // tile of accumulators, computed at the thread level so they live in
    // registers (the 4 columns vectorized, the 4 rows unrolled): per k it
    // loads 4 values of A (the same for the 16 threads of a row: one
    // broadcast transaction) and 4 contiguous values of B (a warp's loads
    // cover 256 contiguous bytes), and issues 16 FMAs. k is split by 8 and the inner 8
    // unrolled so loads are issued well ahead of their use. alpha, beta and
    // C are applied as the tile is written. M and N must be at least 64 (the
    // tiles shift inwards at the edges).
    //
    // Not done: staging the A and B slices in shared memory per k step. In
    // Halide 14 that needs the k loop at block level, so the accumulators
    // would have to be allocated at block level; MemoryType::Register there
    // is only kept in registers when striped across warp lanes (gpu_lanes +
    // warp shuffles, CUDA only); with gpu_threads it becomes a per-thread
    // copy of the whole 64 x 64 tile in local memory (ptxas reports a 16 KB
    // stack frame), which is far slower than L1-cached operand loads.
    void schedule_manual() {
        Var jo{"jo"}, io{"io"}, jin{"jin"}, iin{"iin"}, jt{"jt"}, it{"it"}, ju{"ju"}, iu{"iu"};
        RVar ko{"ko"}, ki{"ki"};
        constexpr int kTile = 64, kPerThread = 4, kStep = 8;

        output.compute_root()
            .split(j, jo, jin, kTile)
            .split(i, io, iin, kTile)
            .split(jin, jt, ju, kPerThread)
            .split(iin, it, iu, kPerThread)
            .reorder(ju, iu, jt, it, jo, io)
            .gpu_blocks(jo, io)
            .gpu_threads(jt, it)
            .vectorize(ju)
            .unroll(iu);

        prod.compute_at(output, jt).vectorize(j).unroll(i);
        prod.update()
            .split(k, ko, ki, kStep, TailStrategy::GuardWithIf)
            .reorder(j, i, ki, ko)
            .vectorize(j)
            .unroll(i)
            .unroll(ki);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Sgemm, sgemm)
