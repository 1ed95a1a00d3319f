// The slurm executor (executor.h). A round's tasks are written to the
// shared work folder (work_folder.h) as they are submitted; when the round
// closes (finish()), they go to Slurm as one job array, one element per
// task, each element running `gpusched worker <scope folder> --array <n>`
// on its node. One thread of the driver then follows them, every poll
// period:
//
// 1. a task whose result file is there is done, whatever Slurm says of its
//    job (a node that died after writing it lost nothing);
// 2. otherwise its job's state comes from squeue (or sacct, once the job has
//    left slurmctld's memory): pending or running, it waits; FAILED,
//    TIMEOUT, PREEMPTED, NODE_FAIL, OUT_OF_MEMORY, CANCELLED (by someone
//    else), or COMPLETED without a result, is a failed attempt, recorded
//    with Slurm's state, reason, exit code and node (scontrol) and the last
//    line of the job's log, and the task goes into a new array, up to
//    max_attempts attempts; after that its measurement says why it never ran;
// 3. a job Slurm no longer knows and that left no result is a failed
//    attempt after a grace of several polls.
//
// Results are handed to the caller from this thread, so the driver alone
// writes the database. The manifest (every task with its attempts) is
// rewritten whole after each change: a driver started again with --resume on
// the same work folder adopts the tasks of the earlier one (adoptable()),
// following their jobs instead of submitting them again. The stop flag
// (SIGINT/SIGTERM) scancels every job the round still waits for.

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/elapsed.h"
#include "common/errors.h"
#include "tuner/install_layout.h"
#include "tuner/measure/executor/executor.h"
#include "tuner/measure/executor/slurm_commands.h"
#include "tuner/measure/executor/work_folder.h"
#include "tuner/measure/runner/device_traits.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Polls before a missing job counts as lost, and before a COMPLETED job
// with no result file does: a shared file system may show a file written on
// another node a few seconds late (NFS attribute caching).
constexpr int kLostPolls = 10;
constexpr int kNoResultPolls = 5;

struct Attempt {
    std::string array_job;
    int index = 0;
    double submitted_at = 0; // seconds since the epoch
    SlurmJobState last;      // as last seen
    std::string failure;     // why it did not give a result; empty: it did, or it still may
    std::string element() const { return array_job + "_" + std::to_string(index); }
};

struct Task {
    int64_t id = 0;
    std::string key, label;
    std::string status = "queued"; // queued | submitted | done | failed | cancelled
    std::vector<Attempt> attempts;
    bool waiting = false; // this round waits for its result
    bool adopted = false;
    int unknown_polls = 0, no_result_polls = 0;
};

nlohmann::json attempt_json(const Attempt &a) {
    return {{"job", a.element()},      {"submitted_at", a.submitted_at}, {"state", a.last.state},
            {"reason", a.last.reason}, {"exit_code", a.last.exit_code},  {"node", a.last.node},
            {"failure", a.failure}};
}

Attempt attempt_from_json(const nlohmann::json &j) {
    Attempt a;
    const std::string job = j.at("job").get<std::string>();
    const auto us = job.rfind('_');
    a.array_job = job.substr(0, us);
    a.index = std::stoi(job.substr(us + 1));
    a.submitted_at = j.value("submitted_at", 0.0);
    a.last = {j.value("state", ""), j.value("reason", ""), j.value("exit_code", ""), j.value("node", "")};
    a.failure = j.value("failure", "");
    return a;
}

