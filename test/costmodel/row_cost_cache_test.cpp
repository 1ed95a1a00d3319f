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

TEST_CASE("row cache: a row's key from its hash is its whole key, and the working set still tells rows apart",
          "[network]") {
    ScheduleFeatures row = test::root_kernel_row();
    const RowCostCache::Prefix p = RowCostCache::prefix(3, row);
    CHECK(RowCostCache::key(p, row).a == RowCostCache::key(3, row).a);
    CHECK(RowCostCache::key(p, row).b == RowCostCache::key(3, row).b);
    ScheduleFeatures larger = row;
    larger[ScheduleFeature::working_set_at_root] =
        std::nextafter(row[ScheduleFeature::working_set_at_root], 1e300);
    // The hash leaves the working set out, so it is the same; the key is not.
    CHECK(RowCostCache::prefix(3, larger).a == p.a);
    RowCostCache cache(4);
    cache.store(RowCostCache::key(p, row), 1.5);
    double c = 0;
    CHECK_FALSE(cache.lookup(RowCostCache::key(p, larger), c));
    CHECK_FALSE(cache.lookup(RowCostCache::key(RowCostCache::prefix(4, row), row), c));
}

TEST_CASE("row cache: states that carry row hashes cost the same as states that do not", "[network]") {
    auto m = make_cost_model(nlohmann::json::object(), test::h100());
    auto *net = dynamic_cast<NetworkCostModel *>(m.get());
    REQUIRE(net != nullptr);
    std::mt19937_64 rng(9);
    const test::SyntheticBatch batch = test::synthetic_batch(rng, 20);
    m->set_pipeline(batch.pipeline.stages);
    std::vector<StateFeatures> hashed = batch.states;
    for (StateFeatures &s : hashed)
        for (std::size_t i = 0; i < s.schedule.size(); ++i)
            s.row_hashes.push_back(RowCostCache::prefix(s.stage_ids[i], s.schedule[i]));
    std::vector<const StateFeatures *> with;
    for (const StateFeatures &s : hashed)
        with.push_back(&s);
    std::vector<double> from_hashes, whole;
    m->evaluate(with, from_hashes);
    const uint64_t misses = net->row_cache().misses();
    CHECK(misses > 0);
    m->evaluate(batch.pointers(), whole); // the same rows hashed whole: all hits
    CHECK(net->row_cache().misses() == misses);
    const std::vector<double> expected = uncached_costs(net->evaluator(), batch.states);
    for (std::size_t i = 0; i < hashed.size(); ++i) {
        CHECK(from_hashes[i] == Approx(expected[i]).epsilon(1e-12));
        CHECK(whole[i] == from_hashes[i]);
    }
}
