#pragma once
// The executor: where benchmarks run (TVM MetaSchedule keeps the same split
// between its Runner, which measures, and the RPC/cluster layer under it).
// The modes build each benchmark on the driver machine and hand it to an
// Executor as a BenchmarkTask; the Executor runs it somewhere and hands back
// a Measurement. Two executors behind one interface, chosen in one place
// (make_executor):
//
// - local: today's behaviour, processes on this machine through a Runner
//   (tuner/measure/runner/runner.h): one benchmark per device slot, started as tasks
//   arrive when the device lets compiles overlap, after the round's last task
//   arrived when it does not (POCL shares the cores; a GPU's samples are
//   timed with nothing compiling beside them, issue 56).
// - slurm: the round's tasks become sbatch job arrays; each array element
//   runs `gpusched worker` on its node against a shared work folder and
//   writes its result to a file of its own; the driver follows the jobs
//   (squeue, sacct, scontrol), retries failed ones and hands results back as
//   they arrive (slurm_executor.cpp).
//
// A round: begin(scope, on_result), any number of submit(), then finish().
// on_result is called once per task, one call at a time, from the
// executor's own threads; the caller writes the database there, so the
// driver stays the only writer.
//
// Invariants: a task's key is stable across invocations of the driver (the
// same sample gets the same key), which is what lets a resumed driver adopt
// what an earlier one submitted (adoptable()). finish() returns false when
// the stop flag ended the round early; tasks without a result then get no
// on_result call (the caller leaves them for --resume).

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/measure/runner/runner.h"

namespace gpusched {

struct BenchmarkTask {
    std::string key;        // stable across driver invocations: "run 4 batch 0 sample 3"
    BenchmarkBinary binary; // executable empty: adopt what an earlier driver submitted
};

// What executed a task, for the measurement's detail (provenance): the
// executor, and for slurm the job of each attempt with Slurm's state and reason.
using ExecutionRecord = nlohmann::json;
using ResultFn = std::function<void(const BenchmarkTask &, const Measurement &, const ExecutionRecord &)>;

class Executor {
public:
    virtual ~Executor() = default;
    virtual const char *name() const = 0;
    // The device name the run's measurements are stored under.
    virtual std::string device_name() const = 0;
    // Starts a round. scope names the round's work (one per tuning run, "run-12").
    virtual void begin(const std::string &scope, ResultFn on_result) = 0;
    // Whether an earlier driver submitted this key in this scope and its job
    // can still give a result (running, finished, or retryable): the caller
    // may then submit the key with no binary instead of building it again.
    virtual bool adoptable(const std::string &key) = 0;
    virtual void submit(BenchmarkTask task) = 0;
    // No more tasks this round: waits for every result; false when the stop flag ended it.
    virtual bool finish() = 0;
};

struct SlurmOptions {
    std::string partition, account, gres, time_limit; // empty: the cluster's defaults
    std::string work_dir;                             // shared by the driver and every node
    std::string worker_command;                       // empty: this gpusched (self_command())
    int max_attempts = 3;                             // per task, the first included
    std::chrono::milliseconds poll{2000};             // squeue period (GPUSCHED_SLURM_POLL_MS)
};

struct ExecutorOptions {
    std::string kind = "local"; // local | slurm
    DeviceKind device = DeviceKind::Cuda;
    TimingOptions timing;
    std::string fallback_device_name; // slurm, cuda, no GPU on the driver: the --gpu profile's name
    SlurmOptions slurm;
    const std::atomic<bool> *stop = nullptr; // SIGINT/SIGTERM: a slurm round scancels its jobs
};

// Throws UnavailableError when the executor cannot work here (local: the
// device, as make_runner; slurm: sbatch/squeue/scancel missing) and
// UserError for bad options (an unknown kind, a work folder that cannot be made).
std::unique_ptr<Executor> make_executor(const ExecutorOptions &options);

std::unique_ptr<Executor> make_local_executor(const ExecutorOptions &options);
std::unique_ptr<Executor> make_slurm_executor(const ExecutorOptions &options);

} // namespace gpusched
