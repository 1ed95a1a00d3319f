// `gpusched retrain` on a real SQLite file. No GPU here, so the "measured"
// runtimes are the analytic GPU model's predictions for synthetic states
// (costmodel/tools/synthetic_states.h), scaled per pipeline: a stand-in
// teacher with known structure, stored exactly as benchmarks would be.

#include <algorithm>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "test/catch2_compat.h"
#include <sqlite3.h>

#include "common/gpu_profile.h"
#include "costmodel/analytic_cost_model.h"
#include "costmodel/cost_formula.h"
#include "costmodel/default_weights.h"
#include "costmodel/featurization_blob.h"
#include "costmodel/tools/synthetic_states.h"
#include "costmodel/training.h"
#include "costmodel/weights_file.h"
#include "db/sample_store.h"
#include "test_support.h"
#include "tuner/modes/training_groups.h"
#include "tuner/subprocess.h"

using namespace gpusched;

namespace {

// Fills a database with `pipelines` pipelines of `per_pipeline` samples
// each. With `structures` > 1 a pipeline's samples take turns among that
// many stage lists, as a pipeline's samples do where some split a
// reduction (its intermediate is one more stage).
void fill_database(const std::string &path, int pipelines, int per_pipeline, int structures = 1) {
    db::Database database = db::Database::open(path);
    db::SampleStore store(database);
    GpuProfile gpu = *find_builtin_gpu_profile("h100");
    std::mt19937_64 rng(7);
    for (int p = 0; p < pipelines; ++p) {
        std::vector<SyntheticPipeline> pipes;
        for (int k = 0; k < structures; ++k)
            pipes.push_back(random_synthetic_pipeline(rng));
        db::PipelineIdentity id{
            "/synthetic.gen", "hash", "synthetic_" + std::to_string(p), "{}", "t", "h100"};
        db::RunInfo run{store.upsert_pipeline(id), "autotune", "gpusched", "{}", "test"};
        int64_t run_id = store.start_run(run);
        for (int i = 0; i < per_pipeline; ++i) {
            const SyntheticPipeline &pipe = pipes[static_cast<std::size_t>(i % structures)];
            AnalyticGpuCostModel teacher(gpu);
            teacher.set_pipeline(pipe.stages);
            StateFeatures state = random_synthetic_state(pipe, gpu, rng);
            std::vector<double> cost;
            teacher.evaluate({&state}, cost);
            db::SampleRow row;
            row.idx = i;
            auto blob = serialize_featurization(pipe.stages, state);
            row.featurization.assign(blob.begin(), blob.end());
            row.runtime_median_ms = cost[0] * 1.7; // a GPU that is uniformly slower than the model thinks
            row.ptxas_status = "checked";
            store.add_sample(run_id, row);
        }
        store.finish_run(run_id, "finished", std::nullopt);
    }
}

} // namespace

TEST_CASE("retrain trains on benchmarked samples, writes loadable weights and records them", "[retrain]") {
    test::TempDir dir;
    fill_database(dir / "db.sqlite", 4, 24);
    auto r = test::run_gpusched(
        {"retrain", "--db", dir / "db.sqlite", "--all", "--epochs", "20", "-o", dir / "w.weights"});
    INFO(r.out << r.err);
    REQUIRE(r.ok());
    CHECK(r.out.find("Trained on 96 samples of 4 pipelines") != std::string::npos);
    WeightsFile w = read_weights_file(dir / "w.weights");
    CHECK(w.provenance.find("retrained by gpusched retrain") != std::string::npos);
    db::Database database = db::Database::open(dir / "db.sqlite");
    auto q = database.prepare("SELECT count(*) FROM weights");
    q.step();
    CHECK(q.column_int(0) == 1);
}

TEST_CASE("retrain of one pipeline uses only its samples", "[retrain]") {
    test::TempDir dir;
    fill_database(dir / "db.sqlite", 3, 10);
    auto r = test::run_gpusched({"--json", "retrain", "--db", dir / "db.sqlite", "--pipeline", "synthetic_1",
                                 "--epochs", "5", "-o", dir / "w.weights"});
    INFO(r.err);
    REQUIRE(r.ok());
    CHECK(r.out.find("\"samples\": 10") != std::string::npos);
}

TEST_CASE("retrain trains on a pipeline whose samples have two stage structures as one group", "[retrain]") {
    // Before: "sample N has a different stage count than its pipeline's
    // other samples", and Autotune never retrained such a pipeline.
    test::TempDir dir;
    fill_database(dir / "db.sqlite", 2, 12, 2);
    auto r = test::run_gpusched(
        {"--json", "retrain", "--db", dir / "db.sqlite", "--all", "--epochs", "5", "-o", dir / "w.weights"});
    INFO(r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["samples"] == 24);
    CHECK(j["pipelines"] == 2); // each pipeline's two structures train together
}

