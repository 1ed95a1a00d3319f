// The slurm executor against a real Slurm (slurm_cluster.h): Top 5 on POCL
// whose benchmarks run as one job array, a job that fails through Slurm and
// is retried, and an Autotune driver SIGKILLed while its jobs run, resumed
// with --resume, adopting them. Tiny generator and samples; short polls
// (GPUSCHED_SLURM_POLL_MS) keep each case well under two minutes.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "slurm_cluster.h"
#include "test_sql.h"
#include "test_support.h"
#include "tuner/measure/runner/cache_flush_size.h"

extern char **environ;

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> top5_args(const test::TempDir &dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"tune",        DRIVER_TEST_GENERATORS,
                                  "-g",          "tiny_stencil",
                                  "--mode",      "top5",
                                  "--device",    "opencl",
                                  "--gpu",       "h100",
                                  "--samples",   "3",
                                  "--top",       "3",
                                  "--beam-size", "2",
                                  "--passes",    "1",
                                  "-j",          "2",
                                  "--min-time",  "0.005",
                                  "--max-reps",  "20",
                                  "--executor",  "slurm",
                                  "--work-dir",  dir / "work",
                                  "-o",          dir / "out",
                                  "--db",        dir / "db.sqlite",
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
    auto q = database.prepare("SELECT benchmark_detail FROM samples WHERE benchmark_detail IS NOT NULL AND " +
                              where + " ORDER BY id");
    std::vector<nlohmann::json> out;
    while (q.step())
        out.push_back(nlohmann::json::parse(q.column_text(0)));
    return out;
}

std::string array_job_of(const std::string &element) {
    return element.substr(0, element.find('_'));
}

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
        // How it was timed reaches the database through the worker's result
        // file: the node's clock, after a flush of twice its last-level cache.
        CHECK(d["timer"] == "host-clock");
        CHECK(d["flush_bytes"] == flush_bytes_for_cache(host_last_level_cache_bytes()));
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
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM runs WHERE status = 'finished'") == 1);
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
    ProcessResult r = test::run_gpusched(
        top5_args(dir), with(cluster.env(), {{"GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT", "sample 0"}}));
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
    CHECK(attempts[0]["failure"].get<std::string>().find("GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT") !=
          std::string::npos);
    CHECK(attempts[1]["state"] == "COMPLETED");
    // The retry is a new job, in an array of its own.
    CHECK(array_job_of(attempts[0]["job"]) != array_job_of(attempts[1]["job"]));
    // The other samples ran once.
    for (const auto &o : details(db_path, "idx != 0 AND benchmark = 'measured'"))
        CHECK(o["execution"]["attempts"].size() == 1);
}

