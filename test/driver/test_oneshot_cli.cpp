// One Shot through the real gpusched binary, on real generators, with a
// real SQLite file: the happy path and every kind of bad input, each of
// which must exit non-zero with one clear line and leave no row behind.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sqlite3.h>
#include <thread>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "costmodel/default_weights.h"
#include "costmodel/feature_rows_file.h"
#include "costmodel/weights_file.h"
#include "db/database.h"
#include "db/migrations.h"
#include "test_sql.h"
#include "test_support.h"
#include "tuner/cuda_device_query.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

int64_t rows_in(const std::string &db_path, const std::string &table) {
    if (!fs::exists(db_path)) return 0;
    sqlite3 *raw = nullptr;
    sqlite3_open_v2(db_path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *st = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(raw, ("SELECT count(*) FROM " + table).c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return n;
}

// The one-line error a bad input must produce.
void check_refused(const ProcessResult &r, const std::string &must_mention, const std::string &db_path) {
    INFO("stderr: " << r.err);
    CHECK(r.started);
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("error: ") != std::string::npos);
    CHECK(r.err.find(must_mention) != std::string::npos);
    CHECK(rows_in(db_path, "runs") <= 0);
    CHECK(rows_in(db_path, "samples") <= 0);
}

std::vector<std::string> oneshot_args(const test::TempDir &dir, const std::string &gen,
                                      const std::string &name, const std::string &source = "li2018") {
    // Validation has its own tests (test_validation.cpp); here it would only add time.
    return {"oneshot",      gen,  "-g",        name,   "--autoscheduler",
            source,         "-o", dir / "out", "--db", dir / "db.sqlite",
            "--no-validate"};
}

} // namespace

TEST_CASE("oneshot with li2018 compiles, checks the PTX with ptxas and stores the sample", "[oneshot]") {
    test::TempDir dir;
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil"));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    CHECK(r.out.find("ptxas -arch=sm_90 on the chosen sample: checked") != std::string::npos);
    CHECK(r.out.find("registers") != std::string::npos);
    for (const char *f :
         {"tiny_stencil.a", "tiny_stencil.h", "tiny_stencil.schedule.h", "tiny_stencil.registration.cpp"})
        CHECK(fs::exists(dir / ("out/" + std::string(f))));
    CHECK(rows_in(dir / "db.sqlite", "runs") == 1);
    CHECK(rows_in(dir / "db.sqlite", "samples") == 1);
    CHECK(rows_in(dir / "db.sqlite", "kernels") >= 2);

    // The same run is visible through `gpusched db`.
    auto runs = test::run_gpusched({"db", "--db", dir / "db.sqlite", "runs", "--json"});
    REQUIRE(runs.ok());
    auto j = nlohmann::json::parse(runs.out);
    REQUIRE(j.size() == 1);
    CHECK(j[0]["generator"] == "tiny_stencil");
    CHECK(j[0]["autoscheduler"] == "li2018");
    CHECK(j[0]["status"] == "finished");
    CHECK(j[0]["device"].is_null()); // One Shot measures nothing
}

TEST_CASE("oneshot --json reports the run, samples and kernels", "[oneshot]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DEMO_GENERATOR, "demo_sharpen", "naive");
    args.pop_back(); // validate this one: its result is part of the report
    args.push_back("--json");
    args.insert(args.end(), {"--gpu", "a100"});
    auto r = test::run_gpusched(args);
    INFO(r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["gpu"] == "a100");
    CHECK(j["target"] == GPUSCHED_HOST_TARGET "-cuda-cuda_capability_80");
    CHECK(j["run_id"].get<int>() == 1);
    CHECK(j["samples"][0]["validation"]["status"] == "passed");
    REQUIRE(j["samples"].size() == 1);
    CHECK(j["samples"][0]["ptxas"]["arch"] == "sm_80");
    // Every Func gets kernels (Halide may split boundary regions into more).
    std::string names;
    for (const auto &k : j["samples"][0]["ptxas"]["kernels"])
        names += k["name"].get<std::string>() + " ";
    for (const char *f : {"blur_x", "blur_y", "sharpened", "output"})
        CHECK(names.find(f) != std::string::npos);
}

