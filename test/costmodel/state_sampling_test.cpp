// StateSamplingCostModel: the dump of searched states the default weights
// are fitted on. It must not change any cost, must keep a bounded, seeded
// sample, and must write a feature-rows file that reads back.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "costmodel/feature_rows_file.h"
#include "costmodel/make_cost_model.h"
#include "costmodel/state_sampling_cost_model.h"
#include "fixtures.h"

using namespace gpusched;

namespace {

std::vector<StateFeatures> some_states(const SyntheticPipeline &p, int n) {
    std::mt19937_64 rng(7);
    std::vector<StateFeatures> v;
    for (int i = 0; i < n; i++) v.push_back(random_synthetic_state(p, test::h100(), rng));
    return v;
}

std::vector<const StateFeatures *> pointers(const std::vector<StateFeatures> &v) {
    std::vector<const StateFeatures *> r;
    for (const StateFeatures &s : v) r.push_back(&s);
    return r;
}

} // namespace

TEST_CASE("state sampling returns exactly the wrapped model's costs and keeps at most its capacity", "[sampling]") {
    std::mt19937_64 rng(3);
    SyntheticPipeline p = random_synthetic_pipeline(rng);
    std::vector<StateFeatures> states = some_states(p, 50);

    auto plain = make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100());
    plain->set_pipeline(p.stages);
    std::vector<double> expected;
    plain->evaluate(pointers(states), expected);

    StateSamplingCostModel sampler(make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100()), 8, 1);
    sampler.set_pipeline(p.stages);
    std::vector<double> got;
    for (int batch = 0; batch < 5; batch++) {
        std::vector<const StateFeatures *> all = pointers(states);
        std::vector<const StateFeatures *> part(all.begin() + batch * 10, all.begin() + (batch + 1) * 10);
        std::vector<double> c;
        sampler.evaluate(part, c);
        got.insert(got.end(), c.begin(), c.end());
    }
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); i++) CHECK(got[i] == expected[i]);
    CHECK(sampler.states_seen() == 50);
    CHECK(sampler.sample().size() == 8);
}

TEST_CASE("state sampling is deterministic per seed and its file reads back as one pipeline", "[sampling]") {
    std::mt19937_64 rng(5);
    SyntheticPipeline p = random_synthetic_pipeline(rng);
    std::vector<StateFeatures> states = some_states(p, 40);
    auto sample_of = [&](uint64_t seed) {
        StateSamplingCostModel s(make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100()), 6, seed);
        s.set_pipeline(p.stages);
        std::vector<double> c;
        s.evaluate(pointers(states), c);
        return s;
    };
    StateSamplingCostModel a = sample_of(11), b = sample_of(11);
    REQUIRE(a.sample().size() == 6);
    for (size_t i = 0; i < 6; i++) CHECK(a.sample()[i].stage_ids == b.sample()[i].stage_ids);

    const std::string path = std::string(GPUSCHED_COSTMODEL_TEST_TMP) + "/sampled_states.rows";
    a.write(path);
    std::vector<PipelineSamples> back = read_feature_rows(path);
    REQUIRE(back.size() == 1);
    REQUIRE(back[0].states.size() == 6);
    CHECK(std::isnan(back[0].runtimes_ms[0]));
    CHECK(back[0].states[3].schedule.size() == a.sample()[3].schedule.size());
    CHECK(back[0].stages.size() == p.stages.size());
}