// A word for sh, in single quotes: nothing inside is expanded, and a single
// quote is closed, escaped and reopened ('\''). Not named `quoted`: for a
// non-const std::string argument, argument-dependent lookup preferred
// std::quoted, whose double quotes let sh run $(...) and `...` in a path.
std::string sh_single_quoted(const std::string &word) {
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

class SlurmExecutor : public Executor {
public:
    SlurmExecutor(const ExecutorOptions &o, std::string device) : opt_(o), device_(std::move(device)) {}
    ~SlurmExecutor() override {
        if (follower_.joinable()) finish();
    }

    const char *name() const override { return "slurm"; }
    std::string device_name() const override { return device_; }

    void begin(const std::string &scope, ResultFn on_result) override {
        on_result_ = std::move(on_result);
        wf_.scope_dir = fs::absolute(opt_.slurm.work_dir).string() + "/" + scope;
        std::error_code ec;
        for (const char *d : {"tasks", "results", "arrays", "logs", "references"}) {
            fs::create_directories(wf_.scope_dir + "/" + d, ec);
            if (ec)
                throw UserError("cannot create the slurm work folder '" + wf_.scope_dir +
                                "': " + ec.message() + " (--work-dir must be a folder every node can write)");
        }
        load_manifest();
        closed_ = false;
        stopped_ = false;
        follower_ = std::thread([this] { follow(); });
    }

    bool adoptable(const std::string &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = by_key_.find(key);
        if (it == by_key_.end()) return false;
        const Task &t = tasks_.at(it->second);
        return (t.status == "submitted" || t.status == "done") && !t.attempts.empty();
    }

    void submit(BenchmarkTask bt) override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = by_key_.find(bt.key);
        if (it != by_key_.end()) {
            Task &t = tasks_.at(it->second);
            if ((t.status == "submitted" || t.status == "done") && !t.attempts.empty()) {
                // An earlier driver's task: follow it, never submit it again.
                t.waiting = true;
                t.adopted = true;
                t.status = "submitted";
                t.unknown_polls = t.no_result_polls = 0;
                ++adopted_;
                inputs_[t.id] = std::move(bt);
                changed_.notify_all();
                return;
            }
        }
        if (bt.binary.executable.empty())
            throw std::logic_error("slurm executor: nothing to adopt for '" + bt.key +
                                   "' and no benchmark to run");
        Task t;
        t.id = next_task_++;
        t.key = bt.key;
        t.label = bt.binary.label;
        t.waiting = true;
        TaskSpec spec;
        spec.id = t.id;
        spec.key = t.key;
        spec.label = t.label;
        spec.target = bt.binary.target;
        spec.function_name = bt.binary.function_name;
        spec.input_seed = bt.binary.input_seed;
        spec.device = opt_.device;
        spec.timing = opt_.timing;
        spec.reference = bt.binary.reference_dir.empty() ? "" : copy_reference(bt.binary.reference_dir);
        const std::string dir = wf_.task_dir(t.id);
        std::error_code ec;
        fs::create_directories(dir, ec);
        // The run's harness and the sample's shared object, which the
        // harness loads (runner.h): a node needs nothing from the driver's
        // build folders.
        fs::copy_file(bt.binary.executable, dir + "/bench", fs::copy_options::overwrite_existing, ec);
        if (!ec)
            fs::copy_file(bt.binary.library, dir + "/bench.so", fs::copy_options::overwrite_existing, ec);
        if (ec)
            throw UserError("cannot copy the benchmark into the slurm work folder '" + dir +
                            "': " + ec.message());
        write_json_atomically(wf_.task_spec(t.id), spec.to_json());
        by_key_[t.key] = t.id;
        inputs_[t.id] = std::move(bt);
        queued_.push_back(t.id);
        tasks_[t.id] = std::move(t);
        save_manifest();
        changed_.notify_all();
    }

    bool finish() override {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
            changed_.notify_all();
        }
        if (follower_.joinable()) follower_.join();
        return !stopped_;
    }