TEST_CASE("repeated runs of one pipeline share its identity", "[oneshot]") {
    test::TempDir dir;
    REQUIRE(test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil")).ok());
    REQUIRE(test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil")).ok());
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args.push_back("width=512");
    REQUIRE(test::run_gpusched(args).ok());
    CHECK(rows_in(dir / "db.sqlite", "runs") == 3);
    CHECK(rows_in(dir / "db.sqlite", "pipelines") == 2);
}

TEST_CASE("a missing generator is refused", "[oneshot][bad-input]") {
    test::TempDir dir;
    check_refused(test::run_gpusched(oneshot_args(dir, dir / "missing.gen", "x")), "does not exist",
                  dir / "db.sqlite");
}

TEST_CASE("a generator path that is not executable is refused", "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "app.gen", "not a program");
    check_refused(test::run_gpusched(oneshot_args(dir, dir / "app.gen", "x")), "not an executable",
                  dir / "db.sqlite");
}

TEST_CASE("a generator the dynamic loader cannot start is refused, naming the missing library",
          "[oneshot][bad-input]") {
    // A program linked against a shared library the loader cannot find, as a
    // generator copied to a machine without Halide is (docs/bundle.md).
    test::TempDir dir;
    test::write_file(dir / "gone.cpp", "int gpusched_test_gone() { return 0; }\n");
    test::write_file(dir / "app.cpp",
                     "int gpusched_test_gone();\nint main() { return gpusched_test_gone(); }\n");
    for (std::vector<std::string> argv :
         {std::vector<std::string>{"c++", "-shared", "-fPIC", "-o", dir / "libgone.so", dir / "gone.cpp"},
          std::vector<std::string>{"c++", "-o", dir / "app.gen", dir / "app.cpp", "-L" + dir.path(),
                                   "-lgone"}}) {
        ProcessSpec spec;
        spec.argv = argv;
        spec.timeout = std::chrono::minutes(2);
        ProcessResult built = run_process(spec);
        INFO(argv[0] << ": " << built.describe_failure() << "\n" << built.err);
        REQUIRE(built.ok());
    }
    check_refused(test::run_gpusched(oneshot_args(dir, dir / "app.gen", "x")),
                  "cannot start, a shared library it needs is missing: libgone.so", dir / "db.sqlite");
}

TEST_CASE("a generator that crashes when asked for its generators is refused, naming the signal",
          "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "app.gen", "#!/bin/sh\nkill -SEGV $$\n");
    fs::permissions(dir / "app.gen", fs::perms::owner_all);
    check_refused(test::run_gpusched(oneshot_args(dir, dir / "app.gen", "x")),
                  "crashed when asked to list its generators: killed by signal 11", dir / "db.sqlite");
}

TEST_CASE("a generator that does not answer within --timeout is refused, saying so", "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "app.gen", "#!/bin/sh\nexec sleep 60\n");
    fs::permissions(dir / "app.gen", fs::perms::owner_all);
    auto args = oneshot_args(dir, dir / "app.gen", "x");
    args.insert(args.end(), {"--timeout", "2"});
    const auto start = std::chrono::steady_clock::now();
    check_refused(test::run_gpusched(args), "did not answer within 2 s when asked to list its generators",
                  dir / "db.sqlite");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("an unknown generator name is refused with the names that exist", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "no_such_pipeline"));
    check_refused(r, "no generator named 'no_such_pipeline'", dir / "db.sqlite");
    CHECK(r.err.find("tiny_stencil") != std::string::npos);
}

TEST_CASE("a generator that reports an error is refused with its message", "[oneshot][bad-input]") {
    test::TempDir dir;
    check_refused(test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "fails_to_generate")),
                  "always reports an error", dir / "db.sqlite");
}

TEST_CASE("a generator that does not finish is stopped at the timeout", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "never_finishes");
    args.insert(args.end(), {"--timeout", "2"});
    check_refused(test::run_gpusched(args), "timed out after 2 s", dir / "db.sqlite");
}

