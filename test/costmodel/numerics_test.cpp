// Small numeric building blocks: fast log, CRC-32, rank correlations,
// the appendix B term mapping.
#include "test/catch2_compat.h"

#include <cmath>

#include "costmodel/cost_formula.h"
#include "costmodel/crc32.h"
#include "costmodel/fast_log1p.h"
#include "costmodel/fast_softplus.h"
#include "costmodel/ranking_metrics.h"
#include "fixtures.h"

using namespace gpusched;
using F = ScheduleFeature;

TEST_CASE("fast_log1p stays within 2e-7 of log1p and the array form is bit-identical", "[numerics]") {
    std::vector<float> xs;
    for (double x = 0; x < 3e38; x = x * 1.37 + 1e-3)
        xs.push_back(static_cast<float>(x));
    xs.push_back(0.5f);
    xs.push_back(-3.0f); // clamped to 0
    std::vector<float> out(xs.size());
    fast_log1p_array(xs.data(), out.data(), xs.size());
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const float x = std::max(xs[i], 0.0f);
        const double exact = std::log1p(static_cast<double>(x));
        worst = std::max(worst, std::abs(fast_log1p(xs[i]) - exact) / std::max(1.0, exact));
        CHECK(out[i] == fast_log1p(xs[i]));
    }
    CHECK(worst < 2e-7);
}

TEST_CASE("fast softplus stays within 1e-5 relative of the exact value and is always positive",
          "[numerics]") {
    std::vector<float> zs;
    for (float z = -80.0f; z < 80.0f; z += 0.0137f)
        zs.push_back(z);
    std::vector<float> out(zs.size());
    fast_softplus_array(zs.data(), out.data(), zs.size());
    double worst = 0;
    for (std::size_t i = 0; i < zs.size(); ++i) {
        const double z = zs[i];
        const double exact = std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
        REQUIRE(out[i] > 0);
        worst = std::max(worst, std::abs(out[i] - exact) / exact);
        worst = std::max(worst, std::abs(fast_softplus(zs[i]) - exact) / exact);
    }
    CHECK(worst < 1e-5);
}

TEST_CASE("crc32 matches the standard check value", "[numerics]") {
    const char *s = "123456789";
    CHECK(crc32(s, 9) == 0xCBF43926u);
    CHECK(crc32_update(crc32(s, 4), s + 4, 5) == 0xCBF43926u);
}

TEST_CASE("predicted-best slowdown measures the model's favourite against the true best", "[numerics]") {
    CHECK(best_predicted_slowdown({1, 2, 3}, {10, 20, 30}) == Approx(0));
    CHECK(best_predicted_slowdown({3, 2, 1}, {10, 20, 30}) == Approx(2));
}

TEST_CASE("pairwise accuracy counts the differently timed pairs the predictions order right", "[numerics]") {
    CHECK(*pairwise_accuracy({1, 2, 3}, {10, 20, 30}) == Approx(1));
    CHECK(*pairwise_accuracy({3, 2, 1}, {10, 20, 30}) == Approx(0));
    // (0,1) right, (0,2) right, (1,2) wrong.
    CHECK(*pairwise_accuracy({1, 3, 2}, {10, 20, 30}) == Approx(2.0 / 3));
    // Equal times order nothing; an equal prediction counts half.
    CHECK(*pairwise_accuracy({1, 1, 2}, {10, 20, 20}) == Approx((0.5 + 1) / 2));
    CHECK_FALSE(pairwise_accuracy({1, 2}, {5, 5}).has_value());
}

TEST_CASE("top-k score is the best time over the best time among the k predicted fastest", "[numerics]") {
    const std::vector<double> measured = {40, 10, 20, 80};
    const std::vector<double> predicted = {1, 4, 2, 3}; // favourites in order: 0, 2, 3, 1
    CHECK(top_k_score(predicted, measured, 1) == Approx(10.0 / 40));
    CHECK(top_k_score(predicted, measured, 2) == Approx(10.0 / 20));
    CHECK(top_k_score(predicted, measured, 3) == Approx(10.0 / 20));
    CHECK(top_k_score(predicted, measured, 4) == Approx(1));
    CHECK(top_k_score(predicted, measured, 9) == Approx(1));
    CHECK_THROWS(top_k_score(predicted, measured, 0));
}

TEST_CASE("cost terms: inlined stages use c3/c4, others c1/c19 (appendix B selects)", "[formula]") {
    FormulaContext ctx;
    CostTerms t;
    auto f = test::root_kernel_row();
    compute_cost_terms(f, ctx, t);
    CHECK(t[1] > 0);
    CHECK(t[19] > 0);
    CHECK(t[3] == 0);
    CHECK(t[4] == 0);
    f[F::inlined_calls] = 10;
    compute_cost_terms(f, ctx, t);
    CHECK(t[1] == 0);
    CHECK(t[3] > 0);
    CHECK(t[4] > 0);
}

TEST_CASE("cost terms: all terms are finite and >= 0, and formula 1 leaves the serial chain's at 0",
          "[formula]") {
    std::mt19937_64 rng(2);
    const GpuProfile g = test::h100();
    FormulaContext ctx = formula_context_for(g);
    ctx.version = 1;
    for (int p = 0; p < 10; ++p) {
        const auto sp = random_synthetic_pipeline(rng);
        for (int s = 0; s < 10; ++s) {
            for (const auto &row : random_synthetic_state(sp, g, rng).schedule) {
                CostTerms t;
                compute_cost_terms(row, ctx, t);
                for (double v : t) {
                    REQUIRE(std::isfinite(v));
                    REQUIRE(v >= 0);
                }
                REQUIRE(t[30] == 0);
                REQUIRE(t[31] == 0);
            }
        }
    }
}

TEST_CASE("cost terms: worse global load efficiency raises the load-transaction term", "[formula]") {
    CostTerms good, bad;
    auto f = test::root_kernel_row();
    compute_cost_terms(f, FormulaContext{}, good);
    f[F::global_mem_load_efficiency] = 0.25;
    compute_cost_terms(f, FormulaContext{}, bad);
    CHECK(bad[27] == Approx(4 * good[27]));
}

TEST_CASE("cost terms: the serial chain (formula 2) grows as the same work runs in fewer threads",
          "[formula]") {
    const GpuProfile g = test::h100();
    const FormulaContext ctx = formula_context_for(g);
    REQUIRE(ctx.version >= 2);
    auto f = test::root_kernel_row(); // 4M points, 4 per thread, unrolled
    CostTerms full, few;
    compute_cost_terms(f, ctx, full);
    CHECK(full[30] > 0);
    CHECK(full[31] > 0);
    // The same points in 64 blocks of 256 threads, a serial loop of 256 each.
    f[ScheduleFeature::num_blocks] = 64;
    f[ScheduleFeature::num_tasks] = 64;
    f[ScheduleFeature::points_computed_per_thread] = 256;
    f[ScheduleFeature::unrolled_loop_extent] = 1;
    compute_cost_terms(f, ctx, few);
    CHECK(few[30] > 10 * full[30]);
    CHECK(few[31] > 10 * full[31]);
}
