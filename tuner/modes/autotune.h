#pragma once
// Autotune mode (Anderson et al. 2021, sec. 6): iterations of batches. Each
// batch is One Shot's batch (sample 0 a beam search, 1..N-1 greedy; paper: 80
// samples, 20 iterations) searched with the weights the previous batch
// retrained; every sample that compiles is built and measured by a Runner
// (tuner/measure/runner/runner.h) as Top 5 measures its five, and after the batch the
// model is retrained (tuner/modes/retrain.h, costmodel's trainer) on the run's
// measured samples (or the pipeline's, or the device's), starting from the
// weights the batch used. The fastest measured sample of the run is kept.
// Before each retraining, the batch's learning statistics are stored: the
// rank correlation (Spearman, Kendall) of the weights' predictions with the
// measured times, and the regret of the model's pick (its measured time
// over the batch's best).
//
// Flow per batch: --jobs workers each take the next missing sample index,
// search and compile it (generate_sample), store it, and build its benchmark;
// benchmarks run one group per device slot (what is built and waiting, up
// to kMaxBenchmarkGroup, in one harness process: runner.h), as builds finish
// where the device allows it (a GPU), after the batch's builds on POCL
// (which shares the cores). Each sample row is written when its search
// finishes and its measurement when its benchmark finishes (the harness
// announces each), one transaction each.
//
// Invariants:
// - Determinism: sample (batch b, idx i) of a run is the search with seed
//   seed + b*N + i, beam when i == 0, and the weights recorded for batch b in
//   autotune_batches (NULL: the embedded defaults). Whoever runs it, first run
//   or resume, gets the same schedule.
// - A sample is (run, batch, idx), UNIQUE in the database: resume generates
//   only the indices with no row, and re-runs the search of a row that was
//   stored but never measured, writing its measurement onto that row. No
//   sample is ever stored twice, none is lost.
// - A batch row is 'running' until its samples are all complete, 'measured'
//   once its statistics are stored, 'finished' once the next batch's weights
//   are recorded (the next row is inserted in the same transaction).
// - Budgets (--max-samples counts the run's stored samples, first attempt
//   included; --time-budget this invocation's time) and SIGINT/SIGTERM (the
//   stop flag) are checked before a sample is started: a run stops at a
//   sample boundary, with what was started finished (an interrupt skips the
//   benchmarks not yet started; resume redoes them).
// - Times of one device only: the run's device is fixed at its start and a
//   resume on another device is refused; retraining uses that device's
//   samples only.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/sample_store.h"
#include "tuner/generate/batch.h"
#include "tuner/measure/executor/executor.h"
#include "tuner/measure/runner/runner.h"

namespace gpusched {

// Which measured samples each retraining uses: the run's, every run's of this
// pipeline (on this device), or every pipeline's measured on this device.
enum class TrainOn { Run, Pipeline, Device };
const char *to_string(TrainOn t);
std::optional<TrainOn> parse_train_on(const std::string &name);

enum class AutotuneEnd { Finished, StoppedByBudget, Interrupted };

// A run that cannot be resumed (no such run, finished, another generator
// build or device, its weights file gone): thrown before any sample is
// searched, so the caller may start a new run instead.
class CannotResumeError : public UserError {
public:
    using UserError::UserError;
};

struct AutotuneOptions {
    OneShotOptions batch; // samples: the batch size (paper: 80); seed: the run's base seed
    DeviceKind device = DeviceKind::Cuda;
    TimingOptions timing;
    int iterations = 20;         // paper: 20
    bool from_scratch = false;   // batch 0 searches with random weights (the paper's setting)
    std::string initial_weights; // batch 0's weights file; empty: the embedded defaults
    TrainOn train_on = TrainOn::Run;
    int epochs = 100;
    double learning_rate = 1e-3;
    // --retrain if-better: between batches, adopt a retraining only when
    // 2-fold cross-validation on the training samples says its copies rank
    // or pick held-out samples at least as well as the weights the batch
    // used (costmodel/retraining_check.h). Off by default (--retrain always,
    // the paper's loop): on POCL it kept the old weights where adopting the
    // retraining found faster schedules (docs/results/retrain-policy-pocl.md).
    bool retrain_if_better = false;
    std::optional<int64_t> resume_run;                        // continue this run
    std::optional<std::chrono::duration<double>> time_budget; // of this invocation
    std::optional<int64_t> max_samples;                       // stored samples of the run, in all
    const std::atomic<bool> *stop = nullptr;                  // set by the CLI's SIGINT/SIGTERM handler
    // Who started the run, stored in its config ("nightly NAME"): how the
    // nightly finds its own unfinished run to resume. Empty: not stored.
    std::string started_by;
    // Where benchmarks run (tuner/measure/executor/executor.h); its device, timing
    // and stop flag are the ones above. A resumed run on the slurm executor
    // adopts the jobs an earlier driver left in the same --work-dir.
    ExecutorOptions executor;
    // Other sources (li2018, naive, manual; tuner/modes/baselines.h) built and
    // timed by the same runner, once per run, before its first batch (so
    // they count against the time budget). A resume measures only those
    // the run has no finished measurement of.
    std::vector<std::string> baselines;
};

// A baseline of the run: its own run row (config baseline_of_run) and sample.
struct AutotuneBaseline {
    std::string source;
    int64_t run_id = 0, sample_id = 0;
    std::optional<double> median_ms; // measured, output validated
    std::string problem;             // why not measured: "build failed: ..."
    bool measured_now = false;       // false: stored by an earlier invocation of the run
};

// What the loop reports as it goes, for the live line and log lines.
struct AutotuneStatus {
    enum class Event { Sample, Measured, BatchDone, Retrained };
    Event event = Event::Sample;
    int batch = 0, iterations = 0, batch_size = 0;
    int compiled = 0, benchmarked = 0, failed = 0; // of the batch, prior attempts included
    int64_t run_samples = 0;                       // stored samples of the run
    std::optional<double> best_ms;                 // of the run so far
    std::optional<double> first_batch_best_ms;
    std::optional<double> eta_s;
    std::string message; // one line: the sample or batch that just finished
};
using AutotuneProgressFn = std::function<void(const AutotuneStatus &)>;

struct AutotuneResult {
    int64_t run_id = 0;
    bool resumed = false;
    std::string db_path, target, benchmark_target, device;
    AutotuneEnd end = AutotuneEnd::Finished;
    std::string stopped_by; // "max samples", "time budget", "interrupted"
    std::vector<db::AutotuneBatchRow> batches;
    int64_t samples = 0, measured = 0, failed = 0, spilled = 0; // the run's, all attempts
    int64_t samples_this_invocation = 0;
    std::optional<int64_t> best_sample_id;
    int best_batch = 0, best_idx = 0;
    std::optional<double> best_ms;
    std::vector<std::string> best_files;
    double wall_seconds = 0;
    double retrain_seconds = 0; // of this invocation
    // Before the first batch: the CPU reference and the baselines. Part of
    // the time budget; a budget it exhausts leaves no sample.
    double setup_seconds = 0;
    std::vector<AutotuneBaseline> baselines;
    // A baseline measured faster than every sample of the run: its source.
    // best_files are then its files, and the run's best_sample_id in the
    // database its sample (best_* above stay the run's own best sample).
    std::string kept_baseline;
};

// Throws UserError for bad input (CannotResumeError for a run that cannot be resumed),
// UnavailableError when the device is not usable here, db::DbError for
// database problems, and UserError when the run measured nothing at all.
AutotuneResult run_autotune(const AutotuneOptions &options, const AutotuneProgressFn &progress = {});

} // namespace gpusched
