#pragma once
// A night of tuning (`gpusched nightly CONFIG`, docs/cron.md): under the
// lock (run_lock.h), each pipeline of the config in turn is tuned with its
// share of the budget (budget_split.h) by Top 5 or Autotune, Autotune
// continuing the pipeline's unfinished run of an earlier night
// (nightly_runs.h) instead of starting over; then per measuring device the
// models are retrained from every measured sample of the database, one per
// pipeline held out (holdout_retrain.h); then each pipeline's best is
// promoted into the schedule folder only when it beats the promoted one by
// more than the noise (promotion_rule.h, promoted_manifest.h).
//
// Invariants:
// - Pipelines run one after another, each in-process through the modes'
//   own entry points (run_top5, run_autotune); the nightly never holds the
//   database open while a mode writes it.
// - A pipeline that fails (bad generator, no device, every sample failed)
//   is reported and the night goes on with the next one.
// - SIGINT/SIGTERM (the stop flag) end tuning at a sample boundary; the
//   pipelines tuned so far are still decided for promotion, retraining is
//   skipped, and the interrupted run is continued the next night.
// - The summary says, per pipeline, the run, its samples, its best time and
//   whether it was promoted and why.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/modes/nightly/holdout_retrain.h"
#include "tuner/modes/nightly/nightly_config.h"

namespace gpusched {

enum class NightlyLogLevel { Debug, Info, Warn };

struct NightlyOptions {
    const std::atomic<bool> *stop = nullptr;
    std::function<void(NightlyLogLevel, const std::string &)> log;
    std::string gpusched_version;
};

struct PipelineOutcome {
    std::string name, mode;
    std::string status = "skipped"; // tuned | failed | unavailable | interrupted | skipped
    std::string device;             // where its times were measured
    double budget_s = 0, seconds = 0;
    int64_t run_id = 0;
    bool resumed = false;
    int64_t samples = 0, samples_tonight = 0; // the run's (all nights), and tonight's
    std::optional<int64_t> best_sample_id;
    std::optional<double> best_ms, best_min_ms;
    int64_t best_reps = 0;
    std::string stopped_by;         // autotune: "time budget", "interrupted"; empty when finished
    std::vector<std::string> files; // the run's best, in the work folder
    // A baseline the run measured faster than every sample (Top 5 and
    // Autotune keep it; runs.kept_source): its source. Nothing is promoted
    // then, since promotion delivers searched schedules with their records.
    std::string kept_baseline;
    bool promoted = false;
    std::string promotion; // why (not) promoted
    std::string error;     // failed / unavailable / skipped: why
};

struct DeviceModels {
    std::string device;
    std::vector<TrainedModel> models;
};

struct NightlySummary {
    std::string config, database, schedules, started_at;
    double budget_s = 0, seconds = 0;
    bool interrupted = false;
    std::vector<PipelineOutcome> pipelines;
    std::vector<DeviceModels> retrained;
    std::string retrain_skipped; // why there was no retraining, if there was none
};

// Throws LockHeldError (run_lock.h) when another instance holds the lock,
// ConfigError for paths the config names that do not work, db::DbError
// for database problems outside a pipeline.
NightlySummary run_nightly(const NightlyConfig &config, const NightlyOptions &options);

} // namespace gpusched