namespace {

std::vector<std::string> autotune_args(const test::TempDir &dir, std::vector<std::string> extra) {
    std::vector<std::string> a = {"--mode", "autotune",        "--device",   "opencl", "--executor",
                                  "slurm",  "--work-dir",      dir / "work", "-o",     dir / "out",
                                  "--db",   dir / "db.sqlite", "-j",         "2"};
    a.insert(a.begin(), "tune");
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// The jobs of a manifest's tasks, "<array>_<index>" of each task's attempts.
std::vector<std::string> manifest_jobs(const nlohmann::json &m) {
    std::vector<std::string> jobs;
    for (const auto &t : m["tasks"])
        for (const auto &a : t["attempts"])
            jobs.push_back(a["job"]);
    return jobs;
}

} // namespace

TEST_CASE(
    "an autotune driver SIGKILLed while its Slurm jobs run is resumed and adopts them, submitting none again",
    "[slurm][resume]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    const auto env = with(cluster.env(), {});
    // Benchmarks of 4 s at least: the jobs are still running when the driver dies.
    const pid_t pid = test::spawn_gpusched(
        autotune_args(dir, {DRIVER_TEST_GENERATORS, "-g", "tiny_stencil", "--gpu", "h100", "--iterations",
                            "1", "--batch", "3", "--beam-size", "2", "--passes", "1", "--min-time", "4",
                            "--max-reps", "100000"}),
        dir / "first.log", env);
    const std::string manifest = dir / "work/run-1/manifest.json";
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    nlohmann::json before;
    while (std::chrono::steady_clock::now() < give_up) {
        if (fs::exists(manifest)) {
            before = nlohmann::json::parse(test::read_file(manifest), nullptr, false);
            if (!before.is_discarded() && before.contains("tasks") && before["tasks"].size() == 3 &&
                manifest_jobs(before).size() == 3)
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO("the first driver's log: " << test::read_file(dir / "first.log"));
    REQUIRE(manifest_jobs(before).size() == 3);
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));

    // The jobs outlive their driver: at least one is still pending or running.
    const ProcessResult q = cluster.command({"squeue", "--noheader", "--array", "--format=%i|%T"});
    INFO("squeue after the kill: " << q.out << q.err);
    REQUIRE(q.ok());
    CHECK((q.out.find("RUNNING") != std::string::npos || q.out.find("PENDING") != std::string::npos));
    const std::string db_path = dir / "db.sqlite";
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE benchmark IS NULL") >= 1);

    ProcessResult r = test::run_gpusched(autotune_args(dir, {"--resume", "1", "--json"}), env);
    INFO("resume stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());

    // Every sample once, each measured by the job the first driver submitted.
    CHECK(test::sql_int(db_path, "SELECT count(*) FROM samples WHERE run_id = 1") == 3);
    CHECK(test::sql_int(db_path, "SELECT count(DISTINCT idx) FROM samples WHERE run_id = 1") == 3);
    const auto rows = details(db_path, "run_id = 1 AND benchmark = 'measured'");
    CHECK(rows.size() == 3);
    const auto jobs_before = manifest_jobs(before);
    int adopted = 0;
    for (const auto &d : rows) {
        REQUIRE(d["execution"]["attempts"].size() == 1);
        const std::string job = d["execution"]["attempts"][0]["job"];
        CHECK(std::find(jobs_before.begin(), jobs_before.end(), job) != jobs_before.end());
        adopted += d["execution"]["adopted"].get<bool>();
    }
    // Samples measured before the kill were merged by the first driver; the rest were adopted.
    CHECK(adopted >= 1);
    const auto after = nlohmann::json::parse(test::read_file(manifest));
    CHECK(after["next_array"] == before["next_array"]);
    CHECK(manifest_jobs(after) == jobs_before);
    // Slurm saw exactly the three jobs of the first driver's array.
    const ProcessResult all =
        cluster.command({"squeue", "--noheader", "--array", "--states=all", "--format=%i"});
    REQUIRE(all.ok());
    std::set<std::string> seen;
    std::istringstream lines(all.out);
    for (std::string l; std::getline(lines, l);)
        if (!l.empty()) seen.insert(l);
    CHECK(seen == std::set<std::string>(jobs_before.begin(), jobs_before.end()));
}

TEST_CASE("top5 through the slurm executor interrupted by SIGTERM cancels its jobs and exits 130",
          "[slurm]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    // Benchmarks of 20 s at least: the jobs are surely running when the signal comes.
    const std::vector<std::string> args = top5_args(dir, {"--min-time", "20", "--max-reps", "1000000"});
    const pid_t pid = test::spawn_gpusched(args, dir / "driver.log", with(cluster.env(), {}));
    const std::string manifest = dir / "work/run-1/manifest.json";
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    std::vector<std::string> jobs;
    while (std::chrono::steady_clock::now() < give_up && jobs.size() < 3) {
        if (fs::exists(manifest)) {
            const auto m = nlohmann::json::parse(test::read_file(manifest), nullptr, false);
            if (!m.is_discarded() && m.contains("tasks")) jobs = manifest_jobs(m);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO("the driver's log: " << test::read_file(dir / "driver.log"));
    REQUIRE(jobs.size() == 3);
    // Signal once a job is running on the node, so a running job is cancelled too.
    std::string running;
    while (std::chrono::steady_clock::now() < give_up && running.empty()) {
        const ProcessResult q = cluster.command({"squeue", "--noheader", "--array", "--format=%i|%T"});
        std::istringstream lines(q.out);
        for (std::string l; std::getline(lines, l);)
            if (l.size() > 8 && l.substr(l.size() - 8) == "|RUNNING") running = l.substr(0, l.size() - 8);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE(!running.empty());
    REQUIRE(kill(pid, SIGTERM) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);

    // Slurm has nothing of this driver left to run: every job was cancelled
    // (a running job is COMPLETING for a moment while slurmd kills it).
    ProcessResult q;
    const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        q = cluster.command({"squeue", "--noheader", "--array", "--states=all", "--format=%i|%T"});
    } while (std::chrono::steady_clock::now() < settle && q.out.find("COMPLETING") != std::string::npos);
    INFO("squeue: " << q.out << q.err);
    REQUIRE(q.ok());
    CHECK(q.out.find("RUNNING") == std::string::npos);
    CHECK(q.out.find("PENDING") == std::string::npos);
    CHECK(q.out.find("COMPLETING") == std::string::npos);
    CHECK(q.out.find(running + "|CANCELLED") != std::string::npos);
    // Elements still pending are cancelled with their array, which squeue then lists as one line.
    for (const auto &job : jobs)
        CHECK((q.out.find(job + "|CANCELLED") != std::string::npos ||
               q.out.find(array_job_of(job) + "|CANCELLED") != std::string::npos));
    const std::string db_path = dir / "db.sqlite";
    db::Database database = db::Database::open_existing(db_path);
    auto run = database.prepare("SELECT status FROM runs WHERE id = 1");
    REQUIRE(run.step());
    CHECK(run.column_text(0) == "interrupted");
    const auto m = nlohmann::json::parse(test::read_file(manifest));
    for (const auto &t : m["tasks"])
        CHECK(t["status"] == "cancelled");
}

TEST_CASE("tune --executor slurm without a reachable Slurm refuses in one line before any work", "[slurm]") {
    test::TempDir dir;
    test::write_file(dir / "slurm.conf", "this is not a slurm.conf\n");
    ProcessResult r = test::run_gpusched(top5_args(dir), {{"SLURM_CONF", dir / "slurm.conf"}});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--executor slurm: Slurm does not answer") != std::string::npos);
    CHECK(!fs::exists(dir / "db.sqlite"));
    CHECK(!fs::exists(dir / "out/samples"));
}

TEST_CASE("tune --executor slurm with a partition the cluster lacks names it and exits 1 before any work",
          "[slurm]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched(top5_args(dir, {"--partition", "gpu-h100"}), with(cluster.env(), {}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("Slurm has no partition 'gpu-h100' (it has: debug)") != std::string::npos);
    CHECK(!fs::exists(dir / "out/samples"));
}

TEST_CASE(
    "slurm fields and a shared folder full of shell metacharacters reach sbatch and the job script whole and "
    "run no command",
    "[slurm][shell]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    // Separators, substitutions, quotes of both kinds, redirections, a
    // comment and a line break, each a command that would leave a file
    // named pwned-* in the shell's working folder (the job's --chdir). The
    // job script names the shared folder: it must reach the worker whole.
    const std::string nasty =
        dir / ("a b;touch pwned-semicolon|touch pwned-pipe&touch pwned-amp "
               "$(touch pwned-dollar)`touch pwned-backtick`'sq'\"dq\"<in>out*?[x]{y}~#$HOME\n"
               "touch pwned-newline");
    auto args = top5_args(dir, {"--account", "acct$(touch pwned-account);touch pwned-account2"});
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--work-dir") args[i + 1] = nasty + "/work";
    ProcessResult r = test::run_gpusched(args, with(cluster.env(), {}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(test::sql_int(dir / "db.sqlite", "SELECT count(*) FROM samples WHERE benchmark = 'measured'") >= 1);
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir.path(), ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        CHECK(it->path().filename().string().rfind("pwned", 0) != 0);
}

TEST_CASE("a nightly whose config names the slurm executor runs its pipeline's benchmarks as Slurm jobs",
          "[slurm][nightly]") {
    test::SlurmCluster cluster;
    test::TempDir dir;
    nlohmann::json config = {
        {"database", "db.sqlite"},
        {"schedules", "schedules"},
        {"work_dir", "work"},
        {"budget", "300s"},
        {"jobs", 2},
        {"executor", {{"kind", "slurm"}, {"work_dir", "jobs"}}},
        {"pipelines", nlohmann::json::array({{{"name", "stencil"},
                                              {"generator", DRIVER_TEST_GENERATORS},
                                              {"generator_name", "tiny_stencil"},
                                              {"mode", "top5"},
                                              {"device", "opencl"},
                                              {"gpu", "h100"},
                                              {"samples", 3},
                                              {"top", 2},
                                              {"beam_size", 2},
                                              {"passes", 1},
                                              {"timing", {{"min_time_s", 0.005}, {"max_reps", 20}}}}})}};
    test::write_file(dir / "nightly.json", config.dump(2));
    ProcessResult r =
        test::run_gpusched({"nightly", dir / "nightly.json", "--json"}, with(cluster.env(), {}));
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.ok());
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["pipelines"].size() == 1);
    CHECK(j["pipelines"][0]["status"] == "tuned");
    // Every measured sample came back from a Slurm job, through the
    // pipeline's own folder under the executor's work_dir.
    const auto rows = details(dir / "db.sqlite", "benchmark = 'measured'");
    REQUIRE(rows.size() >= 2);
    for (const auto &d : rows) {
        CHECK(d["execution"]["executor"] == "slurm");
        CHECK(!d["execution"]["attempts"][0]["job"].get<std::string>().empty());
    }
    CHECK(fs::exists(dir / "jobs/stencil"));
    CHECK(fs::exists(dir / "schedules/stencil.schedule.h"));
}