TEST_CASE("a failure every sample has is said once, after the banner", "[oneshot][bad-input]") {
    // stdout and stderr in one stream, as a terminal or a log file shows them.
    test::TempDir dir;
    // Every search of no_estimates fails alike (its output has no estimate).
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "no_estimates", "gpusched");
    args.insert(args.end(), {"--samples", "3", "--beam-size", "2", "--passes", "1"});
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "exec \"$0\" \"$@\" 2>&1", GPUSCHED_BINARY};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const ProcessResult r = run_process(spec);
    INFO(r.out);
    CHECK(r.exit_code == 1);
    const std::string reason = "has no usable estimate";
    const auto first = r.out.find(reason);
    REQUIRE(first != std::string::npos);
    CHECK(r.out.find(reason, first + 1) == std::string::npos);
    const auto banner = r.out.find("gpusched oneshot: no_estimates");
    REQUIRE(banner != std::string::npos);
    CHECK(banner < r.out.find("error: "));
    // Each sample still says how it ended.
    CHECK(r.out.find("sample 3/3") != std::string::npos);
}

TEST_CASE("a Func without estimates is refused, naming it", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "no_estimates"));
    check_refused(r, "estimate", dir / "db.sqlite");
    CHECK(r.err.find("output") != std::string::npos);
}

TEST_CASE("a pipeline its generator already scheduled is refused, saying how to guard that schedule",
          "[oneshot][bad-input]") {
    test::TempDir dir;
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "prescheduled", "gpusched"));
    check_refused(r, "output already has a schedule from its generator", dir / "db.sqlite");
    CHECK(r.err.find("using_autoscheduler()") != std::string::npos);
}

TEST_CASE(
    "a gather bounded by neither parameter nor Func estimates is refused, naming the Func and dimension",
    "[oneshot][bad-input][estimates]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "estimated_grid", "gpusched");
    args.insert(args.end(), {"--samples", "1", "estimates=false"});
    auto r = test::run_gpusched(args);
    check_refused(r, "cannot bound dimension 2 ('z') of the region of 'gy' read by slice", dir / "db.sqlite");
    CHECK(r.err.find("set_estimate") != std::string::npos);
}

TEST_CASE("an unknown generator param is refused, naming it", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args.push_back("widht=3");
    check_refused(test::run_gpusched(args), "widht", dir / "db.sqlite");
}

TEST_CASE("a generator param that is not key=value is refused", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args.push_back("width");
    check_refused(test::run_gpusched(args), "must be written key=value", dir / "db.sqlite");
}

TEST_CASE("an unknown GPU profile is refused with the known ones", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args.insert(args.end(), {"--gpu", "b300"});
    auto r = test::run_gpusched(args);
    check_refused(r, "unknown GPU profile 'b300'", dir / "db.sqlite");
    CHECK(r.err.find("h100") != std::string::npos);
}

TEST_CASE("gpu auto uses the local GPU, or without one is refused saying why", "[oneshot][bad-input]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args.insert(args.end(), {"--gpu", "auto"});
    auto r = test::run_gpusched(args);
    // What this machine has, asked here through the same driver query.
    const LocalGpuQuery local = query_local_gpus();
    INFO("local GPUs: " << local.devices.size() << " (" << local.problem << ")\nstdout: " << r.out);
    if (local.devices.empty()) {
        REQUIRE_FALSE(local.problem.empty());
        check_refused(r, "--gpu auto: " + local.problem, dir / "db.sqlite");
    } else {
        INFO("stderr: " << r.err);
        REQUIRE(r.ok());
        auto runs = test::run_gpusched({"db", "--db", dir / "db.sqlite", "runs", "--json"});
        REQUIRE(runs.ok());
        auto j = nlohmann::json::parse(runs.out);
        REQUIRE(j.size() == 1);
        CHECK(j[0]["gpu"] == local.devices.front().name);
    }
}

TEST_CASE("an output directory that cannot be created is refused", "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "file", "x");
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil");
    args[7] = dir / "file/out"; // -o below a regular file
    check_refused(test::run_gpusched(args), "output directory", dir / "db.sqlite");
}

TEST_CASE("a database file that is not SQLite is refused and left as it was", "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "db.sqlite", "precious text\n");
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil"));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("not a SQLite database") != std::string::npos);
    CHECK(test::read_file(dir / "db.sqlite") == "precious text\n");
}

