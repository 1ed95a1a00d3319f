// `gpusched learning` on a real SQLite file. No GPU here, so the "measured"
// runtimes of synthetic states (costmodel/tools/synthetic_states.h) are
// the analytic GPU model's predictions, or the default weights' own
// predictions (which those weights must rank perfectly), or their reverse:
// stored exactly as Autotune's batches would be.

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>

#include "test/catch2_compat.h"

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
#include "tuner/subprocess.h"

using namespace gpusched;

namespace {

enum class Times { Analytic, DefaultWeights, ReversedDefaultWeights };

// What the default weights predict for the states (ms).
std::vector<double> default_predictions(const SyntheticPipeline &pipe,
                                        const std::vector<StateFeatures> &states) {
    const WeightsFile w = default_weights();
    FormulaContext ctx = formula_context_for(*find_builtin_gpu_profile("h100"));
    ctx.version = w.formula_version;
    PipelineSamples s;
    s.stages = pipe.stages;
    s.states = states;
    s.runtimes_ms.assign(states.size(), 1.0);
    return predict_runtimes(w.weights, s, ctx);
}

// `pipelines` pipelines, each one Autotune run of `batches` batches of
// `per_batch` samples measured on `device`.
void fill_batches(const std::string &path, int pipelines, int batches, int per_batch, Times source,
                  const std::string &device = "NVIDIA H100") {
    db::Database database = db::Database::open(path);
    db::SampleStore store(database);
    const GpuProfile gpu = *find_builtin_gpu_profile("h100");
    std::mt19937_64 rng(11);
    for (int p = 0; p < pipelines; ++p) {
        SyntheticPipeline pipe = random_synthetic_pipeline(rng);
        AnalyticGpuCostModel teacher(gpu);
        teacher.set_pipeline(pipe.stages);
        db::PipelineIdentity id{
            "/synthetic.gen", "hash", "synthetic_" + std::to_string(p), "{}", "t", "h100"};
        const int64_t run_id =
            store.start_run({store.upsert_pipeline(id), "autotune", "gpusched", "{}", "test"});
        for (int b = 0; b < batches; ++b) {
            std::vector<StateFeatures> states;
            std::vector<double> times;
            for (int i = 0; i < per_batch; ++i) {
                states.push_back(random_synthetic_state(pipe, gpu, rng));
                std::vector<double> cost;
                teacher.evaluate({&states.back()}, cost);
                times.push_back(cost[0] * 1.7);
            }
            if (source != Times::Analytic) {
                times = default_predictions(pipe, states);
                if (source == Times::ReversedDefaultWeights)
                    for (double &t : times)
                        t = 1.0 / t;
            }
            for (int i = 0; i < per_batch; ++i) {
                db::SampleRow row;
                row.batch = b;
                row.idx = i;
                auto blob = serialize_featurization(pipe.stages, states[static_cast<std::size_t>(i)]);
                row.featurization.assign(blob.begin(), blob.end());
                row.runtime_median_ms = times[static_cast<std::size_t>(i)];
                row.ptxas_status = "checked";
                row.device = device;
                row.benchmark = "measured";
                store.add_sample(run_id, row);
            }
        }
        store.finish_run(run_id, "finished", std::nullopt);
    }
}

nlohmann::json learning(const std::string &db_path, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "learning", "--db", db_path, "--epochs", "8", "-j", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = test::run_gpusched(args);
    INFO(r.err);
    REQUIRE(r.ok());
    return nlohmann::json::parse(r.out);
}

} // namespace

TEST_CASE("learning holds each pipeline out and judges both models on its own batches", "[learning]") {
    test::TempDir dir;
    fill_batches(dir / "db.sqlite", 3, 3, 6, Times::Analytic);
    const nlohmann::json j = learning(dir / "db.sqlite", {"--curve", "1,2,8"});
    CHECK(j["device"] == "NVIDIA H100");
    REQUIRE(j["pipelines"].size() == 3);
    for (const auto &p : j["pipelines"]) {
        INFO(p.dump());
        CHECK(p["samples"] == 18);
        CHECK(p["batches"] == 3);
        CHECK(p["held_out_trained_on"] == 36); // the other two pipelines, never its own
        for (const char *model : {"start", "held_out"}) {
            const auto &f = p[model];
            CHECK(f["kendall"].get<double>() >= -1);
            CHECK(f["kendall"].get<double>() <= 1);
            CHECK(f["pick_over_best"].get<double>() >= 1);
            CHECK(f["top1"].get<double>() <= f["top5"].get<double>());
            CHECK(f["top5"].get<double>() <= 1);
        }
        // Curve points 1 and 2 (8 exceeds the 3 batches any run has).
        CHECK(p["curve"].size() == 2);
        // Autotune's loop: batches 1 and 2, each after retraining on the ones before.
        CHECK(p["in_run_batches"] == 2);
        CHECK(p["in_run"]["kendall"].get<double>() >= -1);
        CHECK(p["in_run_start"]["kendall"].get<double>() <= 1);
    }
    // The starting weights, then the first 1 and 2 batches of each other
    // pipeline (6 and 12 samples each, 2 pipelines, 3 models), then all.
    const auto &curve = j["curve"];
    REQUIRE(curve.size() == 4);
    CHECK(curve[0]["batches"] == 0);
    CHECK(curve[0]["trained_on"] == 0);
    CHECK(curve[1]["batches"] == 1);
    CHECK(curve[1]["trained_on"] == 36);
    CHECK(curve[2]["batches"] == 2);
    CHECK(curve[2]["trained_on"] == 72);
    CHECK(curve[3]["all_batches"] == true);
    CHECK(curve[3]["trained_on"] == 108);
}

