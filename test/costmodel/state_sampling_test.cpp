// StateSamplingCostModel: the dump of searched states the default weights
// are fitted on. It must not change any cost, must keep a bounded, seeded
// sample, and must write a feature-rows file that reads back.
#include "test/catch2_compat.h"

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
    for (int i = 0; i < n; i++)
        v.push_back(random_synthetic_state(p, test::h100(), rng));
    return v;
}

std::vector<const StateFeatures *> pointers(const std::vector<StateFeatures> &v) {
    std::vector<const StateFeatures *> r;
    for (const StateFeatures &s : v)
        r.push_back(&s);
    return r;
}

bool same_state(const StateFeatures &a, const StateFeatures &b) {
    if (a.stage_ids != b.stage_ids || a.schedule.size() != b.schedule.size()) return false;
    for (size_t r = 0; r < a.schedule.size(); r++)
        if (a.schedule[r].values != b.schedule[r].values) return false;
    return true;
}

// Which of `states` each sampled state is (-1: none of them).
std::vector<int> indices_in(const std::vector<StateFeatures> &sample,
                            const std::vector<StateFeatures> &states) {
    std::vector<int> r;
    for (const StateFeatures &s : sample) {
        int found = -1;
        for (size_t i = 0; i < states.size() && found < 0; i++)
            if (same_state(s, states[i])) found = static_cast<int>(i);
        r.push_back(found);
    }
    return r;
}

} // namespace

TEST_CASE("state sampling returns exactly the wrapped model's costs and keeps at most its capacity",
          "[sampling]") {
    std::mt19937_64 rng(3);
    SyntheticPipeline p = random_synthetic_pipeline(rng);
    std::vector<StateFeatures> states = some_states(p, 50);

    auto plain = make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100());
    plain->set_pipeline(p.stages);
    std::vector<double> expected;
    plain->evaluate(pointers(states), expected);

    StateSamplingCostModel sampler(make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100()),
                                   8, 1);
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
    for (size_t i = 0; i < got.size(); i++)
        CHECK(got[i] == expected[i]);
    CHECK(sampler.states_seen() == 50);
    CHECK(sampler.sample().size() == 8);
}

TEST_CASE("state sampling is deterministic per seed and its file reads back as one pipeline", "[sampling]") {
    std::mt19937_64 rng(5);
    SyntheticPipeline p = random_synthetic_pipeline(rng);
    std::vector<StateFeatures> states = some_states(p, 40);
    auto sample_of = [&](uint64_t seed) {
        StateSamplingCostModel s(make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100()), 6,
                                 seed);
        s.set_pipeline(p.stages);
        std::vector<double> c;
        s.evaluate(pointers(states), c);
        return s;
    };
    // Every synthetic state has stage ids 0..n-1: states are told apart by their rows.
    StateSamplingCostModel a = sample_of(11), b = sample_of(11), c = sample_of(12);
    const std::vector<int> in_a = indices_in(a.sample(), states), in_b = indices_in(b.sample(), states),
                           in_c = indices_in(c.sample(), states);
    INFO("seed 11 kept states " << Catch::Detail::stringify(in_a) << " and " << Catch::Detail::stringify(in_b)
                                << ", seed 12 kept " << Catch::Detail::stringify(in_c));
    REQUIRE(in_a.size() == 6);
    for (int i : in_a)
        CHECK(i >= 0);
    CHECK(in_a == in_b); // the same seed keeps the same states in the same slots
    CHECK(in_a != in_c); // another seed keeps others

    const std::string path = std::string(GPUSCHED_COSTMODEL_TEST_TMP) + "/sampled_states.rows";
    a.write(path);
    std::vector<PipelineSamples> back = read_feature_rows(path);
    REQUIRE(back.size() == 1);
    REQUIRE(back[0].states.size() == 6);
    CHECK(std::isnan(back[0].runtimes_ms[0]));
    for (size_t i = 0; i < 6; i++)
        CHECK(same_state(back[0].states[i], a.sample()[i]));
    CHECK(back[0].stages.size() == p.stages.size());
}

TEST_CASE("state sampling keeps one sample per pipeline and goes on with a pipeline set again",
          "[sampling]") {
    // A search costs states of the pipeline as written and of each
    // reduction-split variant; each is a pipeline of its own in the file.
    std::mt19937_64 rng(9);
    SyntheticPipeline p = random_synthetic_pipeline(rng), q = random_synthetic_pipeline(rng);
    REQUIRE(pipeline_features_key(p.stages) != pipeline_features_key(q.stages));
    std::vector<StateFeatures> ps = some_states(p, 12), qs = some_states(q, 3);
    StateSamplingCostModel s(make_cost_model(nlohmann::json{{"cost_model", "analytic"}}, test::h100()), 8, 1);
    std::vector<double> c;
    s.set_pipeline(p.stages);
    s.evaluate(pointers(std::vector<StateFeatures>(ps.begin(), ps.begin() + 5)), c);
    s.set_pipeline(q.stages);
    s.evaluate(pointers(qs), c);
    CHECK(s.states_seen() == 3);
    CHECK(s.sample().size() == 3);
    s.set_pipeline(p.stages); // back to the first: its sample goes on
    s.evaluate(pointers(std::vector<StateFeatures>(ps.begin() + 5, ps.end())), c);
    CHECK(s.states_seen() == 12);
    CHECK(s.sample().size() == 8);
    for (int i : indices_in(s.sample(), ps))
        CHECK(i >= 0);
    CHECK(s.pipelines_sampled() == 2);

    const std::string path = std::string(GPUSCHED_COSTMODEL_TEST_TMP) + "/two_pipelines.rows";
    s.write(path);
    std::vector<PipelineSamples> back = read_feature_rows(path);
    REQUIRE(back.size() == 2);
    // In the order the pipelines were first set, each with its own features.
    CHECK(back[0].states.size() == 8);
    CHECK(back[0].stages.size() == p.stages.size());
    CHECK(back[1].states.size() == 3);
    CHECK(back[1].stages.size() == q.stages.size());
    CHECK(indices_in(back[1].states, qs) == std::vector<int>{0, 1, 2});
}
