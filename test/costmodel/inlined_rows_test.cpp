// Inlined Funcs' feature rows as the search writes them (docs/features.md,
// "Inlined Funcs"): inlined_calls = num_scalars = points_computed_total =
// points_computed_per_thread = the total call count, one block of one
// thread, every other feature 0; the loads are in the consumers' rows.
// The analytic model and the appendix B formula must read such a row as
// "this much arithmetic, nothing else".
#include "test/catch2_compat.h"

#include <cmath>
#include <random>

#include "costmodel/analytic_cost_model.h"
#include "costmodel/cost_formula.h"
#include "costmodel/default_weights.h"
#include "costmodel/network_cost_model.h"
#include "fixtures.h"

using namespace gpusched;
using F = ScheduleFeature;

namespace {

double analytic_cost(const PipelineFeatures &stage, const ScheduleFeatures &row) {
    AnalyticGpuCostModel m(test::h100());
    m.set_pipeline({stage});
    StateFeatures s;
    s.stage_ids = {0};
    s.schedule = {row};
    std::vector<double> c;
    m.evaluate({&s}, c);
    return c[0];
}

} // namespace

TEST_CASE("cost terms of an inlined row are its calls in c3 and c4 and nothing else", "[formula][inlined]") {
    const double calls = 3.0e6;
    CostTerms t;
    compute_cost_terms(inlined_stage_row(calls), formula_context_for(test::h100()), t);
    CHECK(t[3] == Approx(calls * kTermUnitMs[3]));
    CHECK(t[4] == Approx(calls * kTermUnitMs[4]));
    for (int i = 0; i < kNumCoefficients; ++i) {
        if (i == 3 || i == 4) continue;
        INFO("coefficient " << i);
        CHECK(t[i] == 0);
    }
}

TEST_CASE("cost terms of an inlined row count its calls even without points per thread",
          "[formula][inlined]") {
    // Appendix B's points_computed = threads x points_per_thread; for a row of
    // one thread that is the call count only if the featurizer repeated it
    // there. points_computed_total holds it either way.
    auto f = inlined_stage_row(5.0e5);
    CostTerms with, without;
    compute_cost_terms(f, FormulaContext{}, with);
    f[F::points_computed_per_thread] = 0;
    compute_cost_terms(f, FormulaContext{}, without);
    CHECK(without[4] == with[4]);
    CHECK(without[4] > 0);
}

TEST_CASE("analytic model: an inlined row costs its arithmetic per call and no store",
          "[analytic][inlined]") {
    const GpuProfile g = test::h100();
    const double calls = 1.0e7;
    const double warp_instr_per_ms = g.fp32_tflops * 1e9 / 64.0;
    // 2 adds + 1 mul + 1 call = 4 instructions per call; no store.
    const PipelineFeatures stage = test::simple_pipeline_stage();
    CHECK(analytic_cost(stage, inlined_stage_row(calls)) == Approx(calls * 4.0 / 32.0 / warp_instr_per_ms));
    // A Func that only forwards its producer (one call) costs that call.
    PipelineFeatures forward;
    forward.op(OpType::FuncCall, ScalarTypeBucket::Float) = 1;
    CHECK(analytic_cost(forward, inlined_stage_row(calls)) == Approx(calls * 1.0 / 32.0 / warp_instr_per_ms));
    // Twice the calls, twice the cost.
    CHECK(analytic_cost(stage, inlined_stage_row(2 * calls)) ==
          Approx(2 * analytic_cost(stage, inlined_stage_row(calls))));
}

TEST_CASE("analytic model: an inlined row's placeholder block and thread counts do not change its cost",
          "[analytic][inlined]") {
    // The row's one block of one thread is not its consumers' launch shape:
    // reading it as occupancy would charge a full wave and no latency hiding.
    const PipelineFeatures stage = test::simple_pipeline_stage();
    const auto f = inlined_stage_row(1.0e6);
    auto g = f;
    g[F::num_blocks] = 4096;
    g[F::num_threads_per_block] = 256;
    g[F::max_warp_occupancy] = 0.5;
    CHECK(analytic_cost(stage, g) == analytic_cost(stage, f));
}

TEST_CASE("analytic model: inlining is cheaper than a root kernel doing the same points",
          "[analytic][inlined]") {
    // The same 4M points of the same stage: inlined, only arithmetic; as a
    // kernel, arithmetic plus traffic plus a launch.
    const PipelineFeatures stage = test::simple_pipeline_stage();
    const auto root = test::root_kernel_row();
    CHECK(analytic_cost(stage, inlined_stage_row(root[F::points_computed_total])) <
          analytic_cost(stage, root));
}

TEST_CASE("network cost of states with inlined rows is finite and positive", "[network][inlined]") {
    NetworkCostModel m(default_weights(), test::h100());
    m.set_pipeline({test::simple_pipeline_stage(), test::simple_pipeline_stage()});
    StateFeatures s;
    s.stage_ids = {0, 1};
    s.schedule = {test::root_kernel_row(), inlined_stage_row(4.0 * 1024 * 1024 * 9)};
    std::vector<double> c;
    std::vector<std::vector<double>> per_stage;
    m.evaluate({&s}, c, &per_stage);
    REQUIRE(per_stage[0].size() == 2);
    CHECK(std::isfinite(per_stage[0][1]));
    CHECK(per_stage[0][1] > 0);
    CHECK(c[0] > per_stage[0][0]);
}

TEST_CASE("synthetic states write inlined rows the way the search does", "[synthetic][inlined]") {
    std::mt19937_64 rng(11);
    const GpuProfile g = test::h100();
    int inlined_rows = 0;
    for (int p = 0; p < 40; ++p) {
        const auto sp = random_synthetic_pipeline(rng);
        for (int s = 0; s < 8; ++s) {
            for (const auto &row : random_synthetic_state(sp, g, rng).schedule) {
                if (row[F::inlined_calls] == 0) continue;
                ++inlined_rows;
                const auto expect = inlined_stage_row(row[F::inlined_calls]);
                for (int i = 0; i < kNumScheduleFeatures; ++i) {
                    INFO(schedule_feature_name(static_cast<ScheduleFeature>(i)));
                    REQUIRE(row.values[static_cast<std::size_t>(i)] ==
                            expect.values[static_cast<std::size_t>(i)]);
                }
            }
        }
    }
    CHECK(inlined_rows > 0);
}