TEST_CASE("learning judges the starting weights by their own predictions as perfect and by the reverse as "
          "worst",
          "[learning]") {
    test::TempDir dir;
    fill_batches(dir / "same.sqlite", 2, 2, 8, Times::DefaultWeights);
    fill_batches(dir / "reversed.sqlite", 2, 2, 8, Times::ReversedDefaultWeights);
    const nlohmann::json same = learning(dir / "same.sqlite", {"--curve", "1"})["mean_start"];
    const nlohmann::json reversed = learning(dir / "reversed.sqlite", {"--curve", "1"})["mean_start"];
    INFO(same.dump() << "\n" << reversed.dump());
    CHECK(same["kendall"].get<double>() == Approx(1));
    CHECK(same["pairwise_accuracy"].get<double>() == Approx(1));
    CHECK(same["pick_over_best"].get<double>() == Approx(1));
    CHECK(same["top1"].get<double>() == Approx(1));
    CHECK(reversed["kendall"].get<double>() == Approx(-1));
    CHECK(reversed["pairwise_accuracy"].get<double>() == Approx(0));
    CHECK(reversed["pick_over_best"].get<double>() > 1.5); // the slowest sample of each batch
    CHECK(reversed["top1"].get<double>() < 0.7);
}

TEST_CASE("learning refuses databases of two devices unless one is chosen", "[learning][bad-input]") {
    test::TempDir dir;
    fill_batches(dir / "h100.sqlite", 2, 1, 4, Times::Analytic, "NVIDIA H100");
    fill_batches(dir / "pocl.sqlite", 2, 1, 4, Times::Analytic, "pocl-AMD EPYC");
    const ProcessResult mixed = test::run_gpusched(
        {"learning", "--db", dir / "h100.sqlite", "--db", dir / "pocl.sqlite", "--epochs", "2"});
    CHECK(mixed.exit_code == 1);
    CHECK(mixed.err.find("2 devices (NVIDIA H100, pocl-AMD EPYC)") != std::string::npos);
    const nlohmann::json one =
        learning(dir / "h100.sqlite", {"--db", dir / "pocl.sqlite", "--device", "pocl-AMD EPYC"});
    CHECK(one["device"] == "pocl-AMD EPYC");
    CHECK(one["pipelines"].size() == 2);
}

TEST_CASE("learning refuses a database without two pipelines of measured batches", "[learning][bad-input]") {
    test::TempDir dir;
    fill_batches(dir / "one.sqlite", 1, 2, 4, Times::Analytic);
    const ProcessResult r = test::run_gpusched({"learning", "--db", dir / "one.sqlite"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("hold-one-out needs two or more pipelines") != std::string::npos);
    const ProcessResult missing = test::run_gpusched({"learning", "--db", dir / "absent.sqlite"});
    CHECK(missing.exit_code != 0);
    CHECK(missing.err.find("absent.sqlite") != std::string::npos);
}

TEST_CASE("report --learning draws figure 8 and the learning curve from the same figures",
          "[learning][report]") {
    test::TempDir dir;
    fill_batches(dir / "db.sqlite", 3, 3, 6, Times::Analytic);
    const ProcessResult r = test::run_gpusched(
        {"report", "--db", dir / "db.sqlite", "--learning", "-j", "2", "-o", dir / "report.html"});
    INFO(r.err);
    REQUIRE(r.ok());
    const std::string html = test::read_file(dir / "report.html");
    CHECK(html.find("<section class=\"card\" id=\"learning\" data-pipelines=\"3\">") != std::string::npos);
    // Per pipeline: the default weights, hold-one-out and Autotune's loop (3 batches: judged from the
    // second).
    CHECK(html.find("data-kind=\"learning-pick\" data-points=\"9\"") != std::string::npos);
    // Kendall and top-1 at 0 (the default weights), 1, 2 and all 3 batches.
    CHECK(html.find("data-kind=\"learning-curve\" data-points=\"8\"") != std::string::npos);
    // Without --learning, no training and no section.
    const ProcessResult plain =
        test::run_gpusched({"report", "--db", dir / "db.sqlite", "-o", dir / "plain.html"});
    REQUIRE(plain.ok());
    CHECK(test::read_file(dir / "plain.html").find("id=\"learning\"") == std::string::npos);
}
