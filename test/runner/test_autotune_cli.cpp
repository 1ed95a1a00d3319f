// Autotune through the real gpusched binary on POCL (--device opencl): the
// model is retrained between batches and the next batch searches with the
// new weights; a SIGKILLed driver resumes with no sample lost or doubled;
// budgets stop at a sample boundary with the best written; two runs share
// one database. Tiny batches (3-6 samples, beam 2 x 1 pass, short timing)
// keep the suite fast on two cores.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/sample_store.h"
#include "test_sql.h"
#include "test_support.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> autotune_args(const test::TempDir &dir, const std::string &out,
                                       const std::string &name, int iterations, int batch,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"tune",         DRIVER_TEST_GENERATORS,
                                  "-g",           name,
                                  "--mode",       "autotune",
                                  "--device",     "opencl",
                                  "--gpu",        "h100",
                                  "--iterations", std::to_string(iterations),
                                  "--batch",      std::to_string(batch),
                                  "--beam-size",  "2",
                                  "--passes",     "1",
                                  "-j",           "2",
                                  "--min-time",   "0.005",
                                  "--max-reps",   "20",
                                  "--epochs",     "20",
                                  "-o",           dir / out,
                                  "--db",         dir / "db.sqlite"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// Every (batch, idx) of the run exactly once, each sample complete (failed,
// or benchmarked).
void check_complete_and_unique(const std::string &db_path, int64_t run, int iterations, int batch) {
    db::Database database = db::Database::open_existing(db_path);
    db::SampleStore store(database);
    auto rows = store.samples_of_run(run);
    CHECK(rows.size() == static_cast<std::size_t>(iterations * batch));
    std::set<std::pair<int, int>> keys;
    for (const auto &s : rows) {
        keys.insert({s.batch, s.idx});
        CHECK(s.batch < iterations);
        CHECK(s.idx < batch);
        CHECK((s.status != "ok" || !s.benchmark.empty()));
    }
    CHECK(keys.size() == rows.size());
}

int64_t count_or_zero(const std::string &db_path, const std::string &sql) {
    if (!fs::exists(db_path)) return 0;
    try {
        return test::sql_int(db_path, sql);
    } catch (const std::exception &) {
        return 0; // being created
    }
}

} // namespace

