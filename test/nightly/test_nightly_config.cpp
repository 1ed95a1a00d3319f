// The nightly config: the documented example parses (so docs/examples
// cannot rot), relative paths follow the config file, and every bad field is
// refused with one line naming the file and the field.

#include "test/catch2_compat.h"

#include "tuner/modes/nightly/nightly_config.h"

using namespace gpusched;

namespace {

const std::string kGood = R"({
  "database": "db.sqlite", "schedules": "schedules", "work_dir": "work", "budget": "1h30m",
  "pipelines": [
    {"generator": "gen", "generator_name": "tiny_stencil", "gpu": "h100", "device": "opencl", "mode": "top5"},
    {"name": "rows", "generator": "/abs/gen", "generator_name": "row_sums", "params": {"width": 128},
     "gpu": "a100", "device": "cuda", "mode": "autotune", "iterations": 3, "share": 2}
  ]
})";

// The error for kGood with one field replaced (JSON text of the new value).
std::string error_for(const std::string &from, const std::string &to) {
    std::string text = kGood;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    try {
        parse_nightly_config(text, "/etc/gpusched/nightly.json");
    } catch (const ConfigError &e) {
        return e.what();
    }
    return "(accepted)";
}

} // namespace

TEST_CASE("the example nightly config in docs/examples parses with its three pipelines",
          "[nightly][config]") {
    const NightlyConfig c =
        load_nightly_config(std::string(GPUSCHED_SOURCE_DIR) + "/docs/examples/nightly.json");
    REQUIRE(c.pipelines.size() == 3);
    CHECK(c.budget_s == 6 * 3600);
    CHECK(c.pipelines[0].mode == NightlyMode::Autotune);
    CHECK(c.pipelines[0].share == 2);
    CHECK(c.pipelines[0].baselines == std::vector<std::string>{"li2018"});
    CHECK(c.pipelines[2].baselines == std::vector<std::string>{"li2018", "naive"});
    CHECK(c.pipelines[2].mode == NightlyMode::Top5);
    CHECK(c.pipelines[2].params.at("width") == "1536");
    CHECK(c.report == "/srv/gpusched/reports/nightly.html");
    CHECK(c.lock == "/srv/gpusched/schedules/.nightly.lock");
}

TEST_CASE("a nightly config's relative paths are resolved against the config file's folder",
          "[nightly][config]") {
    const NightlyConfig c = parse_nightly_config(kGood, "/etc/gpusched/nightly.json");
    CHECK(c.database == "/etc/gpusched/db.sqlite");
    CHECK(c.pipelines[0].generator_path == "/etc/gpusched/gen");
    CHECK(c.pipelines[1].generator_path == "/abs/gen");
    CHECK(c.pipelines[0].name == "tiny_stencil"); // defaults to the generator name
    CHECK(c.budget_s == 5400);
    CHECK(c.pipelines[1].device == DeviceKind::Cuda);
}