TEST_CASE("a database with a newer schema is refused before any work", "[oneshot][bad-input]") {
    test::TempDir dir;
    { db::Database::open(dir / "db.sqlite"); }
    sqlite3 *raw = nullptr;
    sqlite3_open((dir / "db.sqlite").c_str(), &raw);
    sqlite3_exec(raw, ("PRAGMA user_version = " + std::to_string(db::current_schema_version() + 5)).c_str(),
                 nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    check_refused(test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil")),
                  "newer than this gpusched", dir / "db.sqlite");
    CHECK_FALSE(fs::exists(dir / "out/samples"));
}

TEST_CASE("without ptxas the sample is kept and marked not checked", "[oneshot]") {
    test::TempDir dir;
    auto r = test::run_gpusched(oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil"),
                                {{"GPUSCHED_PTXAS", "/nonexistent/ptxas"}});
    INFO(r.err);
    REQUIRE(r.ok());
    CHECK(r.out.find("not checked (ptxas not found") != std::string::npos);
    CHECK(rows_in(dir / "db.sqlite", "samples") == 1);
}

TEST_CASE("tune without a GPU says it needs one and exits 2", "[tune][bad-input]") {
    auto r = test::run_gpusched({"tune", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil", "--mode", "autotune"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("GPU") != std::string::npos);
}

TEST_CASE("gpus lists the built-in profiles as JSON", "[gpus]") {
    auto r = test::run_gpusched({"gpus", "--json"});
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["builtin"].size() >= 4);
}

namespace {
// Processes whose command line mentions `needle`.
int processes_mentioning(const std::string &needle) {
    int n = 0;
    for (const auto &entry : fs::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmdline = test::read_file(entry.path().string() + "/cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(needle) != std::string::npos) ++n;
    }
    return n;
}
} // namespace

TEST_CASE("terminating gpusched also ends the generator it is running", "[oneshot][signals]") {
    test::TempDir dir;
    ProcessSpec spec;
    // coreutils' timeout sends SIGTERM to gpusched after 3 s.
    spec.argv = {"timeout",
                 "-s",
                 "TERM",
                 "3",
                 GPUSCHED_BINARY,
                 "oneshot",
                 DRIVER_TEST_GENERATORS,
                 "-g",
                 "never_finishes",
                 "--autoscheduler",
                 "li2018",
                 "-o",
                 dir / "out",
                 "--db",
                 dir / "db.sqlite",
                 "--no-validate"};
    spec.timeout = std::chrono::seconds(60);
    ProcessResult r = run_process(spec);
    CHECK(r.exit_code == 124); // timeout's "the command timed out"
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(processes_mentioning(dir / "out") == 0);
    CHECK(rows_in(dir / "db.sqlite", "runs") <= 0);
}

TEST_CASE("a search config setting a key the command line owns is refused, naming the option",
          "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "extra.json", R"({"beam_size": -4})");
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil", "gpusched");
    args.insert(args.end(), {"--search-config", dir / "extra.json"});
    auto r = test::run_gpusched(args);
    check_refused(r, "key \"beam_size\" is set by --beam-size, not by the file", dir / "db.sqlite");
}

TEST_CASE("a usage error exits 2 with CLI11's line, whatever CLI11's own code", "[oneshot][bad-input]") {
    test::TempDir dir;
    for (std::vector<std::string> argv :
         {std::vector<std::string>{"tune", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil", "--device", "tpu"},
          std::vector<std::string>{"oneshot", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil", "-j", "0"},
          std::vector<std::string>{"oneshot", DRIVER_TEST_GENERATORS, "--no-such-option"},
          std::vector<std::string>{"oneshot", DRIVER_TEST_GENERATORS}}) {
        auto r = test::run_gpusched(argv);
        INFO(argv[argv.size() - 1] << " -> exit " << r.exit_code << ", stderr: " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_FALSE(r.err.empty());
    }
    CHECK(test::run_gpusched({"oneshot", "--help"}).exit_code == 0);
}

TEST_CASE("One Shot's searches use the weights given with --weights, record them and say what they were "
          "trained on",
          "[oneshot][weights]") {
    test::TempDir dir;
    // The embedded weights with every coefficient's bias raised: the same
    // model shape, other predictions.
    WeightsFile w = default_weights();
    for (float &b : w.weights.coef_b)
        b += 1.0f;
    w.provenance = "test: embedded weights, coefficient biases + 1";
    write_weights_file(dir / "raised.weights", w);

    auto run = [&](const std::string &db, const std::vector<std::string> &extra) {
        auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil", "gpusched");
        args[args.size() - 2] = db; // --db
        args.insert(args.end(), {"--samples", "1"});
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = test::run_gpusched(args);
        INFO("stderr: " << r.err);
        REQUIRE(r.ok());
        return r.out;
    };
    // The report says which weights ranked the samples and what they were trained on.
    CHECK(run(dir / "default.sqlite", {})
              .find("Cost model: network, weights embedded defaults: fitted to the "
                    "analytic GPU model's predictions") != std::string::npos);
    CHECK(run(dir / "raised.sqlite", {"--weights", dir / "raised.weights"})
              .find("Cost model: network, weights " + fs::absolute(dir / "raised.weights").string() +
                    ": test: embedded weights, coefficient biases + 1") != std::string::npos);
    const std::string weights_of =
        "SELECT coalesce(json_extract(search_config, '$.weights_path'), '') FROM samples WHERE idx = 0";
    CHECK(test::sql_text(dir / "default.sqlite", weights_of).empty());
    CHECK(test::sql_text(dir / "raised.sqlite", weights_of) == fs::absolute(dir / "raised.weights").string());
    const std::string cost = "SELECT printf('%.9g', predicted_cost) FROM samples WHERE idx = 0";
    CHECK(test::sql_text(dir / "default.sqlite", cost) != test::sql_text(dir / "raised.sqlite", cost));
}

TEST_CASE("a weights file given with --weights that is not one is refused before any work",
          "[oneshot][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "bad.weights", "not weights");
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil", "gpusched");
    args.insert(args.end(), {"--weights", dir / "bad.weights"});
    check_refused(test::run_gpusched(args), "bad.weights", dir / "db.sqlite");
}

TEST_CASE("One Shot prints the chosen schedule's GPU fill and stores every sample's, so a sum left to one "
          "thread is "
          "found with SQL",
          "[oneshot][gpu_fill]") {
    test::TempDir dir;
    const std::string serial_config = dir / "serial.json";
    test::write_file(serial_config, R"({"split_reductions": false})");
    auto run = [&](const std::string &name, const std::vector<std::string> &extra) {
        std::vector<std::string> args = {"oneshot",
                                         DRIVER_TEST_GENERATORS,
                                         "-g",
                                         "float_total",
                                         "--samples",
                                         "2",
                                         "--no-validate",
                                         "-o",
                                         dir / name,
                                         "--db",
                                         dir / "db.sqlite"};
        args.insert(args.end(), extra.begin(), extra.end());
        ProcessResult r = test::run_gpusched(args);
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find("GPU fill of the chosen sample: ") != std::string::npos);
        return r;
    };
    run("serial", {"--search-config", serial_config});
    run("split", {});
    const std::string db = dir / "db.sqlite";
    CHECK(test::sql_int(
              db, "SELECT count(*) FROM samples WHERE gpu_fill IS NULL OR gpu_fill_least IS NULL") == 0);
    // 1024 x 1024 terms in one thread of an H100's 270336: under a millionth.
    CHECK(test::sql_int(db, "SELECT count(*) FROM samples WHERE run_id = 1 AND gpu_fill < 1e-5") == 2);
    CHECK(test::sql_int(db, "SELECT count(*) FROM samples WHERE run_id = 2 AND gpu_fill > 1e-3") == 2);
    // Fills are shares of the GPU (the least-filled stage may be above the
    // weighted figure, which stages under 1% of the work also pull down).
    CHECK(test::sql_int(db, "SELECT count(*) FROM samples WHERE gpu_fill NOT BETWEEN 0 AND 1 OR "
                            "gpu_fill_least NOT BETWEEN 0 AND 1") == 0);
}

TEST_CASE("the states a search dumps for training include every reduction-split variant's under its own "
          "pipeline",
          "[oneshot][dump_states]") {
    // The default weights are fitted on dumped states; without the split
    // variants' states nothing teaches them that a split sum beats a serial one.
    test::TempDir dir;
    auto dumped = [&](const std::string &name, const std::string &extra) {
        const std::string config = dir / (name + ".json");
        const std::string rows = dir / (name + ".rows");
        test::write_file(config,
                         R"({"dump_states_path": ")" + rows + R"(", "dump_states_max": 16)" + extra + "}");
        ProcessResult r = test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "float_total",
                                              "--samples", "1", "--no-validate", "-o", dir / name, "--db",
                                              dir / (name + ".sqlite"), "--search-config", config});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        return gpusched::read_feature_rows(rows);
    };
    const std::vector<gpusched::PipelineSamples> serial = dumped("serial", R"(, "split_reductions": false)");
    REQUIRE(serial.size() == 1);
    const std::vector<gpusched::PipelineSamples> split = dumped("split", "");
    // The pipeline as written first (the same features as without splits),
    // then variants, each with more stages (the split's intermediates).
    REQUIRE(split.size() >= 3);
    CHECK(split[0].name == serial[0].name);
    for (std::size_t i = 1; i < split.size(); ++i) {
        INFO("variant " << i);
        CHECK(split[i].stages.size() > split[0].stages.size());
        CHECK(!split[i].states.empty());
        CHECK(split[i].states.size() <= 16);
    }
}

TEST_CASE("a reduction split keeps its partials within the device-memory bound, and One Shot prints its "
          "pick's device memory",
          "[oneshot][splits]") {
    // A 256 x 256 joint histogram of two 4096 x 4096 images (issue 57): each
    // partial is a whole 256 KiB copy of the histogram. Unbounded, the
    // search takes 16384 of them (4 GiB); the default bound is 256 MiB.
    test::TempDir dir;
    auto run = [&](const std::string &out, std::vector<std::string> extra) {
        auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "joint_histogram", "gpusched");
        for (auto &a : args)
            if (a == dir / "out") a = dir / out;
        args.insert(args.begin(), "--json");
        args.insert(args.end(), {"--samples", "1"});
        args.insert(args.end(), extra.begin(), extra.end());
        const ProcessResult r = test::run_gpusched(args);
        INFO("stderr: " << r.err);
        REQUIRE(r.ok());
        return nlohmann::json::parse(r.out);
    };
    const int64_t bound = int64_t(256) << 20;
    test::write_file(dir / "unbounded.json", R"({"max_split_bytes": 1099511627776})");
    const auto unbounded = run("unbounded", {"--search-config", dir / "unbounded.json"});
    REQUIRE(unbounded["device_bytes"].is_number());
    CHECK(unbounded["device_bytes"].get<int64_t>() > bound); // the split the bound is for
    const auto bounded = run("bounded", {});
    REQUIRE(bounded["device_bytes"].is_number());
    CHECK(bounded["device_bytes"].get<int64_t>() <= bound);
    // Still split, within the bound: partials in the stored record.
    const std::string splits = test::sql_text(
        dir / "db.sqlite",
        "SELECT json_array_length(decisions, '$.reduction_splits') FROM samples s JOIN runs r ON "
        "r.id = s.run_id WHERE r.id = " +
            bounded["run_id"].dump());
    CHECK(std::stoi(splits) >= 1);
    // The text report says it.
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "joint_histogram", "gpusched");
    args.insert(args.end(), {"--samples", "1"});
    const ProcessResult text = test::run_gpusched(args);
    REQUIRE(text.ok());
    CHECK(text.out.find("Device memory of the chosen sample: 256.0 MiB") != std::string::npos);
}

TEST_CASE("One Shot gives the pipeline's roofline: its inputs read and outputs written once at the GPU's "
          "bandwidth, its operations at the GPU's peak",
          "[oneshot][roofline]") {
    test::TempDir dir;
    auto args = oneshot_args(dir, DRIVER_TEST_GENERATORS, "tiny_stencil", "gpusched");
    args.insert(args.begin(), "--json");
    args.insert(args.end(), {"--samples", "1", "--gpu", "h100"});
    const ProcessResult r = test::run_gpusched(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["roofline"].is_object());
    const auto &b = j["roofline"];
    // A 256 x 128 float image in, a 256 x 128 float image out (the
    // repeat_edge clamps every read to the image).
    CHECK(b["bytes"].get<double>() == 2 * 256 * 128 * 4);
    CHECK(b["memory_ms"].get<double>() == Approx(2 * 256 * 128 * 4 / 3350e9 * 1e3)); // H100: 3.35 TB/s
    // Two blurs of two adds and a division per point, at least, at 67 TFLOP/s.
    CHECK(b["operations"].get<double>() >= 6 * 256 * 128);
    CHECK(b["compute_ms"].get<double>() == Approx(b["operations"].get<double>() / 67e12 * 1e3));
    CHECK(b["bound_ms"].get<double>() ==
          Approx(std::max(b["memory_ms"].get<double>(), b["compute_ms"].get<double>())));
}
