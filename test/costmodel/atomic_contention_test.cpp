// Atomic contention: the model against its H100 measurements, and both cost
// models charging it (the network since cost-formula version 3, in training
// as in the search).
#include "test/catch2_compat.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "costmodel/analytic_cost_model.h"
#include "costmodel/atomic_contention.h"
#include "costmodel/network_evaluator.h"
#include "costmodel/network_gradient.h"
#include "fixtures.h"

using namespace gpusched;
using F = ScheduleFeature;

namespace {

// `updates` atomic adds, one a thread in blocks of 256, into `addresses`
// stored points `stride` bytes apart (the microbenchmark's
// kernel, benchmarks/atomic_contention/atomic_contention.cu).
ScheduleFeatures atomic_adds(double updates, double addresses, double stride) {
    ScheduleFeatures f = test::root_kernel_row();
    f[F::points_computed_total] = updates;
    f[F::num_scalars] = updates;
    f[F::num_threads_per_block] = 256;
    f[F::num_blocks] = updates / 256;
    f[F::bytes_at_root] = addresses * stride;
    return f;
}

PipelineFeatures storing(ScalarTypeBucket type) {
    PipelineFeatures p;
    p.op(OpType::Add, type) = 1;
    p.access(AccessPattern::Pointwise, AccessType::Store, type) = 1;
    return p;
}

} // namespace

TEST_CASE("the contention model is within 2.5x of the H100's measured atomic adds of a warp into one address",
          "[analytic][atomic]") {
    // h100.csv: `atomic_contention` on an H100 (docs/costmodel.md). The model
    // assumes every lane of a warp adds to the same address (pattern "warp");
    // lanes adding to different addresses wait less, so there the model is an
    // upper estimate. Beyond 256 lines the store traffic, not contention,
    // bounds the time (the roofline's part).
    std::ifstream in(GPUSCHED_ATOMIC_CONTENTION_CSV);
    REQUIRE(in);
    std::string line;
    int warp_rows = 0, other_rows = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("pattern,", 0) == 0) continue;
        std::stringstream ss(line);
        std::string pattern, type;
        double addresses, stride, updates, ms, ns;
        std::getline(ss, pattern, ',');
        std::getline(ss, type, ',');
        ss >> addresses;
        ss.ignore();
        ss >> stride;
        ss.ignore();
        ss >> updates;
        ss.ignore();
        ss >> ms;
        ss.ignore();
        ss >> ns;
        REQUIRE(ss);
        const double lines = std::ceil(addresses * stride / 128);
        if (lines > 256) continue;
        AtomicStore store;
        store.bytes_per_point = stride; // one stored point per address
        store.floating = type == "float32";
        const double model_ms = atomic_contention_ms(atomic_adds(updates, addresses, stride), store);
        INFO(line << ": model " << model_ms << " ms");
        if (pattern == "warp") {
            CHECK(model_ms < 2.5 * ms);
            CHECK(model_ms > ms / 2.5);
            ++warp_rows;
        } else {
            CHECK(model_ms > ms / 1.5);
            ++other_rows;
        }
    }
    CHECK(warp_rows == 40);
    CHECK(other_rows == 80);
}

TEST_CASE(
    "atomic updates spread over more lines wait less, and integer ones at one line less than float ones",
    "[analytic][atomic]") {
    const AtomicStore f32{4, true}, i32{4, false};
    const double updates = 66.8e6; // histogram_equalize's combining of 1536 x 170 partial histograms
    double previous = INFINITY;
    for (double bins : {1.0, 256.0, 4096.0, 65536.0}) {
        const double ms = atomic_contention_ms(atomic_adds(updates, bins, 4), i32);
        CHECK(ms < previous);
        previous = ms;
    }
    CHECK(atomic_contention_ms(atomic_adds(updates, 1, 4), i32) <
          atomic_contention_ms(atomic_adds(updates, 1, 4), f32));
    // 256 int bins are 8 lines: tens of milliseconds (the H100 ran this
    // pattern in 24.7 ms, and histogram_equalize's pick in 49.9 ms).
    CHECK(atomic_contention_ms(atomic_adds(updates, 256, 4), i32) > 20);
    // One update per stored point is no contention, whatever the lines.
    CHECK(atomic_contention_ms(atomic_adds(updates, updates, 4), i32) == 0);
    // A producer computed per block, its tiles overlapping 4x (a stencil's
    // halo in small tiles), writes each block's points into the block's own
    // buffer: recomputation, not contention.
    auto recomputed = atomic_adds(4 * 1.2e6, 1.2e6, 2);
    recomputed[F::num_realizations] = recomputed[F::num_blocks];
    CHECK(atomic_contention_ms(recomputed, AtomicStore{2, false}) == 0);
    recomputed[F::num_realizations] = 1;
    CHECK(atomic_contention_ms(recomputed, AtomicStore{2, false}) > 0);
}

TEST_CASE("cost formula 3 adds an atomic stage's contention to the network's cost, and formula 2 weights "
          "predict as "
          "they did",
          "[network][atomic]") {
    const PipelineFeatures stage = storing(ScalarTypeBucket::Float);
    const ScheduleFeatures combine = atomic_adds(262144, 1, 4);
    const ScheduleFeatures plain = test::root_kernel_row();
    const NetworkWeights w = NetworkWeights::initial(7);
    FormulaContext v2 = formula_context_for(test::h100()), v3 = v2;
    v2.version = 2;
    v3.version = 3;
    NetworkEvaluator e2(w, v2), e3(w, v3);
    e2.set_pipeline({stage});
    e3.set_pipeline({stage});
    auto cost = [](const NetworkEvaluator &e, const ScheduleFeatures &f) {
        const int id = 0;
        const ScheduleFeatures *row = &f;
        double c = 0;
        e.evaluate_rows(&id, &row, 1, &c);
        return c;
    };
    const double contention = atomic_contention_ms(combine, atomic_store_of(stage));
    CHECK(contention == Approx(262144 * 1.76e-6).epsilon(0.01));
    CHECK(cost(e3, combine) - cost(e2, combine) == Approx(contention).epsilon(1e-6));
    CHECK(cost(e3, plain) == cost(e2, plain));
}

TEST_CASE("training predicts an atomic stage's contention as the search does", "[gradient][atomic]") {
    const PipelineFeatures stage = storing(ScalarTypeBucket::Float);
    StateFeatures s;
    s.stage_ids = {0};
    s.schedule = {atomic_adds(262144, 1, 4)};
    FormulaContext ctx = formula_context_for(test::h100());
    REQUIRE(ctx.version == 3);
    const NetworkWeights w = NetworkWeights::initial(11);
    const PreparedPipeline pipe = prepare_pipeline({stage}, {s}, {1.0}, ctx);
    const auto flat = w.flatten();
    const std::vector<double> params(flat.begin(), flat.end());
    const double trained = predict_samples(params, pipe, {0})[0];
    NetworkEvaluator e(w, ctx);
    e.set_pipeline({stage});
    const int id = 0;
    const ScheduleFeatures *row = &s.schedule[0];
    double searched = 0;
    e.evaluate_rows(&id, &row, 1, &searched);
    CHECK(trained == Approx(searched).epsilon(1e-4));
    CHECK(pipe.samples[0].rows[0].fixed_ms == Approx(262144 * 1.76e-6).epsilon(0.01));
}
