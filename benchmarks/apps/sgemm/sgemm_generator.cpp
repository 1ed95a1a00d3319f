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

namespace {

using namespace Halide;

class Sgemm : public Generator<Sgemm> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<float> alpha{"alpha"};
    Input<float> beta{"beta"};
    Input<Buffer<float, 2>> a{"a"};  // (k, i)
    Input<Buffer<float, 2>> b{"b"};  // (j, k)
    Input<Buffer<float, 2>> c{"c"};  // (j, i)
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
        const std::string s = schedule;
        if (s == "none") {
            return;
        }
        _halide_user_assert(s == "naive" || s == "manual")
            << "sgemm: schedule=" << s << " is not one of none, naive, manual\n";
        _halide_user_assert(get_target().has_gpu_feature())
            << "sgemm: schedule=" << s << " is a GPU schedule; target " << get_target().to_string()
            << " has no GPU feature (use e.g. host-cuda or host-opencl)\n";
        _halide_user_assert(!auto_schedule) << "sgemm: schedule=" << s << " cannot be combined with auto_schedule=true\n";
        if (s == "naive") {
            schedule_naive();
        } else {
            schedule_manual();
        }
    }

    // Floor: prod and output each their own kernel, 16x16 threads, one
    // output element per thread, the whole dot product serial.
    void schedule_naive() {
        Var jo, io, ji, ii;
        prod.compute_root().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
        prod.update().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
        output.compute_root().gpu_tile(j, i, jo, io, ji, ii, 16, 16, TailStrategy::GuardWithIf);
    }

    // Classic shared-memory + register-blocked GEMM, one kernel.
    // Block tile: 64 (j) x 64 (i) outputs, 16 x 16 = 256 threads. Each thread
    // accumulates a 4 x 4 register tile (unrolled; 16 FMAs per 8 shared
    // loads); its 4 columns are strided by 16 so neighbouring threads touch
    // neighbouring columns (coalesced global stores, conflict-free shared
    // reads). The k loop is split by 16: per step the block stages a 16 x 64
    // slice of A and a 64 x 16 slice of B in shared memory (2 x 4 KB), loaded
    // cooperatively by the 256 threads, and the inner 16 k are unrolled. The
    // accumulators live at block level in registers (MemoryType::Register),
    // each thread owning its tile, so they persist across k steps. alpha,
    // beta and C are applied when the tile is written.
    void schedule_manual() {
        Var jo{"jo"}, io{"io"}, jin{"jin"}, iin{"iin"}, jt{"jt"}, it{"it"}, ju{"ju"}, iu{"iu"};
        RVar ko{"ko"}, ki{"ki"};
        constexpr int kTile = 64, kThreads = 16, kStep = 16;

        output.compute_root()
            .split(j, jo, jin, kTile)
            .split(i, io, iin, kTile)
            .split(jin, ju, jt, kThreads)
            .split(iin, iu, it, kThreads)
            .reorder(ju, iu, jt, it, jo, io)
            .gpu_blocks(jo, io)
            .gpu_threads(jt, it)
            .unroll(ju)
            .unroll(iu);

        prod.compute_at(output, jo)
            .store_in(MemoryType::Register)
            .split(j, ju, jt, kThreads)
            .split(i, iu, it, kThreads)
            .reorder(ju, iu, jt, it)
            .gpu_threads(jt, it)
            .unroll(ju)
            .unroll(iu);
        prod.update()
            .split(k, ko, ki, kStep, TailStrategy::GuardWithIf)
            .split(j, ju, jt, kThreads)
            .split(i, iu, it, kThreads)
            .reorder(ju, iu, ki, jt, it, ko)
            .gpu_threads(jt, it)
            .unroll(ju)
            .unroll(iu)
            .unroll(ki);

        // Staging loads use the same 16x16 threads: A's slice is 16 (k) x 64
        // (i), one k per thread.x and 4 rows per thread.y (unrolled); B's is
        // 64 (j) x 16 (k), with thread.x on consecutive j for coalescing.
        Func a_s = a.in(), b_s = b.in();
        Var ao{"ao"}, ai{"ai"}, bo{"bo"}, bi{"bi"};
        a_s.compute_at(prod, ko)
            .store_in(MemoryType::GPUShared)
            .split(_1, ao, ai, kThreads)
            .reorder(ao, _0, ai)
            .gpu_threads(_0, ai)
            .unroll(ao);
        b_s.compute_at(prod, ko)
            .store_in(MemoryType::GPUShared)
            .split(_0, bo, bi, kThreads)
            .reorder(bo, bi, _1)
            .gpu_threads(bi, _1)
            .unroll(bo);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Sgemm, sgemm)
