// The slurm executor against a real Slurm (slurm_cluster.h): Top 5 on POCL
// whose benchmarks run as one job array, a job that fails through Slurm and
// is retried, and an Autotune driver SIGKILLed while its jobs run, resumed
// with --resume, adopting them. Tiny generator and samples; short polls
// (GPUSCHED_SLURM_POLL_MS) keep each case well under two minutes.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "slurm_cluster.h"
#include "test_support.h"

extern char **environ;

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> top5_args(const test::TempDir &dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"tune",       DRIVER_TEST_GENERATORS,
                                  "-g",         "tiny_stencil",
                                  "--mode",     "top5",
                                  "--device",   "opencl",
                                  "--gpu",      "h100",
                                  "--samples",  "3",
                                  "--top",      "3",
                                  "--beam-size", "2",
                                  "--passes",   "1",
                                  "-j",         "2",
                                  "--min-time", "0.005",
                                  "--max-reps", "20",
                                  "--executor", "slurm",
                                  "--work-dir", dir / "work",
                                  "-o",         dir / "out",
                                  "--db",       dir / "db.sqlite",
                                  "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

std::map<std::string, std::string> with(std::map<std::string, std::string> env,
                                        const std::map<std::string, std::string> &more) {
    env.insert(more.begin(), more.end());
    env["GPUSCHED_SLURM_POLL_MS"] = "300";
    return env;
}

// Each measured row's detail: the measurement and how it was executed.
std::vector<nlohmann::json> details(const std::string &db_path, const std::string &where) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare("SELECT benchmark_detail FROM samples WHERE benchmark_detail IS NOT NULL AND " + where + " ORDER BY id");
    std::vector<nlohmann::json> out;
    while (q.step())
        out.push_back(nlohmann::json::parse(q.column_text(0)));
    return out;
}

int64_t scalar(const std::string &db_path, const std::string &sql) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare(sql);
    return q.step() ? q.column_int(0) : -1;
}

std::string array_job_of(const std::string &element) { return element.substr(0, element.find('_')); }

} // namespace

TEST_CASE("top5 through the slurm executor benchmarks its samples as one job array and stores each result",
          "[slurm]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    ProcessResult r = test::run_gpusched(top5_args(dir), with(cluster.env(), {}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["benchmarked"].size() >= 2);
    for (const auto &e : j["benchmarked"])
        CHECK(e["measurement"]["outcome"] == "measured");
    CHECK(j["chosen"].is_string());

    // Every benchmarked sample's row: measured on POCL, by a job of one array.
    const std::string db_path = dir / "db.sqlite";
    const auto rows = details(db_path, "benchmark = 'measured'");
    REQUIRE(rows.size() == j["benchmarked"].size());
    std::set<std::string> arrays, elements;
    for (const auto &d : rows) {
        CHECK(d["device"].get<std::string>().rfind("pocl-", 0) == 0);
        CHECK(d["median_ms"].get<double>() > 0);
        const auto &ex = d["execution"];
        CHECK(ex["executor"] == "slurm");
        REQUIRE(ex["attempts"].size() == 1);
        const std::string job = ex["attempts"][0]["job"];
        arrays.insert(array_job_of(job));
        elements.insert(job);
        // The job that ran it says so itself, from inside Slurm.
        CHECK(ex["job"]["array_job_id"] == array_job_of(job));
        CHECK(!ex["job"]["job_id"].get<std::string>().empty());
    }
    CHECK(arrays.size() == 1);
    CHECK(elements.size() == rows.size());
    CHECK(scalar(db_path, "SELECT count(*) FROM runs WHERE status = 'finished'") == 1);
    // Each job wrote its result to a file of its own in the shared folder.
    const std::string scope = dir / ("work/run-" + std::to_string(j["run_id"].get<int64_t>()));
    int results = 0;
    for (const auto &f : fs::directory_iterator(scope + "/results"))
        results += f.path().extension() == ".json";
    CHECK(results == static_cast<int>(rows.size()));
    CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
}

TEST_CASE("a benchmark job that fails in Slurm is recorded with Slurm's reason and retried", "[slurm]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    // The worker of "sample 0" exits 70 on its first attempt: a real failed job.
    ProcessResult r = test::run_gpusched(top5_args(dir),
                                         with(cluster.env(), {{"GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT", "sample 0"}}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const std::string db_path = dir / "db.sqlite";
    const auto rows = details(db_path, "idx = 0 AND benchmark IS NOT NULL");
    REQUIRE(rows.size() == 1);
    const auto &d = rows.front();
    CHECK(d["outcome"] == "measured");
    const auto &attempts = d["execution"]["attempts"];
    REQUIRE(attempts.size() == 2);
    CHECK(attempts[0]["state"] == "FAILED");
    CHECK(attempts[0]["reason"] == "NonZeroExitCode");
    CHECK(attempts[0]["exit_code"] == "70:0");
    CHECK(attempts[0]["failure"].get<std::string>().find("GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT") != std::string::npos);
    CHECK(attempts[1]["state"] == "COMPLETED");
    // The retry is a new job, in an array of its own.
    CHECK(array_job_of(attempts[0]["job"]) != array_job_of(attempts[1]["job"]));
    // The other samples ran once.
    for (const auto &o : details(db_path, "idx != 0 AND benchmark = 'measured'"))
        CHECK(o["execution"]["attempts"].size() == 1);
}