private:
    struct Delivery {
        BenchmarkTask task;
        Measurement m;
        ExecutionRecord record;
    };

    std::string copy_reference(const std::string &src) {
        auto it = references_.find(src);
        if (it != references_.end()) return it->second;
        const std::string rel = "references/" + std::to_string(references_.size() + 1);
        std::error_code ec;
        fs::remove_all(wf_.scope_dir + "/" + rel, ec);
        fs::copy(src, wf_.scope_dir + "/" + rel, fs::copy_options::recursive, ec);
        if (ec) throw UserError("cannot copy the CPU reference into the slurm work folder: " + ec.message());
        references_[src] = rel;
        return rel;
    }

    void load_manifest() {
        std::lock_guard<std::mutex> lock(mutex_);
        tasks_.clear();
        by_key_.clear();
        references_.clear();
        queued_.clear();
        inputs_.clear();
        adopted_ = 0;
        const auto j = read_json_file(wf_.manifest());
        if (!j) return;
        next_task_ = j->value("next_task", int64_t{1});
        next_array_ = j->value("next_array", int64_t{1});
        const nlohmann::json refs = j->value("references", nlohmann::json::object());
        for (const auto &[src, rel] : refs.items())
            references_[src] = rel.get<std::string>();
        const nlohmann::json tasks = j->value("tasks", nlohmann::json::array());
        for (const auto &tj : tasks) {
            Task t;
            t.id = tj.at("id").get<int64_t>();
            t.key = tj.at("key").get<std::string>();
            t.label = tj.value("label", "");
            t.status = tj.value("status", "queued");
            const nlohmann::json attempts = tj.value("attempts", nlohmann::json::array());
            for (const auto &aj : attempts)
                t.attempts.push_back(attempt_from_json(aj));
            by_key_[t.key] = t.id;
            tasks_[t.id] = std::move(t);
        }
    }

    void save_manifest() {
        nlohmann::json j = {{"next_task", next_task_}, {"next_array", next_array_}};
        j["references"] = references_;
        j["tasks"] = nlohmann::json::array();
        for (const auto &[id, t] : tasks_) {
            nlohmann::json tj = {{"id", t.id}, {"key", t.key}, {"label", t.label}, {"status", t.status}};
            tj["attempts"] = nlohmann::json::array();
            for (const auto &a : t.attempts)
                tj["attempts"].push_back(attempt_json(a));
            j["tasks"].push_back(tj);
        }
        write_json_atomically(wf_.manifest(), j);
    }

    std::string worker_command() const {
        if (!opt_.slurm.worker_command.empty()) return fs::absolute(opt_.slurm.worker_command).string();
        return self_command();
    }

    // One array of the queued tasks. Called with the mutex held.
    void submit_queued(std::vector<Delivery> &out) {
        if (queued_.empty()) return;
        const int64_t n = next_array_++;
        nlohmann::json elements = nlohmann::json::array();
        for (int64_t id : queued_)
            elements.push_back({{"task", id}, {"attempt", tasks_.at(id).attempts.size() + 1}});
        write_json_atomically(wf_.array_file(n), {{"tasks", elements}});
        {
            std::ofstream s(wf_.array_script(n));
            // Every path in the script is single-quoted (sh_single_quoted); none goes
            // into the comment, where a newline in it would end the comment
            // and make the rest of the name a command.
            s << "#!/bin/sh\n# gpusched: array " << n << "; element i benchmarks the task arrays/" << n
              << ".json names at i\n"
              << "exec " << sh_single_quoted(worker_command()) << " worker "
              << sh_single_quoted(wf_.scope_dir) << " --array " << n << "\n";
        }
        fs::permissions(wf_.array_script(n), fs::perms::owner_all, fs::perm_options::add);
        SbatchRequest r;
        r.script = wf_.array_script(n);
        r.job_name = "gpusched-" + fs::path(wf_.scope_dir).filename().string();
        r.output_pattern = wf_.scope_dir + "/logs/%A_%a.out";
        r.chdir = wf_.scope_dir;
        r.array_size = static_cast<int>(queued_.size());
        r.partition = opt_.slurm.partition;
        r.account = opt_.slurm.account;
        r.gres = opt_.slurm.gres;
        r.time_limit = opt_.slurm.time_limit;
        std::string job;
        std::string error;
        try {
            job = sbatch_array(r);
        } catch (const std::exception &e) {
            error = e.what();
        }
        const double now = epoch_seconds();
        for (std::size_t i = 0; i < queued_.size(); ++i) {
            Task &t = tasks_.at(queued_[i]);
            if (!error.empty()) {
                t.status = "failed";
                out.push_back(failed_delivery(t, error));
                continue;
            }
            Attempt a;
            a.array_job = job;
            a.index = static_cast<int>(i);
            a.submitted_at = now;
            t.attempts.push_back(a);
            t.status = "submitted";
            t.unknown_polls = t.no_result_polls = 0;
        }
        queued_.clear();
        save_manifest();
    }

    ExecutionRecord record_of(const Task &t) const {
        ExecutionRecord r = {
            {"executor", "slurm"}, {"task", t.id}, {"work", wf_.scope_dir}, {"adopted", t.adopted}};
        r["attempts"] = nlohmann::json::array();
        for (const auto &a : t.attempts)
            r["attempts"].push_back(attempt_json(a));
        return r;
    }

    Delivery failed_delivery(Task &t, const std::string &why) {
        t.waiting = false;
        Delivery d{inputs_[t.id], {}, record_of(t)};
        d.m.label = t.label;
        d.m.device = device_;
        d.m.device_kind = opt_.device;
        d.m.outcome = MeasureOutcome::NotRun;
        d.m.error = why;
        return d;
    }

    // A failed attempt: recorded, then retried or given up.
    void attempt_failed(Task &t, std::string why, std::vector<Delivery> &out) {
        Attempt &a = t.attempts.back();
        if (auto d = job_details(a.element())) {
            if (!d->state.empty()) a.last.state = d->state;
            if (!d->reason.empty() && d->reason != "None") a.last.reason = d->reason;
            a.last.exit_code = d->exit_code;
            if (!d->node.empty()) a.last.node = d->node;
        }
        const std::string log = last_lines(read_text(wf_.log(a.array_job, a.index)), 1);
        a.failure = why +
                    (a.last.reason.empty() || a.last.reason == "None" ? "" : " (" + a.last.reason + ")") +
                    (a.last.exit_code.empty() ? "" : ", exit " + a.last.exit_code) +
                    (a.last.node.empty() ? "" : ", node " + a.last.node) + (log.empty() ? "" : ": " + log);
        if (static_cast<int>(t.attempts.size()) < opt_.slurm.max_attempts) {
            t.status = "queued";
            queued_.push_back(t.id);
            retry_pending_ = true;
            return;
        }
        t.status = "failed";
        out.push_back(failed_delivery(t, "the Slurm job failed " + std::to_string(t.attempts.size()) +
                                             " times; last: " + a.failure));
    }

    static std::string read_text(const std::string &path) {
        std::ifstream f(path);
        return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }

    // One poll: results, then the states of the jobs that have none yet.
    void poll(std::vector<Delivery> &out) {
        std::set<std::string> arrays;
        for (auto &[id, t] : tasks_) {
            if (!t.waiting || t.status != "submitted") continue;
            if (auto r = read_json_file(wf_.result(id))) {
                Attempt &a = t.attempts.back();
                const auto &slurm = r->value("slurm", nlohmann::json::object());
                a.last.state = "COMPLETED";
                a.last.node = slurm.value("node", a.last.node);
                t.status = "done";
                t.waiting = false;
                Delivery d{inputs_[id], Measurement::from_json(r->at("measurement")), record_of(t)};
                if (d.m.device.empty()) d.m.device = device_;
                d.record["job"] = slurm;
                // Where the time between submission and result went: Slurm
                // (queue, launch), the worker, and the driver noticing the file.
                const double now = epoch_seconds();
                d.record["submit_to_result_s"] = now - a.submitted_at;
                d.record["worker_s"] = r->value("worker_s", 0.0);
                if (r->contains("started_at") && r->contains("finished_at")) {
                    d.record["queue_and_launch_s"] = r->at("started_at").get<double>() - a.submitted_at;
                    d.record["result_noticed_after_s"] = now - r->at("finished_at").get<double>();
                }
                out.push_back(std::move(d));
                continue;
            }
            arrays.insert(t.attempts.back().array_job);
        }
        if (arrays.empty()) return;
        const auto states = query_array_jobs({arrays.begin(), arrays.end()});
        for (auto &[id, t] : tasks_) {
            if (!t.waiting || t.status != "submitted") continue;
            Attempt &a = t.attempts.back();
            auto it = states.find(a.element());
            if (it == states.end()) {
                if (++t.unknown_polls >= kLostPolls)
                    attempt_failed(t, "the job left Slurm's queue without a result", out);
                continue;
            }
            t.unknown_polls = 0;
            a.last = it->second;
            if (!is_terminal_state(a.last.state)) continue;
            if (a.last.state == "COMPLETED") {
                if (++t.no_result_polls >= kNoResultPolls)
                    attempt_failed(t, "the job COMPLETED without writing its result", out);
                continue;
            }
            attempt_failed(t, "the job ended " + a.last.state, out);
        }
    }

    bool all_delivered() const {
        for (const auto &[id, t] : tasks_)
            if (t.waiting) return false;
        return queued_.empty();
    }

    void cancel_all() {
        std::vector<std::string> jobs;
        for (auto &[id, t] : tasks_) {
            if (!t.waiting) continue;
            if (t.status == "submitted") jobs.push_back(t.attempts.back().element());
            t.status = "cancelled";
            t.waiting = false;
        }
        queued_.clear();
        scancel(jobs);
        save_manifest();
    }

    void follow() {
        for (;;) {
            std::vector<Delivery> out;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait_for(lock, opt_.slurm.poll, [&] { return closed_ && !queued_.empty(); });
                if (opt_.stop && opt_.stop->load()) {
                    cancel_all();
                    stopped_ = true;
                    return;
                }
                if (!queued_.empty() && (closed_ || retry_pending_)) {
                    retry_pending_ = false;
                    submit_queued(out);
                }
                poll(out);
                save_manifest();
            }
            for (auto &d : out)
                on_result_(d.task, d.m, d.record);
            std::lock_guard<std::mutex> lock(mutex_);
            if (closed_ && all_delivered()) return;
        }
    }

    ExecutorOptions opt_;
    std::string device_;
    ResultFn on_result_;
    WorkFolder wf_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::thread follower_;
    bool closed_ = false, retry_pending_ = false;
    std::atomic<bool> stopped_{false};
    std::map<int64_t, Task> tasks_;
    std::map<int64_t, BenchmarkTask> inputs_;
    std::map<std::string, int64_t> by_key_;
    std::map<std::string, std::string> references_;
    std::vector<int64_t> queued_;
    int64_t next_task_ = 1, next_array_ = 1;
    int adopted_ = 0;
};

} // namespace

