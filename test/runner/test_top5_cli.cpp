// Top 5 through the real gpusched binary on POCL (--device opencl): measured
// samples land in the database under their device as they finish, the
// fastest validated one is kept, failures of every kind are recorded and
// survived, two tuners share one database, and --device cuda without a GPU
// is a one-line refusal. Batches are tiny (2-3 samples, small beams) to keep
// the suite fast on two cores.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "db/database.h"
#include "db/sample_store.h"
#include "test_support.h"
#include "tuner/cuda_device_query.h"
#include "tuner/measure/runner/cache_flush_size.h"
#include "tuner/measure/runner/cuda_driver_check.h"
#include "tuner/modes/top5.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> top5_args(const test::TempDir &dir, const std::string &out, const std::string &gen,
                                   const std::string &name, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {
        "tune",        gen,          "-g",       name,        "--mode",  "top5",  "--device",
        "opencl",      "--gpu",      "h100",     "--samples", "3",       "--top", "2",
        "--beam-size", "2",          "--passes", "1",         "-j",      "2",     "--min-time",
        "0.01",        "--max-reps", "30",       "-o",        dir / out, "--db",  dir / "db.sqlite"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

std::vector<db::SampleRow> samples_of(const std::string &db_path, int64_t run) {
    db::Database database = db::Database::open_existing(db_path);
    db::SampleStore store(database);
    return store.samples_of_run(run);
}

// A run's stored config, as a resume reads it back.
nlohmann::json run_config_of(const std::string &db_path, int64_t run) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare("SELECT config FROM runs WHERE id = ?1");
    q.bind(1, run);
    REQUIRE(q.step());
    return nlohmann::json::parse(q.column_text(0));
}

std::string run_status(const std::string &db_path, int64_t run) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare("SELECT status || ':' || coalesce(error, '') FROM runs WHERE id = ?1");
    q.bind(1, run);
    return q.step() ? q.column_text(0) : "";
}

void check_one_line_error(const ProcessResult &r, int exit_code, const std::string &must_mention) {
    INFO("stderr: " << r.err);
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code == exit_code);
    CHECK(r.err.find(must_mention) != std::string::npos);
    // One line: the error, nothing after it.
    const auto at = r.err.find("error: ");
    REQUIRE(at != std::string::npos);
    CHECK(r.err.find('\n', at) == r.err.size() - 1);
}

} // namespace