TEST_CASE(
    "autotune --retrain always searches the second batch with weights retrained on the first and records "
    "them",
    "[autotune]") {
    test::TempDir dir;
    ProcessResult r = test::run_gpusched(
        autotune_args(dir, "out", "tiny_stencil", 2, 6, {"--json", "--retrain", "always"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    const int64_t run = j["run_id"];
    const std::string db_path = dir / "db.sqlite";
    CHECK(j["end"] == "finished");
    CHECK(j["samples"] == 12);
    check_complete_and_unique(db_path, run, 2, 6);
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = " + std::to_string(run)) == "finished");

    // Batch 0: the embedded weights (no row); batch 1: a new weights file,
    // recorded with what it was trained on (batch 0's measured samples).
    REQUIRE(j["batches"].size() == 2);
    CHECK(j["batches"][0]["weights_id"].is_null());
    REQUIRE(j["batches"][1]["weights_id"].is_number());
    const int64_t weights_id = j["batches"][1]["weights_id"];
    const std::string weights_path = j["batches"][1]["weights"];
    CHECK(fs::exists(weights_path));
    const auto trained_on = nlohmann::json::parse(
        test::sql_text(db_path, "SELECT trained_on FROM weights WHERE id = " + std::to_string(weights_id)));
    CHECK(trained_on["run_id"] == run);
    CHECK(trained_on["device"].get<std::string>().rfind("pocl-", 0) == 0);
    const int64_t measured0 = j["batches"][0]["measured"];
    CHECK(measured0 >= 2);
    CHECK(static_cast<int64_t>(trained_on["samples"].size()) == measured0);

    // Every sample of batch 1 searched with that file, none of batch 0 did.
    db::Database database = db::Database::open_existing(db_path);
    db::SampleStore store(database);
    for (const auto &s : store.samples_of_run(run)) {
        const auto cfg = nlohmann::json::parse(s.search_config);
        if (s.batch == 0)
            CHECK_FALSE(cfg.contains("weights_path"));
        else
            CHECK(cfg.value("weights_path", "") == weights_path);
    }
    CHECK(test::sql_text(db_path, "SELECT provenance FROM weights WHERE id = " + std::to_string(weights_id))
              .find("autotune run " + std::to_string(run) + " after batch 0") != std::string::npos);

    // Learning statistics per batch, stored and shown by db stats.
    CHECK(j["batches"][0]["spearman"].is_number());
    CHECK(j["batches"][0]["regret"].get<double>() >= 1.0);
    ProcessResult st = test::run_gpusched({"db", "--db", db_path, "stats"});
    INFO(st.err);
    REQUIRE(st.ok());
    CHECK(st.out.find("weights embedded") != std::string::npos);
    CHECK(st.out.find("regret") != std::string::npos);
    for (const auto &f : j["files"])
        CHECK(fs::exists(f.get<std::string>()));
    CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
}

TEST_CASE(
    "autotune by default adopts a retraining only after cross-validating it, and its log and weights rows "
    "say which it did",
    "[autotune][retraining-check]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(autotune_args(dir, "out", "tiny_stencil", 2, 6, {"--retrain", "if-better"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const std::string db_path = dir / "db.sqlite";
    const int64_t run = test::sql_int(db_path, "SELECT max(id) FROM runs");
    const std::string config =
        test::sql_text(db_path, "SELECT config FROM runs WHERE id = " + std::to_string(run));
    CHECK(nlohmann::json::parse(config)["retrain"] == "if-better");
    // Six measured samples, two folds of three: the check judged something.
    CHECK(r.err.find("2-fold cross-validation, ") != std::string::npos);
    CHECK(r.err.find("nothing to judge") == std::string::npos);
    const bool kept = r.err.find("kept batch 0's weights for batch 1") != std::string::npos;
    const bool adopted = r.err.find("retrained on the measured samples: batch 1") != std::string::npos;
    REQUIRE(kept != adopted); // exactly one decision, named
    const std::string batch1_weights =
        test::sql_text(db_path, "SELECT coalesce(weights_id, 'none') FROM autotune_batches WHERE run_id = " +
                                    std::to_string(run) + " AND batch = 1");
    const int64_t weights_rows = test::sql_int(db_path, "SELECT count(*) FROM weights");
    if (kept) {
        // Batch 1 searched with batch 0's (embedded) weights; nothing was written.
        CHECK(batch1_weights == "none");
        CHECK(weights_rows == 0);
    } else {
        CHECK(batch1_weights != "none");
        CHECK(weights_rows == 1);
        CHECK(test::sql_text(db_path, "SELECT provenance FROM weights")
                  .find("adopted after 2-fold cross-validation") != std::string::npos);
    }
}

TEST_CASE("autotune resumed after a SIGKILL in the middle of a batch loses and doubles no sample",
          "[autotune][resume]") {
    test::TempDir dir;
    const std::string db_path = dir / "db.sqlite";
    const pid_t pid =
        test::spawn_gpusched(autotune_args(dir, "out", "tiny_stencil", 2, 4), dir / "first.log");
    // Kill when batch 1 has begun: batch 0 finished and retrained, batch 1 partly stored.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    int64_t stored_before = 0;
    while (std::chrono::steady_clock::now() < give_up) {
        stored_before = count_or_zero(db_path, "SELECT count(*) FROM samples WHERE batch = 1");
        if (stored_before >= 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(stored_before >= 1);
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("the killed run's log: " << test::read_file(dir / "first.log") << "\nwait status " << status);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);

    // What the kill left: a valid database, a run still marked running,
    // batch 1 incomplete.
    CHECK(test::sql_text(db_path, "PRAGMA integrity_check") == "ok");
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = 1") == "running");
    const int64_t complete_before =
        test::sql_int(db_path, "SELECT count(*) FROM samples WHERE status != 'ok' OR "
                               "benchmark IS NOT NULL");
    CHECK(complete_before < 8);
    const std::string ids_before = test::stored_sample_keys(db_path);
    const int64_t weights_rows = test::sql_int(db_path, "SELECT count(*) FROM weights");

    ProcessResult r = test::run_gpusched({"tune", "--mode", "autotune", "--device", "opencl", "--resume", "1",
                                          "-o", dir / "out", "--db", db_path, "-j", "2", "--json"});
    INFO("first: " << test::read_file(dir / "first.log") << "\nresume stdout: " << r.out
                   << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["resumed"] == true);
    CHECK(j["run_id"] == 1);
    CHECK(j["samples"] == 8);
    check_complete_and_unique(db_path, 1, 2, 4);
    // The rows stored before the kill are the same rows (same ids), kept.
    const std::string ids_after = test::stored_sample_keys(db_path);
    CHECK(ids_after.rfind(ids_before, 0) == 0);
    // Batch 1 kept its recorded weights: no retraining for it happened again.
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM weights") == weights_rows);
    CHECK(test::sql_int(
              db_path,
              "SELECT count(DISTINCT search_config ->> '$.weights_path') FROM samples WHERE batch = 1") == 1);
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = 1") == "finished");
    CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
}

TEST_CASE("autotune killed while retraining between batches resumes by retraining and loses no sample",
          "[autotune][resume]") {
    test::TempDir dir;
    const std::string db_path = dir / "db.sqlite";
    // Many epochs: retraining on batch 0's 4 samples takes seconds, a window to kill in.
    std::vector<std::string> args = autotune_args(dir, "out", "tiny_stencil", 2, 4);
    const auto epochs = std::find(args.begin(), args.end(), "--epochs");
    REQUIRE(epochs != args.end());
    *(epochs + 1) = "100000";
    const pid_t pid = test::spawn_gpusched(args, dir / "first.log");
    // Batch 0 measured (its statistics stored) and batch 1 not begun: retraining.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    bool retraining = false;
    while (!retraining && std::chrono::steady_clock::now() < give_up) {
        retraining =
            count_or_zero(db_path,
                          "SELECT count(*) FROM autotune_batches WHERE batch = 0 AND status = 'measured'") ==
                1 &&
            count_or_zero(db_path, "SELECT count(*) FROM autotune_batches WHERE batch = 1") == 0;
        if (!retraining) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(retraining);
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("the killed run's log: " << test::read_file(dir / "first.log"));
    REQUIRE(WIFSIGNALED(status));
    CHECK(test::sql_text(db_path, "PRAGMA integrity_check") == "ok");
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE batch = 0 AND benchmark IS NOT NULL") ==
          4);
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM autotune_batches WHERE batch = 1") == 0);
    const std::string ids_before = test::stored_sample_keys(db_path);

    // The resume (the run's stored options) retrains after batch 0 and measures batch 1.
    ProcessResult r = test::run_gpusched({"tune", "--mode", "autotune", "--device", "opencl", "--resume", "1",
                                          "-o", dir / "out", "--db", db_path, "-j", "2", "--json"});
    INFO("resume stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["resumed"] == true);
    CHECK(j["samples"] == 8);
    check_complete_and_unique(db_path, 1, 2, 4);
    CHECK(test::stored_sample_keys(db_path).rfind(ids_before, 0) == 0);
    // Batch 1 searched with the weights the resume's retraining wrote and recorded.
    const std::string weights = test::sql_text(
        db_path,
        "SELECT w.path FROM autotune_batches b JOIN weights w ON w.id = b.weights_id WHERE b.batch = 1");
    CHECK(fs::exists(weights));
    CHECK(test::sql_int(db_path,
                        "SELECT count(DISTINCT search_config ->> '$.weights_path') FROM samples WHERE "
                        "batch = 1") == 1);
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = 1") == "finished");
    CHECK(test::sql_text(db_path, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("autotune stopped by SIGTERM or SIGINT marks the run interrupted and exits 130 and its resume "
          "completes it "
          "with no sample doubled",
          "[autotune][resume]") {
    // What a cron job's timeout or `kill` sends, and Ctrl-C.
    const int sig = GENERATE(SIGTERM, SIGINT);
    INFO("signal " << sig);
    test::TempDir dir;
    const std::string db_path = dir / "db.sqlite";
    const pid_t pid =
        test::spawn_gpusched(autotune_args(dir, "out", "tiny_stencil", 2, 4), dir / "first.log");
    // Once batch 0 has stored a sample.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    int64_t stored = 0;
    while (std::chrono::steady_clock::now() < give_up) {
        stored = count_or_zero(db_path, "SELECT count(*) FROM samples");
        if (stored >= 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(stored >= 1);
    REQUIRE(kill(pid, sig) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("the stopped run's log: " << test::read_file(dir / "first.log") << "\nwait status " << status);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK(test::sql_text(db_path, "PRAGMA integrity_check") == "ok");
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = 1") == "interrupted");
    CHECK(test::read_file(dir / "first.log").find("continue with --resume 1") != std::string::npos);
    // It stops without starting new work: compiled samples not yet timed stay
    // stored, unmeasured, for the resume to measure (not to search again).
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples") < 8);
    const std::string ids_before = test::stored_sample_keys(db_path);

    ProcessResult r = test::run_gpusched({"tune", "--mode", "autotune", "--device", "opencl", "--resume", "1",
                                          "-o", dir / "out", "--db", db_path, "-j", "2", "--json"});
    INFO("resume stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["samples"] == 8);
    check_complete_and_unique(db_path, 1, 2, 4);
    const std::string ids_after = test::stored_sample_keys(db_path);
    CHECK(ids_after.rfind(ids_before, 0) == 0);
    CHECK(test::sql_text(db_path, "SELECT status FROM runs WHERE id = 1") == "finished");
}

TEST_CASE("autotune --max-samples stops at that many samples, writes the best and exits 3",
          "[autotune][budget]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(autotune_args(dir, "out", "tiny_stencil", 2, 4, {"--max-samples", "3", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 3);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["samples"] == 3);
    CHECK(j["stopped_by"] == "max samples");
    CHECK(j["best_ms"].is_number());
    CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
    const std::string db_path = dir / "db.sqlite";
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE status = 'ok' AND benchmark IS NULL") ==
          0);
    CHECK(test::sql_text(db_path, "SELECT status || ':' || stopped_by FROM runs WHERE id = 1") ==
          "finished:max samples");
    CHECK(test::sql_int(db_path, "SELECT best_sample_id IS NOT NULL FROM runs WHERE id = 1") == 1);
}

TEST_CASE("autotune --time-budget stops at a sample boundary, writes the best and exits 3",
          "[autotune][budget]") {
    test::TempDir dir;
    ProcessResult r = test::run_gpusched(
        autotune_args(dir, "out", "tiny_stencil", 3, 4, {"--time-budget", "8s", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 3);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["stopped_by"] == "time budget");
    CHECK(j["samples"].get<int>() >= 1);
    CHECK(j["samples"].get<int>() < 12);
    const std::string db_path = dir / "db.sqlite";
    // Every sample started was finished: none stored without its measurement.
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE status = 'ok' AND benchmark IS NULL") ==
          0);
    if (j["best_ms"].is_number()) CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
}

TEST_CASE("autotune whose budget runs out before its first sample says the reference and baselines took it",
          "[autotune][budget]") {
    test::TempDir dir;
    ProcessResult r = test::run_gpusched(
        autotune_args(dir, "out", "tiny_stencil", 3, 4, {"--time-budget", "1s", "--baselines", "naive"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 3);
    CHECK(r.out.find("0 samples (0 this time)") != std::string::npos);
    CHECK(
        r.out.find("The budget ran out before the first sample: the CPU reference and the baselines took") !=
        std::string::npos);
    CHECK(test::sql_int(dir / "db.sqlite", "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id "
                                           "WHERE r.autoscheduler = 'gpusched'") == 0);
}

TEST_CASE("two autotune runs on two pipelines write one database at once", "[autotune][db]") {
    test::TempDir dir;
    ProcessResult a, b;
    std::thread other([&] { b = test::run_gpusched(autotune_args(dir, "out-b", "row_sums", 1, 3)); });
    a = test::run_gpusched(autotune_args(dir, "out-a", "tiny_stencil", 1, 3));
    other.join();
    INFO("a: " << a.err << "\nb: " << b.err);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    const std::string db_path = dir / "db.sqlite";
    CHECK(test::sql_int(db_path,
                        "SELECT count(*) FROM runs WHERE mode = 'autotune' AND status = 'finished'") == 2);
    CHECK(test::sql_int(db_path, "SELECT count(DISTINCT pipeline_id) FROM runs") == 2);
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples") == 6);
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM autotune_batches WHERE status = 'finished'") == 2);
    CHECK(test::sql_text(db_path, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("autotune times its baselines once per run with the same runner and a resume reads them back",
          "[autotune][baselines]") {
    test::TempDir dir;
    const std::string db_path = dir / "db.sqlite";
    ProcessResult r = test::run_gpusched(autotune_args(
        dir, "out", "tiny_stencil", 2, 3, {"--max-samples", "3", "--baselines", "naive", "--json"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 3);
    auto j = nlohmann::json::parse(r.out);
    const int64_t run = j["run_id"];
    REQUIRE(j["baselines"].size() == 1);
    const auto &b = j["baselines"][0];
    CHECK(b["source"] == "naive");
    CHECK(b["measured_now"] == true);
    REQUIRE(b["median_ms"].is_number());
    REQUIRE(j["best_ms"].is_number());
    CHECK(b["speedup"].get<double>() == Approx(b["median_ms"].get<double>() / j["best_ms"].get<double>()));

    // Its own run, naming the autotune run, measured on the run's device with its output checked.
    const std::string baseline_run = std::to_string(b["run_id"].get<int64_t>());
    CHECK(test::sql_text(db_path, "SELECT mode || ' ' || autoscheduler || ' ' || status || ' ' || "
                                  "(config ->> '$.baseline_of_run') FROM runs WHERE id = " +
                                      baseline_run) == "autotune naive finished " + std::to_string(run));
    CHECK(test::sql_text(db_path, "SELECT validation FROM samples WHERE run_id = " + baseline_run) ==
          "passed");
    CHECK(test::sql_text(db_path, "SELECT device FROM samples WHERE run_id = " + baseline_run) ==
          test::sql_text(db_path, "SELECT device FROM samples WHERE run_id = " + std::to_string(run) +
                                      " AND benchmark IS NOT NULL LIMIT 1"));
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE run_id = " + std::to_string(run)) == 3);

    // The resume finishes the run and shows the stored baseline without timing it again.
    ProcessResult again = test::run_gpusched({"tune", "--mode", "autotune", "--device", "opencl", "--resume",
                                              std::to_string(run), "--baselines", "naive", "-o", dir / "out",
                                              "--db", db_path, "-j", "2"});
    INFO("resume stdout: " << again.out << "\nstderr: " << again.err);
    REQUIRE(again.ok());
    CHECK(again.out.find("naive") != std::string::npos);
    CHECK(again.out.find("measured earlier in this run") != std::string::npos);
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM runs WHERE autoscheduler = 'naive'") == 1);
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE run_id = " + std::to_string(run)) == 6);
}

TEST_CASE("autotune keeps a baseline measured faster than every sample, and the database says so",
          "[autotune][baselines]") {
    test::TempDir dir;
    const std::string db_path = dir / "db.sqlite";
    // fault=slow: every autoscheduled build loops 2^14 times per pixel for
    // nothing, the naive baseline's does not.
    auto args =
        autotune_args(dir, "out", "planted_fault", 1, 2, {"fault=slow", "--baselines", "naive", "--json"});
    args[1] = RUNNER_TEST_GENERATORS;
    ProcessResult r = test::run_gpusched(args);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["kept_baseline"] == "naive");
    REQUIRE(j["best_ms"].is_number());
    CHECK(j["baselines"][0]["median_ms"].get<double>() < j["best_ms"].get<double>());
    CHECK(fs::exists(dir / "out/planted_fault.a"));
    CHECK_FALSE(fs::exists(dir / "out/planted_fault.gpusched.json"));
    const std::string run = std::to_string(j["run_id"].get<int64_t>());
    CHECK(test::sql_text(db_path, "SELECT kept_source FROM runs WHERE id = " + run) == "naive");
    CHECK(test::sql_text(db_path,
                         "SELECT b.autoscheduler FROM runs r JOIN samples s ON s.id = r.best_sample_id "
                         "JOIN runs b ON b.id = s.run_id WHERE r.id = " +
                             run) == "naive");
}

TEST_CASE("Halide's own autoschedulers are baselines from the Halide that makes GPU schedules with them",
          "[baselines]") {
    // Li2018 in every supported Halide; Anderson2021 ships from 16;
    // Mullapudi2016 schedules GPUs from 21. Where one is missing, the reason
    // names the Halide that has it and the one gpusched is built with.
    const std::vector<std::string> names = schedule_source_names();
    auto offered = [&](const std::string &n) {
        return std::find(names.begin(), names.end(), n) != names.end();
    };
    CHECK(offered("li2018"));
    CHECK(find_schedule_source("li2018")->plugin_path->find("libautoschedule_li2018.so") !=
          std::string::npos);
    for (const auto &[name, since] : {std::pair<std::string, int>{"anderson2021", 16},
                                      {"anderson2021-paper", 16},
                                      {"mullapudi2016", 21}}) {
        INFO(name << " with Halide " << GPUSCHED_HALIDE_VERSION);
        const bool here = GPUSCHED_HALIDE_VERSION >= since;
        CHECK(offered(name) == here);
        CHECK(find_schedule_source(name).has_value() == here);
        if (here) {
            CHECK(fs::exists(*find_schedule_source(name)->plugin_path));
            CHECK(schedule_source_unavailable(name).empty());
            if (name == "anderson2021") CHECK(find_schedule_source(name)->options.empty());
            if (name == "anderson2021-paper") {
                // The paper's settings, which Halide's defaults leave off.
                CHECK(find_schedule_source(name)->options ==
                      std::map<std::string, std::string>{{"randomize_tilings", "1"},
                                                         {"freeze_inline_compute_root", "1"}});
                CHECK(find_schedule_source(name)->halide_name == "Anderson2021");
            }
            if (name == "mullapudi2016") {
                // Halide 21's Mullapudi2016 writes GPU schedules only when asked.
                CHECK(find_schedule_source(name)->options ==
                      std::map<std::string, std::string>{{"experimental_gpu_schedule", "1"}});
                GeneratorInvocation inv;
                inv.autoscheduler = "Mullapudi2016";
                inv.autoscheduler_options = find_schedule_source(name)->options;
                const std::vector<std::string> argv = generator_argv(inv);
                CHECK(std::find(argv.begin(), argv.end(), "autoscheduler.experimental_gpu_schedule=1") !=
                      argv.end());
                // And its schedule for a CUDA target has CUDA kernels.
                test::TempDir dir;
                ProcessResult r = test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil",
                                                      "--autoscheduler", "mullapudi2016", "-o", dir / "out",
                                                      "--db", dir / "db.sqlite", "--no-validate", "--json"});
                INFO("stderr: " << r.err);
                REQUIRE(r.ok());
                const auto j = nlohmann::json::parse(r.out);
                CHECK(j["samples"][0]["ptxas"]["status"] == "checked");
                CHECK_FALSE(j["samples"][0]["ptxas"]["kernels"].empty());
            }
        } else {
            CHECK_THAT(schedule_source_unavailable(name),
                       Catch::Contains("from Halide " + std::to_string(since)) &&
                           Catch::Contains("built with Halide " + std::to_string(GPUSCHED_HALIDE_VERSION)));
        }
    }
    CHECK(schedule_source_unavailable("li2019") == "unknown schedule source 'li2019'");
}

TEST_CASE("autotune --resume refuses an option that would change the run instead of ignoring it",
          "[autotune][bad-input]") {
    test::TempDir dir;
    for (const std::vector<std::string> &given : {std::vector<std::string>{"--epochs", "20"},
                                                  {"--batch", "4"},
                                                  {"--seed", "9"},
                                                  {"--gpu", "a100"},
                                                  {"--no-flush"}}) {
        std::vector<std::string> args = {"tune",           "--mode", "autotune", "--device",  "opencl",
                                         "--resume",       "1",      "-o",       dir / "out", "--db",
                                         dir / "db.sqlite"};
        args.insert(args.end(), given.begin(), given.end());
        const ProcessResult r = test::run_gpusched(args);
        INFO(given[0] << ": " << r.err);
        CHECK(r.exit_code == 1);
        CHECK(r.err.find(given[0] + ": a resumed run keeps the options it started with (run 1)") !=
              std::string::npos);
    }
    CHECK_FALSE(fs::exists(dir / "db.sqlite")); // refused before the database is touched
}

TEST_CASE("autotune refuses an unknown baseline in one line before any work", "[autotune][bad-input]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(autotune_args(dir, "out", "tiny_stencil", 1, 2, {"--baselines", "li2019"}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("unknown baseline 'li2019'") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "db.sqlite"));
}
