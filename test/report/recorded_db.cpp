#include "recorded_db.h"

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "db/database.h"
#include "test_support.h"

namespace gpusched::test {
namespace {

namespace fs = std::filesystem;

const std::string kDir = REPORT_FIXTURE_DIR;

// Held while the database is made or read, so parallel test processes wait.
class DirLock {
public:
    DirLock() {
        fs::create_directories(fs::path(kDir).parent_path());
        fd_ = ::open((kDir + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
        if (fd_ >= 0) ::flock(fd_, LOCK_EX);
    }
    ~DirLock() {
        if (fd_ >= 0) ::close(fd_);
    }

private:
    int fd_ = -1;
};

std::vector<std::string> tune_args(const std::string &name, const std::string &mode, const std::string &out,
                                   std::vector<std::string> extra) {
    std::vector<std::string> a = {"tune",        DRIVER_TEST_GENERATORS,
                                  "-g",          name,
                                  "--mode",      mode,
                                  "--device",    "opencl",
                                  "--gpu",       "h100",
                                  "--beam-size", "2",
                                  "--passes",    "1",
                                  "-j",          "2",
                                  "--min-time",  "0.005",
                                  "--max-reps",  "20",
                                  "-o",          kDir + "/" + out,
                                  "--db",        kDir + "/db.sqlite",
                                  "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

int64_t run_id_of(const ProcessResult &r) {
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("run_id") && j["run_id"].is_number() ? j["run_id"].get<int64_t>() : 0;
}

// The copy described in recorded_db.h: same rows, another device name.
int64_t relabel_run(const std::string &db_path, int64_t run) {
    db::Database database = db::Database::open_existing(db_path);
    int64_t copy = 0;
    database.transaction([&] {
        database
            .prepare("INSERT INTO runs (pipeline_id, mode, autoscheduler, config, status, gpusched_version, "
                     "best_sample_id, error, started_at, finished_at, stopped_by) SELECT pipeline_id, mode, "
                     "autoscheduler, config, status, gpusched_version, NULL, error, started_at, finished_at, "
                     "stopped_by FROM runs WHERE id = ?1")
            .bind(1, run)
            .run();
        copy = database.last_insert_id();
        database
            .prepare(
                "INSERT INTO samples (run_id, batch, idx, seed, search_config, decisions, schedule_source, "
                "featurization, predicted_cost, autoschedule_s, compile_s, ptxas_status, ptxas_detail, "
                "runtime_min_ms, runtime_median_ms, runtime_reps, validation, status, error, "
                "validation_detail, device, benchmark, benchmark_detail) SELECT ?2, batch, idx, seed, "
                "search_config, decisions, schedule_source, featurization, predicted_cost, autoschedule_s, "
                "compile_s, ptxas_status, ptxas_detail, runtime_min_ms, runtime_median_ms, runtime_reps, "
                "validation, status, error, validation_detail, ?3, benchmark, benchmark_detail FROM samples "
                "WHERE run_id = ?1 ORDER BY id")
            .bind(1, run)
            .bind(2, copy)
            .bind(3, kRelabeledDevice)
            .run();
        database
            .prepare(
                "INSERT INTO autotune_batches (run_id, batch, weights_id, status, samples, measured, failed, "
                "spilled, best_ms, spearman, kendall, regret, retrain_s) SELECT ?2, batch, weights_id, "
                "status, samples, measured, failed, spilled, best_ms, spearman, kendall, regret, retrain_s "
                "FROM autotune_batches WHERE run_id = ?1")
            .bind(1, run)
            .bind(2, copy)
            .run();
    });
    return copy;
}

RecordedDb make() {
    RecordedDb r;
    r.dir = kDir;
    r.db_path = kDir + "/db.sqlite";
    std::error_code ec;
    fs::remove_all(kDir, ec);
    fs::create_directories(kDir);
    auto fail = [&](const std::string &what, const ProcessResult &p) {
        r.error = what + ": " + p.describe_failure() + "\nstdout: " + p.out + "\nstderr: " + p.err;
        return r;
    };
    ProcessResult at = run_gpusched(tune_args("tiny_stencil", "autotune", "autotune",
                                              {"--iterations", "2", "--batch", "3", "--epochs", "20"}));
    if (!at.ok() || !(r.autotune_run = run_id_of(at))) return fail("autotune of tiny_stencil", at);
    ProcessResult t5 = run_gpusched(tune_args(
        "tiny_stencil", "top5", "top5", {"--samples", "3", "--top", "2", "--baselines", "naive,li2018"}));
    if (!t5.ok() || !(r.top5_run = run_id_of(t5))) return fail("top5 of tiny_stencil", t5);
    // Every sample fails, so gpusched exits 1; the run and its samples are
    // stored all the same.
    ProcessResult wr = run_gpusched(tune_args("wrong_on_gpu", "autotune", "wrong",
                                              {"--iterations", "1", "--batch", "2", "--epochs", "20"}));
    if (wr.exit_code != 1) return fail("autotune of wrong_on_gpu (expected exit 1: no sample measured)", wr);
    {
        db::Database database = db::Database::open_existing(r.db_path);
        auto q = database.prepare("SELECT max(r.id) FROM runs r JOIN pipelines p ON p.id = r.pipeline_id "
                                  "WHERE p.generator_name = 'wrong_on_gpu'");
        if (q.step() && !q.is_null(0)) r.wrong_run = q.column_int(0);
    }
    if (!r.wrong_run) return fail("the wrong_on_gpu run is not in the database", wr);
    r.relabeled_run = relabel_run(r.db_path, r.autotune_run);
    std::ofstream(kDir + "/fixture.json") << nlohmann::json{
        {"autotune", r.autotune_run},
        {"top5", r.top5_run},
        {"wrong", r.wrong_run},
        {"relabeled", r.relabeled_run}}.dump();
    return r;
}

} // namespace

RecordedDb remake_recorded_db() {
    DirLock lock;
    return make();
}

const RecordedDb &recorded_db() {
    static const RecordedDb db = [] {
        DirLock lock;
        std::ifstream f(kDir + "/fixture.json");
        const auto j = nlohmann::json::parse(f, nullptr, false);
        if (!f || !j.is_object()) return make();
        RecordedDb r;
        r.dir = kDir;
        r.db_path = kDir + "/db.sqlite";
        r.autotune_run = j["autotune"];
        r.top5_run = j["top5"];
        r.wrong_run = j["wrong"];
        r.relabeled_run = j["relabeled"];
        return r;
    }();
    return db;
}

} // namespace gpusched::test