TEST_CASE("top5 on opencl measures the best predicted samples, keeps the fastest and stores times by device",
          "[top5]") {
    test::TempDir dir;
    auto args =
        top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil", {"--baselines", "naive", "--json"});
    ProcessResult r = test::run_gpusched(args);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    const std::string device = j["device"];
    CHECK(device.rfind("pocl-", 0) == 0);
    REQUIRE(j["benchmarked"].size() == 2);
    double best = 1e300;
    for (const auto &e : j["benchmarked"]) {
        CHECK(e["measurement"]["outcome"] == "measured");
        CHECK(e["measurement"]["validation"] == "passed");
        best = std::min(best, e["measurement"]["median_ms"].get<double>());
    }
    // The best predicted comes first.
    CHECK(j["benchmarked"][0]["predicted_rank"] == 1);
    REQUIRE(j["baselines"].size() == 1);
    CHECK(j["baselines"][0]["source"] == "naive");
    CHECK(j["baselines"][0]["measurement"]["outcome"] == "measured");
    CHECK(j["baselines"][0]["speedup"].get<double>() > 0);
    // The GPU profile's roofline, for the tables; no time over it, since
    // POCL's times are a CPU's.
    CHECK(j["profile_roofline_ms"].get<double>() > 0);
    CHECK(j["roofline_ms"].is_null());
    // The kept files: the best sample's, or the naive baseline's where it
    // ran faster (no search record then; the next test plants that case).
    const double naive_ms = j["baselines"][0]["measurement"]["median_ms"];
    if (j["kept_baseline"] == true) {
        CHECK(j["chosen"] == "naive");
        CHECK(naive_ms < best);
    } else {
        CHECK(j["chosen"] != "naive");
        CHECK(best <= naive_ms);
    }
    for (const char *f : {"tiny_stencil.schedule.h", "tiny_stencil.a", "tiny_stencil.h"})
        CHECK(fs::exists(dir / ("out/" + std::string(f))));
    CHECK(fs::exists(dir / "out/tiny_stencil.gpusched.json") == (j["kept_baseline"] == false));

    // The database: every sample of the batch, the measured ones with their
    // device, reps and validation; the run's best is the fastest.
    const int64_t run = j["run_id"];
    auto rows = samples_of(dir / "db.sqlite", run);
    REQUIRE(rows.size() == 3);
    int measured = 0;
    double stored_best = 1e300;
    for (const auto &s : rows) {
        if (s.benchmark.empty()) {
            CHECK_FALSE(s.device);
            CHECK_FALSE(s.runtime_median_ms);
            continue;
        }
        ++measured;
        CHECK(s.benchmark == "measured");
        REQUIRE(s.device);
        CHECK(*s.device == device);
        REQUIRE(s.runtime_median_ms);
        CHECK(*s.runtime_reps >= 3);
        CHECK(s.validation == "passed");
        const auto detail = nlohmann::json::parse(s.benchmark_detail);
        CHECK(detail["first_call_ms"].get<double>() > 0);
        // The median's 95% interval (6 reps or more), and whether the run's
        // 2% precision was met before --max-reps.
        if (*s.runtime_reps >= 6) {
            REQUIRE(detail["median_ci95_low_ms"].is_number());
            CHECK(detail["median_ci95_low_ms"].get<double>() <= *s.runtime_median_ms);
            CHECK(detail["median_ci95_high_ms"].get<double>() >= *s.runtime_median_ms);
        }
        CHECK(detail["precision_met"].is_boolean());
        if (detail["precision_met"] == false) CHECK(*s.runtime_reps == 30); // ran to the cap
        // How it was timed: POCL's clock is the host's, after a flush of
        // twice the CPU's last-level cache before every timed call.
        CHECK(detail["timer"] == "host-clock");
        CHECK(detail["flush_bytes"] == flush_bytes_for_cache(host_last_level_cache_bytes()));
        CHECK(detail["sm_clock_mhz"].is_null());
        stored_best = std::min(stored_best, *s.runtime_median_ms);
    }
    CHECK(measured == 2);
    CHECK(stored_best == Approx(best));
    CHECK(run_status(dir / "db.sqlite", run) == "finished:");

    // db best: measured wins, under its device; db stats: counts and the
    // rank correlation of the run.
    ProcessResult b = test::run_gpusched({"db", "--db", dir / "db.sqlite", "best", "--json"});
    REQUIRE(b.ok());
    auto bj = nlohmann::json::parse(b.out);
    REQUIRE(bj.size() == 1);
    CHECK(bj[0]["device"] == device);
    CHECK(bj[0]["runtime_ms"].get<double>() <= best + 1e-12);
    ProcessResult st = test::run_gpusched({"db", "--db", dir / "db.sqlite", "stats", "--json"});
    INFO(st.err);
    REQUIRE(st.ok());
    auto sj = nlohmann::json::parse(st.out);
    REQUIRE(sj.size() == 1);
    CHECK(sj[0]["device"] == device);
    CHECK(sj[0]["measured"] == 3); // 2 samples + the naive baseline
    CHECK(sj[0]["failed"] == 0);
    bool run_found = false;
    for (const auto &rc : sj[0]["runs"]) {
        if (rc["run_id"] != run) continue;
        run_found = true;
        CHECK(rc["measured"] == 2);
        CHECK(std::abs(rc["spearman"].get<double>()) == Approx(1.0)); // two samples: +-1
    }
    CHECK(run_found);

    // db runs: each run with the device its samples were measured on (the
    // batch's run and the naive baseline's), in JSON and in the table.
    ProcessResult runs = test::run_gpusched({"db", "--db", dir / "db.sqlite", "runs", "--json"});
    REQUIRE(runs.ok());
    const auto rj = nlohmann::json::parse(runs.out);
    REQUIRE(rj.size() == 2);
    for (const auto &rr : rj)
        CHECK(rr["device"] == device);
    ProcessResult table = test::run_gpusched({"db", "--db", dir / "db.sqlite", "runs"});
    REQUIRE(table.ok());
    CHECK(table.out.find("device") != std::string::npos);
    CHECK(table.out.find(device) != std::string::npos);
}