TEST_CASE("a nightly config with a bad field is refused naming the file and the field", "[nightly][config]") {
    const std::string file = "/etc/gpusched/nightly.json: field ";
    CHECK(error_for(R"("mode": "top5")", R"("mode": "fast")") ==
          file + "'pipelines[0].mode': \"fast\" is not top5 or autotune");
    CHECK(error_for(R"("budget": "1h30m")", R"("budget": "tonight")").rfind(file + "'budget':", 0) == 0);
    CHECK(error_for(R"("budget": "1h30m")", R"("budget": -5)").rfind(file + "'budget':", 0) == 0);
    CHECK(error_for(R"("iterations": 3)", R"("iterations": 0)") ==
          file + "'pipelines[1].iterations': 0 is out of range (1 to 100000)");
    CHECK(error_for(R"("iterations": 3)", R"("itrations": 3)") ==
          file + "'pipelines[1].itrations': is not a known field (misspelt?)");
    CHECK(error_for(R"("gpu": "h100")", R"("gpu": "h900")")
              .rfind(file + "'pipelines[0].gpu': \"h900\" is not", 0) == 0);
    CHECK(error_for(R"("device": "cuda")", R"("device": "rocm")") ==
          file + "'pipelines[1].device': \"rocm\" is not cuda or opencl");
    CHECK(error_for(R"("database": "db.sqlite", )", "") == file + "'database': is missing");
    CHECK(error_for(R"("name": "rows")", R"("name": "../rows")").rfind(file + "'pipelines[1].name':", 0) ==
          0);
    CHECK(
        error_for(R"("name": "rows")", R"("name": "tiny_stencil")").rfind(file + "'pipelines[1].name':", 0) ==
        0);
    // A Top 5 field on an autotune pipeline is not silently ignored.
    CHECK(error_for(R"("share": 2)", R"("share": 2, "top": 3)") ==
          file + "'pipelines[1].top': is not a known field (misspelt?)");
    CHECK(error_for(R"("width": 128)", R"("width": [128])") ==
          file + "'pipelines[1].params.width': must be a string, number or boolean");
    CHECK(error_for(R"("budget": "1h30m")", R"("budget": "1h30m", "retrain": {"epochs": "many"})") ==
          file + "'retrain.epochs': must be a whole number");
    CHECK(error_for(R"("mode": "top5")", R"("mode": "top5", "baselines": ["li2018", "halide"])") ==
          file + "'pipelines[0].baselines': \"halide\" is not li2018, naive or manual");
    // Every message is one line.
    CHECK(error_for(R"("mode": "top5")", R"("mode": 5)").find('\n') == std::string::npos);
}

TEST_CASE("a nightly config's executor section names Slurm's options, and a bad one is refused by field",
          "[nightly][config]") {
    std::string text = kGood;
    text.replace(text.find(R"("budget": "1h30m")"), 17,
                 R"("budget": "1h30m", "executor": {"kind": "slurm", "work_dir": "jobs", "partition": "gpu",
                    "gres": "gpu:1", "time_limit": "00:30:00", "max_attempts": 2})");
    const NightlyConfig c = parse_nightly_config(text, "/etc/gpusched/nightly.json");
    CHECK(c.executor == "slurm");
    CHECK(c.slurm.work_dir == "/etc/gpusched/jobs");
    CHECK(c.slurm.partition == "gpu");
    CHECK(c.slurm.gres == "gpu:1");
    CHECK(c.slurm.time_limit == "00:30:00");
    CHECK(c.slurm.max_attempts == 2);
    CHECK(parse_nightly_config(kGood, "/etc/gpusched/nightly.json").executor == "local");

    const std::string file = "/etc/gpusched/nightly.json: field ";
    CHECK(error_for(R"("budget": "1h30m")", R"("budget": "1h30m", "executor": {"kind": "pbs"})") ==
          file + "'executor.kind': \"pbs\" is not local or slurm");
    CHECK(error_for(R"("budget": "1h30m")", R"("budget": "1h30m", "executor": {"kind": "slurm"})") ==
          file + "'executor.work_dir': is missing");
    CHECK(error_for(R"("budget": "1h30m")",
                    R"("budget": "1h30m", "executor": {"kind": "slurm", "work_dir": "j", "queue": "gpu"})") ==
          file + "'executor.queue': is not a known field (misspelt?)");
}

TEST_CASE("a nightly config gives baselines to autotune pipelines as to top5 ones", "[nightly][config]") {
    std::string text = kGood;
    const std::string from = R"("iterations": 3)";
    text.replace(text.find(from), from.size(), R"("iterations": 3, "baselines": ["li2018", "naive"])");
    const NightlyConfig c = parse_nightly_config(text, "/etc/gpusched/nightly.json");
    REQUIRE(c.pipelines[1].mode == NightlyMode::Autotune);
    CHECK(c.pipelines[1].baselines == std::vector<std::string>{"li2018", "naive"});
    CHECK(c.pipelines[0].baselines.empty());
}