TEST_CASE("grouping a pipeline's samples of two stage structures keeps every sample's prediction",
          "[retrain]") {
    const GpuProfile gpu = *find_builtin_gpu_profile("h100");
    std::mt19937_64 rng(3);
    // An unsplit pipeline and one with an extra stage, as a split reduction's intermediate adds.
    const SyntheticPipeline a = random_synthetic_pipeline(rng), b = random_synthetic_pipeline(rng);
    std::vector<db::MeasuredSample> measured;
    std::vector<PipelineSamples> alone(2);
    for (int i = 0; i < 10; ++i) {
        const SyntheticPipeline &p = i % 2 ? b : a;
        const StateFeatures state = random_synthetic_state(p, gpu, rng);
        db::MeasuredSample m;
        m.sample_id = i + 1;
        m.pipeline_id = 7;
        m.generator_name = "split_or_not";
        m.runtime_ms = 1.0 + i;
        const auto blob = serialize_featurization(p.stages, state);
        m.featurization.assign(blob.begin(), blob.end());
        measured.push_back(m);
        PipelineSamples &own = alone[static_cast<std::size_t>(i % 2)];
        own.stages = p.stages;
        own.states.push_back(state);
        own.runtimes_ms.push_back(m.runtime_ms);
    }
    const std::vector<TrainingGroup> groups = group_for_training(measured, "test");
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].samples.states.size() == 10);
    CHECK(groups[0].samples.stages.size() == a.stages.size() + b.stages.size());
    const WeightsFile w = default_weights();
    const FormulaContext ctx = formula_context_for(gpu);
    const std::vector<double> together = predict_runtimes(w.weights, groups[0].samples, ctx);
    const std::vector<double> unsplit = predict_runtimes(w.weights, alone[0], ctx);
    const std::vector<double> split = predict_runtimes(w.weights, alone[1], ctx);
    for (std::size_t i = 0; i < 10; ++i) {
        INFO("sample " << i);
        CHECK(groups[0].measured[i] == i);
        CHECK(together[i] == Approx(i % 2 ? split[i / 2] : unsplit[i / 2]).epsilon(1e-12));
    }
}

TEST_CASE("retrain with no benchmarked samples says what is missing", "[retrain][bad-input]") {
    test::TempDir dir;
    { db::Database::open(dir / "db.sqlite"); }
    auto r = test::run_gpusched({"retrain", "--db", dir / "db.sqlite", "--all", "-o", dir / "w.weights"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("two or more benchmarked samples") != std::string::npos);
}

TEST_CASE("retrain names the sample whose featurization is corrupt", "[retrain][bad-input]") {
    test::TempDir dir;
    fill_database(dir / "db.sqlite", 1, 4);
    sqlite3 *raw = nullptr;
    sqlite3_open((dir / "db.sqlite").c_str(), &raw);
    sqlite3_exec(raw, "UPDATE samples SET featurization = x'0102030405' WHERE id = 3", nullptr, nullptr,
                 nullptr);
    sqlite3_close(raw);
    auto r = test::run_gpusched({"retrain", "--db", dir / "db.sqlite", "--all", "-o", dir / "w.weights"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("sample 3") != std::string::npos);
}

TEST_CASE("retrain refuses samples of several devices unless one is chosen, and then trains on it alone",
          "[retrain][bad-input]") {
    test::TempDir dir;
    fill_database(dir / "db.sqlite", 2, 8);
    sqlite3 *raw = nullptr;
    sqlite3_open((dir / "db.sqlite").c_str(), &raw);
    // Pipeline 1 measured on a GPU, pipeline 2 on POCL.
    sqlite3_exec(raw,
                 "UPDATE samples SET device = 'NVIDIA H100', benchmark = 'measured' WHERE run_id = 1;"
                 "UPDATE samples SET device = 'pocl-AMD EPYC', benchmark = 'measured' WHERE run_id = 2;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    auto mixed =
        test::run_gpusched({"retrain", "--db", dir / "db.sqlite", "--all", "--epochs", "2", "-o", dir / "w"});
    CHECK(mixed.exit_code == 1);
    CHECK(mixed.err.find("2 devices (NVIDIA H100, pocl-AMD EPYC)") != std::string::npos);
    auto one = test::run_gpusched({"--json", "retrain", "--db", dir / "db.sqlite", "--all", "--device",
                                   "NVIDIA H100", "--epochs", "2", "-o", dir / "w"});
    INFO(one.err);
    REQUIRE(one.ok());
    CHECK(one.out.find("\"samples\": 8") != std::string::npos);
}

TEST_CASE("retrain without --pipeline or --all is a usage error: one line, exit 2", "[retrain][bad-input]") {
    test::TempDir dir;
    auto r = test::run_gpusched({"retrain", "--db", dir / "db.sqlite", "-o", dir / "w.weights"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("say --pipeline NAME or --all") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir / "w.weights"));
}