TEST_CASE("top5 where every benchmarked sample crashes records each failure and exits 1 in one line",
          "[top5][fault]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(top5_args(dir, "out", RUNNER_TEST_GENERATORS, "planted_fault", {"fault=crash"}));
    check_one_line_error(r, 1, "every benchmarked sample failed");
    CHECK(r.err.find("crashed") != std::string::npos);
    auto rows = samples_of(dir / "db.sqlite", 1);
    REQUIRE(rows.size() == 3);
    int crashed = 0;
    for (const auto &s : rows) {
        if (s.benchmark.empty()) continue;
        CHECK(s.benchmark == "crashed");
        CHECK(s.status == "failed");
        CHECK(s.error.find("signal") != std::string::npos);
        CHECK_FALSE(s.runtime_median_ms);
        ++crashed;
    }
    CHECK(crashed == 2);
    CHECK(run_status(dir / "db.sqlite", 1).rfind("failed:every benchmarked sample failed", 0) == 0);
}

TEST_CASE("top5 never keeps a sample whose output is wrong and stores the difference", "[top5][fault]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(top5_args(dir, "out", RUNNER_TEST_GENERATORS, "planted_fault", {"fault=wrong"}));
    check_one_line_error(r, 1, "wrong output");
    for (const auto &s : samples_of(dir / "db.sqlite", 1)) {
        if (s.benchmark.empty()) continue;
        CHECK(s.benchmark == "wrong output");
        CHECK(s.validation == "failed");
        CHECK(s.validation_detail.find("values differ") != std::string::npos);
        CHECK_FALSE(s.runtime_median_ms);
    }
    CHECK_FALSE(fs::exists(dir / "out/planted_fault.schedule.h"));
}

