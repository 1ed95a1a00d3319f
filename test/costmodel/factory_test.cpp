// make_cost_model: what the plugin's config selects, and clear errors.
#include "test/catch2_compat.h"

#include <nlohmann/json.hpp>

#include "costmodel/analytic_cost_model.h"
#include "costmodel/default_weights.h"
#include "costmodel/make_cost_model.h"
#include "costmodel/network_cost_model.h"
#include "fixtures.h"

using namespace gpusched;
using nlohmann::json;

TEST_CASE("factory: empty config gives the network with the embedded default weights", "[factory]") {
    auto m = make_cost_model(json::object(), test::h100());
    auto *net = dynamic_cast<NetworkCostModel *>(m.get());
    REQUIRE(net != nullptr);
    CHECK(net->provenance() == default_weights_provenance());
    CHECK(std::string(default_weights_provenance()).size() > 20);
}

TEST_CASE("factory: \"analytic\" gives the analytic model", "[factory]") {
    auto m = make_cost_model(json{{"cost_model", "analytic"}}, test::h100());
    CHECK(dynamic_cast<AnalyticGpuCostModel *>(m.get()) != nullptr);
}

TEST_CASE("factory: both models predict finite positive costs for a state", "[factory]") {
    for (const char *kind : {"network", "analytic"}) {
        auto m = make_cost_model(json{{"cost_model", kind}}, test::h100());
        m->set_pipeline({test::simple_pipeline_stage()});
        StateFeatures s;
        s.stage_ids = {0};
        s.schedule = {test::root_kernel_row()};
        std::vector<double> c;
        std::vector<std::vector<double>> per;
        m->evaluate({&s, &s}, c, &per);
        REQUIRE(c.size() == 2);
        CHECK(std::isfinite(c[0]));
        CHECK(c[0] > 0);
        CHECK(c[0] == c[1]);
        CHECK(per[0].size() == 1);
    }
}

TEST_CASE("factory: unknown cost_model value is an error naming the key", "[factory]") {
    CHECK_THROWS_WITH(make_cost_model(json{{"cost_model", "magic"}}, test::h100()),
                      Catch::Contains("\"cost_model\"") && Catch::Contains("magic"));
    CHECK_THROWS_WITH(make_cost_model(json{{"cost_model", 3}}, test::h100()),
                      Catch::Contains("\"cost_model\""));
}

TEST_CASE("factory: a bad weights_path is an error naming the key and the file", "[factory]") {
    CHECK_THROWS_WITH(make_cost_model(json{{"weights_path", 5}}, test::h100()),
                      Catch::Contains("\"weights_path\""));
    CHECK_THROWS_WITH(make_cost_model(json{{"weights_path", "/nonexistent/w.weights"}}, test::h100()),
                      Catch::Contains("\"weights_path\"") && Catch::Contains("/nonexistent/w.weights"));
}

TEST_CASE("factory: a config that is not an object is an error", "[factory]") {
    CHECK_THROWS_AS(make_cost_model(json::array({1, 2}), test::h100()), std::runtime_error);
}

TEST_CASE("network cost model: batching does not change any state's cost", "[network]") {
    auto m = make_cost_model(json::object(), test::h100());
    std::mt19937_64 rng(11);
    const test::SyntheticBatch batch = test::synthetic_batch(rng, 40);
    m->set_pipeline(batch.pipeline.stages);
    const std::vector<StateFeatures> &states = batch.states;
    const std::vector<const StateFeatures *> all = batch.pointers();
    std::vector<double> batched, single;
    m->evaluate(all, batched);
    for (std::size_t i = 0; i < states.size(); ++i) {
        m->evaluate({&states[i]}, single);
        CHECK(single[0] == batched[i]);
    }
}

TEST_CASE("network cost model: a stage id outside the pipeline is an error, not a crash", "[network]") {
    auto m = make_cost_model(json::object(), test::h100());
    m->set_pipeline({test::simple_pipeline_stage()});
    StateFeatures s;
    s.stage_ids = {3};
    s.schedule = {test::root_kernel_row()};
    std::vector<double> c;
    CHECK_THROWS_AS(m->evaluate({&s}, c), std::out_of_range);
}