std::unique_ptr<Executor> make_slurm_executor(const ExecutorOptions &o) {
    if (const std::string missing = missing_slurm_command(); !missing.empty())
        throw UnavailableError("--executor slurm needs Slurm's commands and '" + missing +
                               "' is not in PATH (install slurm-client, or run on a login node)");
    if (o.slurm.work_dir.empty())
        throw UserError("--executor slurm needs --work-dir, a folder the driver and every node share");
    if (o.slurm.max_attempts < 1) throw UserError("--max-attempts must be at least 1");
    // Ask Slurm once before any work: a driver that cannot reach it, or names
    // a partition it does not have, would otherwise search and build first.
    std::vector<std::string> partitions;
    try {
        partitions = slurm_partitions();
    } catch (const std::exception &e) {
        throw UnavailableError(std::string("--executor slurm: ") + e.what() +
                               "; run on a node of the cluster, or set SLURM_CONF");
    }
    if (!o.slurm.partition.empty()) {
        std::string known;
        bool found = false;
        for (std::string p : partitions) {
            if (!p.empty() && p.back() == '*') p.pop_back();
            found = found || p == o.slurm.partition;
            known += (known.empty() ? "" : ", ") + p;
        }
        if (!found)
            throw UserError("Slurm has no partition '" + o.slurm.partition + "' (it has: " + known + ")");
    }
    // The driver may have no GPU: the nodes do. A partition is one GPU
    // model, named by --gpu (docs/cluster.md).
    const std::string device = device_name_from_driver(o.device, o.fallback_device_name);
    ExecutorOptions opt = o;
    if (const char *poll = std::getenv("GPUSCHED_SLURM_POLL_MS"))
        opt.slurm.poll = std::chrono::milliseconds(std::max(50, std::atoi(poll)));
    return std::make_unique<SlurmExecutor>(opt, device);
}

} // namespace gpusched