TEST_CASE("top5 keeps a baseline measured faster than every sample, and the database says so", "[top5]") {
    test::TempDir dir;
    // fault=slow: every autoscheduled build loops 2^14 times per pixel for
    // nothing, the naive baseline's does not.
    ProcessResult r = test::run_gpusched(top5_args(dir, "out", RUNNER_TEST_GENERATORS, "planted_fault",
                                                   {"fault=slow", "--baselines", "naive", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["chosen"] == "naive");
    CHECK(j["kept_baseline"] == true);
    REQUIRE(j["baselines"].size() == 1);
    const double naive_ms = j["baselines"][0]["measurement"]["median_ms"];
    for (const auto &e : j["benchmarked"])
        CHECK(e["measurement"]["median_ms"].get<double>() > naive_ms);
    // The kept files are the naive schedule's, not a sample's: no search
    // record, and a schedule source no search wrote.
    CHECK(fs::exists(dir / "out/planted_fault.a"));
    CHECK_FALSE(fs::exists(dir / "out/planted_fault.gpusched.json"));
    std::ifstream schedule(dir / "out/planted_fault.schedule.h");
    const std::string text((std::istreambuf_iterator<char>(schedule)), std::istreambuf_iterator<char>());
    CHECK(text.find("apply_schedule_planted_fault") != std::string::npos);
    CHECK(text.find("gpusched: predicted cost") == std::string::npos);
    // The run's best sample is the baseline's, in the baseline's own run.
    db::Database database = db::Database::open_existing(dir / "db.sqlite");
    auto q = database.prepare("SELECT r.kept_source, b.autoscheduler FROM runs r JOIN samples s ON "
                              "s.id = r.best_sample_id JOIN runs b ON b.id = s.run_id WHERE r.id = ?1");
    q.bind(1, j["run_id"].get<int64_t>());
    REQUIRE(q.step());
    CHECK(q.column_text(0) == "naive");
    CHECK(q.column_text(1) == "naive");
}

TEST_CASE("two tuners on one database at once both store their measured runs", "[top5][db]") {
    test::TempDir dir;
    ProcessResult a, b;
    std::thread other(
        [&] { b = test::run_gpusched(top5_args(dir, "out-b", DRIVER_TEST_GENERATORS, "row_sums")); });
    a = test::run_gpusched(top5_args(dir, "out-a", DRIVER_TEST_GENERATORS, "tiny_stencil"));
    other.join();
    INFO("a: " << a.err << "\nb: " << b.err);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    db::Database database = db::Database::open_existing(dir / "db.sqlite");
    auto q = database.prepare(
        "SELECT count(DISTINCT r.id), count(*) FROM runs r JOIN samples s ON s.run_id = r.id "
        "WHERE r.mode = 'top5' AND r.status = 'finished' AND s.benchmark = 'measured'");
    REQUIRE(q.step());
    CHECK(q.column_int(0) == 2);
    CHECK(q.column_int(1) == 4);
}

TEST_CASE("top5 --no-flush times without the cache flush and its run keeps that", "[top5][timing]") {
    test::TempDir dir;
    ProcessResult r = test::run_gpusched(
        top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil", {"--no-flush", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const int64_t run = nlohmann::json::parse(r.out)["run_id"];
    int measured = 0;
    for (const auto &s : samples_of(dir / "db.sqlite", run)) {
        if (s.benchmark != "measured") continue;
        ++measured;
        const auto detail = nlohmann::json::parse(s.benchmark_detail);
        CHECK(detail["flush_bytes"] == 0);
        CHECK(detail["timer"] == "host-clock");
    }
    CHECK(measured == 2);
    // The run's timing, as a resume would read it back.
    const auto config = run_config_of(dir / "db.sqlite", run);
    INFO(config.dump());
    CHECK(config["timing"]["flush_bytes"] == 0);
}

TEST_CASE("top5 --host-clock --no-flush --precision 0 times as before issue 56 and its run keeps that",
          "[top5][timing]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil",
                                     {"--host-clock", "--no-flush", "--precision", "0", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const int64_t run = nlohmann::json::parse(r.out)["run_id"];
    for (const auto &s : samples_of(dir / "db.sqlite", run)) {
        if (s.benchmark != "measured") continue;
        const auto detail = nlohmann::json::parse(s.benchmark_detail);
        CHECK(detail["timer"] == "host-clock");
        CHECK(detail["flush_bytes"] == 0);
    }
    const auto config = run_config_of(dir / "db.sqlite", run);
    INFO(config.dump());
    CHECK(config["timing"]["host_clock"] == true);
    CHECK(config["timing"]["precision"] == 0);
    CHECK(config["timing"]["flush_bytes"] == 0);
}

TEST_CASE("tune --device cuda without a GPU refuses in one line naming --device opencl", "[top5][cuda]") {
    if (!query_local_gpus().devices.empty()) return; // a GPU machine runs the cuda device for real
    test::TempDir dir;
    auto args = top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil");
    args[7] = "cuda"; // --device cuda
    ProcessResult r = test::run_gpusched(args);
    check_one_line_error(r, 2, "--device opencl");
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
    CHECK_FALSE(fs::exists(dir / "out"));

    // Without --device, tune benchmarks on the GPU, so it refuses the same way.
    ProcessResult d = test::run_gpusched({"tune", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil", "--gpu",
                                          "h100", "--db", dir / "db.sqlite", "-o", dir / "out"});
    check_one_line_error(d, 2, "--device opencl");
}

TEST_CASE("top5 without ptxas benchmarks unfiltered and says the spill check was not made", "[top5]") {
    test::TempDir dir;
    auto args = top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil", {"--json"});
    args[11] = "2"; // --samples 2
    args[13] = "1"; // --top 1
    ProcessResult r = test::run_gpusched(args, {{"GPUSCHED_PTXAS", "/nonexistent/ptxas"}});
    INFO(r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    const std::string check = j["spill_check"];
    CHECK(check.rfind("not checked (ptxas not found", 0) == 0);
    CHECK(check.find("a spiller may be among those benchmarked") != std::string::npos);
    CHECK(j["benchmarked"][0]["ptxas"] == "not checked");
    CHECK(j["benchmarked"][0]["measurement"]["outcome"] == "measured");
}

TEST_CASE("a database locked past the busy timeout is a one-line error before any work", "[top5][db]") {
    test::TempDir dir;
    { db::Database::open(dir / "db.sqlite"); }
    // Another process's write transaction, held for the whole run.
    sqlite3 *holder = nullptr;
    REQUIRE(sqlite3_open((dir / "db.sqlite").c_str(), &holder) == SQLITE_OK);
    REQUIRE(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
    ProcessResult r = test::run_gpusched(top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil"),
                                         {{"GPUSCHED_DB_BUSY_TIMEOUT_MS", "300"}});
    sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    check_one_line_error(r, 1, "stayed locked by another process for longer than the busy timeout (0.3 s)");
    CHECK_FALSE(fs::exists(dir / "out/samples"));
}

TEST_CASE("tune --device opencl without a working OpenCL refuses in one line", "[top5][bad-input]") {
    test::TempDir dir;
    fs::create_directories(dir / "no-icds");
    // The ICD loader finds no OpenCL implementation: POCL is as good as missing.
    ProcessResult r = test::run_gpusched(top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil"),
                                         {{"OCL_ICD_VENDORS", dir / "no-icds"}});
    check_one_line_error(r, 2, "--device opencl: OpenCL cannot run a kernel on this machine");
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
}

TEST_CASE("tune refuses an output directory it cannot create before any work", "[top5][bad-input]") {
    test::TempDir dir;
    auto args = top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil");
    args[args.size() - 3] = "/proc/gpusched-cannot-be-here"; // -o
    ProcessResult r = test::run_gpusched(args);
    check_one_line_error(r, 1, "cannot create output directory '/proc/gpusched-cannot-be-here'");
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
}

TEST_CASE("tune refuses the other mode's options in one line instead of ignoring them", "[top5][bad-input]") {
    test::TempDir dir;
    auto args = top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil", {"--time-budget", "1s"});
    check_one_line_error(test::run_gpusched(args), 1,
                         "--time-budget is Autotune's (--mode autotune), not Top 5's");
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
    args = top5_args(dir, "out", DRIVER_TEST_GENERATORS, "tiny_stencil"); // holds --top 2
    *std::find(args.begin(), args.end(), "top5") = "autotune";
    check_one_line_error(test::run_gpusched(args), 1, "--top is Top 5's (--mode top5), not Autotune's");
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
}

TEST_CASE("the CUDA driver needed for a PTX ISA version follows the PTX release notes", "[top5]") {
    CHECK(cuda_driver_for_ptx_isa("7.1") == 11010); // Halide 14's sm_86 PTX
    CHECK(cuda_driver_for_ptx_isa("7.0") == 11000);
    CHECK(cuda_driver_for_ptx_isa("6.5") == 10020);
    CHECK(cuda_driver_for_ptx_isa("6.0") == 9000);
    CHECK(cuda_driver_for_ptx_isa("8.3") == 12030);
    CHECK(cuda_driver_for_ptx_isa("5.0") == 0);
    CHECK(cuda_driver_for_ptx_isa("garbage") == 0);
}
