// The network cost model's row cache (costmodel/row_cost_cache.h): it may
// only skip work, never change a cost.
#include "test/catch2_compat.h"

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "costmodel/make_cost_model.h"
#include "costmodel/network_cost_model.h"
#include "fixtures.h"

using namespace gpusched;

namespace {

// Costs of every state straight from the evaluator (no cache).
std::vector<double> uncached_costs(const NetworkEvaluator &ev, const std::vector<StateFeatures> &states) {
    std::vector<double> out;
    for (const StateFeatures &s : states) {
        std::vector<const ScheduleFeatures *> rows;
        for (const auto &r : s.schedule)
            rows.push_back(&r);
        std::vector<double> per(rows.size());
        ev.evaluate_rows(s.stage_ids.data(), rows.data(), rows.size(), per.data());
        double total = 0;
        for (double c : per)
            total += c;
        out.push_back(total);
    }
    return out;
}

} // namespace

TEST_CASE("row cache: cached costs equal the network's own and repeated rows are not recomputed",
          "[network]") {
    auto m = make_cost_model(nlohmann::json::object(), test::h100());
    auto *net = dynamic_cast<NetworkCostModel *>(m.get());
    REQUIRE(net != nullptr);
    std::mt19937_64 rng(5);
    const test::SyntheticBatch batch = test::synthetic_batch(rng, 30);
    m->set_pipeline(batch.pipeline.stages);
    const std::vector<StateFeatures> &states = batch.states;
    const std::vector<const StateFeatures *> all = batch.pointers();
    std::size_t rows = 0;
    for (const auto &s : states)
        rows += s.schedule.size();
    const std::vector<double> expected = uncached_costs(net->evaluator(), states);

    std::vector<double> first, second;
    m->evaluate(all, first);
    const uint64_t misses_first = net->row_cache().misses();
    m->evaluate(all, second);
    for (std::size_t i = 0; i < states.size(); ++i) {
        CHECK(first[i] == Approx(expected[i]).epsilon(1e-12));
        CHECK(second[i] == first[i]);
    }
    CHECK(misses_first > 0);
    CHECK(net->row_cache().misses() == misses_first); // the second pass was all hits
    CHECK(net->row_cache().hits() >= rows);

    SECTION("a new pipeline forgets the cached rows") {
        std::vector<PipelineFeatures> other = batch.pipeline.stages; // same stages, other op histograms
        for (PipelineFeatures &f : other)
            for (auto &v : f.values)
                v = v * 2 + 1;
        m->set_pipeline(other);
        std::vector<double> recosted;
        m->evaluate(all, recosted);
        const std::vector<double> expected_other = uncached_costs(net->evaluator(), states);
        for (std::size_t i = 0; i < states.size(); ++i)
            CHECK(recosted[i] == Approx(expected_other[i]).epsilon(1e-12));
        CHECK(net->row_cache().hits() == 0);
    }
}

TEST_CASE("row cache: the key tells apart stages and rows that differ in one bit", "[network]") {
    ScheduleFeatures row = test::root_kernel_row();
    ScheduleFeatures nudged = row;
    nudged.values[7] = std::nextafter(nudged.values[7], 1e300);
    RowCostCache cache(4);
    cache.store(RowCostCache::key(0, row), 1.5);
    double c = 0;
    CHECK(cache.lookup(RowCostCache::key(0, row), c));
    CHECK(c == 1.5);
    CHECK_FALSE(cache.lookup(RowCostCache::key(1, row), c));
    CHECK_FALSE(cache.lookup(RowCostCache::key(0, nudged), c));
    cache.clear();
    CHECK_FALSE(cache.lookup(RowCostCache::key(0, row), c));
}
