#pragma once
// Top 5 mode (Anderson et al. 2021, sec. 6): One Shot's batch (1 beam + N-1
// greedy searches, compiled for CUDA, spill-checked by ptxas), then the 5
// best predicted samples that do not spill (sec. 6.1) are benchmarked by a
// Runner (tuner/measure/runner/runner.h) and the fastest whose output is right is
// kept. Baselines (li2018, naive, manual) named by the user are built and
// timed by the same runner in the same command, so the speedups printed
// compare like with like; a baseline faster than every sample is the
// schedule kept, marked as such (the run's kept_source in the database).
//
// The flow, as TVM MetaSchedule names it: generate (the batch) -> build
// (benchmark_build.h) -> run (a Runner) -> database. Builds run --jobs at a
// time; benchmarks run one per device slot, after every build of the round
// has finished (on POCL and on a GPU alike, issue 56), so nothing compiles
// beside a timed call.
//
// Invariants: bad input and a missing device are refused before anything is
// written. After that, the pipeline and run rows exist first, each sample
// is written as soon as its search finishes and each measurement as soon as
// its benchmark finishes, each in its own transaction: a killed tuner loses
// no measured sample. A measurement counts only when the benchmarked build's
// output matched the CPU reference; a wrong output is a failed sample with
// the difference, never a time. Times are stored under the device that
// measured them.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/generate/batch.h"
#include "tuner/measure/executor/executor.h"
#include "tuner/measure/runner/benchmark_build.h"
#include "tuner/measure/runner/runner.h"

namespace gpusched {

struct Top5Options {
    OneShotOptions batch; // the batch, as One Shot makes it (its validate flags are unused)
    DeviceKind device = DeviceKind::Cuda;
    TimingOptions timing;
    int top = 5;                        // paper: the 5 best predicted
    std::vector<std::string> baselines; // li2018, naive, manual
    std::string started_by;             // stored in the run's config when set ("nightly NAME")
    // Where benchmarks run (tuner/measure/executor/executor.h): kind, Slurm options,
    // the stop flag. Its device and timing are the ones above.
    ExecutorOptions executor;
};

// One benchmarked schedule: a sample of the batch, or a baseline.
struct Top5Entry {
    std::string label;                 // "sample 3", "li2018"
    std::string source;                // gpusched, li2018, ...
    std::optional<std::size_t> sample; // gpusched: index into Top5Result::samples
    int predicted_rank = 0;            // 1-based among usable samples; 0 for baselines
    std::optional<double> predicted_cost;
    std::string ptxas_status; // checked | not checked | failed
    long spill_bytes = 0;
    OneShotSample baseline; // a baseline's own batch of one
    BenchmarkBuild build;
    Measurement measurement;
    ExecutionRecord execution; // what ran it (executor, Slurm jobs)
    int64_t run_id = 0;
    int64_t sample_id = 0;

    bool measured() const { return measurement.measured(); }
};

struct Top5Result {
    std::string target;           // the batch's (CUDA) target
    std::string benchmark_target; // what was timed
    std::string device;           // the device the times belong to
    std::vector<OneShotSample> samples;
    std::vector<std::size_t> ranking;   // usable samples, best predicted first
    std::vector<std::size_t> spillers;  // usable samples dropped because they spill
    std::string spill_check;            // one line: what the spill filter did
    std::vector<Top5Entry> benchmarked; // the top samples, best predicted first
    std::vector<Top5Entry> baselines;
    std::optional<std::size_t> best; // index into benchmarked: fastest measured median
    // Index into baselines: a baseline measured faster than every sample,
    // whose schedule is the one kept (best_files, the run's best sample);
    // none when the best sample is kept.
    std::optional<std::size_t> kept_baseline;
    std::string reference_dir;
    int64_t run_id = 0;
    std::string db_path;
    std::vector<std::string> best_files;
    double wall_seconds = 0;
    double batch_seconds = 0;     // generating the batch (searches, compiles, ptxas)
    double benchmark_seconds = 0; // reference, builds and benchmarks
};

struct Top5Progress {
    ProgressFn sample;                               // a search finished
    std::function<void(const Top5Entry &)> measured; // a benchmark finished (or could not run)
};

// Throws UserError for bad input and when nothing could be measured,
// InterruptedError when the stop flag ended the benchmarks (the run is marked
// interrupted),
// UnavailableError when the device is not usable here, db::DbError for
// database problems.
Top5Result run_top5(const Top5Options &options, const Top5Progress &progress = {});

} // namespace gpusched
