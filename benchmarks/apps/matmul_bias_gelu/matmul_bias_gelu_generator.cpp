// Matmul + bias + GELU: the first layer of a transformer's MLP block
// (BERT-base / GPT-2 small: 768 -> 3072), out = gelu(A B + bias), the
// epilogue fused into the matrix multiply as an ML compiler would hand it to
// a Halide GPU autoscheduler. Unlike the other reduction-shaped apps the
// output is large (6.3 million points); its 768-long dot products are the
// reduction, and the question is whether a search keeps them in registers
// with the epilogue fused, or splits them needlessly.
//
// Layout as in benchmarks/apps/sgemm: matrices are indexed (column, row),
// column innermost: A is K x M (a(k, i), M tokens of K features), B is N x K
// (b(j, k)), bias has N entries, the output is N x M:
//   output(j, i) = gelu(sum over k of a(k, i) * b(j, k) + bias(j)),
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// (the tanh approximation, PyTorch's gelu(approximate="tanh")), in float.
// Stages: prod (pure + one update over k) and output (2 Funcs). Sizes:
// M = 2048 tokens, K = 768, N = 3072. See docs/apps/matmul_bias_gelu.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (each Func
// its own 16x16-tiled kernel, the dot product serial in the thread) or
// "manual" (the expert schedule below).

#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <string>

namespace {

using namespace Halide;

class MatmulBiasGelu : public Generator<MatmulBiasGelu> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 2>> a{"a"};       // (k, i): K x M
    Input<Buffer<float, 2>> b{"b"};       // (j, k): N x K
    Input<Buffer<float, 1>> bias{"bias"}; // (j): N
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        k = RDom(0, a.dim(0).extent(), "k");
        prod(j, i) = 0.0f;
        prod(j, i) += a(a.dim(0).min() + k, i) * b(j, b.dim(1).min() + k);

        const Expr x = prod(j, i) + bias(j);
        const float sqrt_2_over_pi = 0.7978845608028654f;
        output(j, i) = 0.5f * x * (1.0f + tanh(sqrt_2_over_pi * (x + 0.044715f * x * x * x)));

        constexpr int kTokens = 2048, kIn = 768, kOut = 3072;
        a.set_estimates({{0, kIn}, {0, kTokens}});
        b.set_estimates({{0, kOut}, {0, kIn}});
        bias.set_estimates({{0, kOut}});
        output.set_estimates({{0, kOut}, {0, kTokens}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("matmul_bias_gelu", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    Var j{"j"}, i{"i"};
    RDom k;
    Func prod{"prod"};

    // The floor: prod's pure definition, its update and the output each
    // their own kernel of 16x16 threads, one element per thread, the whole
    // dot product serial in the thread.
    void schedule_naive() {
        gpusched_apps::naive_gpu(prod);
        gpusched_apps::naive_gpu_update(prod.update(), {j, i}, {k});
        gpusched_apps::naive_gpu(output);
    }

    // sgemm's register-blocked schedule with the epilogue fused: one kernel.
    // Block tile 64 (j) x 64 (i) outputs, 16 x 16 = 256 threads; each thread
    // owns a contiguous 4 x 4 tile of accumulators computed at the thread
    // level, so they live in registers (the 4 columns vectorized, the 4 rows
    // unrolled): per k it loads 4 values of A (the same for the 16 threads of
    // a row: one broadcast transaction) and 4 contiguous values of B, and
    // issues 16 FMAs; k is split by 8 and the inner 8 unrolled. Bias and
    // GELU are applied in registers as the tile is written (4 bias loads per
    // thread), so the product never goes to memory. M and N must be at least
    // 64 (the tiles shift inwards at the edges); the ML sizes are multiples
    // of 64. Shared-memory staging of A and B is not done, for the reason
    // given in sgemm_generator.cpp.
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

HALIDE_REGISTER_GENERATOR(MatmulBiasGelu, matmul_bias_gelu)
