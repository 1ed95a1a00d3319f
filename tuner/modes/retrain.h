#pragma once
// Retraining the cost model from the sample database (`gpusched retrain`,
// and the Autotune loop between batches): every benchmarked sample with a
// featurization becomes a training example, grouped by pipeline because the
// loss compares samples of the same pipeline. Starts from given weights (the
// embedded defaults unless told otherwise), holds out a share for
// validation, writes a new weights file and records it in the database.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "costmodel/retraining_check.h"
#include "costmodel/training.h"
#include "db/database.h"

namespace gpusched {

struct RetrainOptions {
    std::string db_path;
    std::string generator_name;  // empty: all pipelines
    std::string initial_weights; // empty: the embedded defaults
    std::string output_path;
    GpuProfile gpu; // the GPU the runtimes were measured on
    // The measuring device whose samples train (samples.device: a GPU's
    // name, or pocl-<cpu>). Empty: the only device the samples have; a
    // database with several is refused, naming them - times of different
    // devices never train one model.
    std::string device;
    // Only this run's / this pipeline's samples (0: no such filter): what
    // Autotune's --train-on run|pipeline chooses.
    int64_t run_id = 0;
    int64_t pipeline_id = 0;
    // Never these pipelines' samples, and the name of what is held out
    // (recorded in the weights row): the nightly's hold-one-out models.
    std::vector<int64_t> exclude_pipeline_ids;
    std::string held_out;
    // Who asked, for the provenance and the weights row ("gpusched retrain",
    // "autotune run 3 after batch 1").
    std::string purpose = "gpusched retrain";
    int epochs = 100;
    double learning_rate = 1e-3;
    uint64_t seed = 1;
    // Cross-validate first (costmodel/retraining_check.h) and keep the
    // starting weights, writing nothing, when their retrained copies rank
    // held-out samples worse: what Autotune does between batches.
    bool keep_start_unless_better = false;
};

struct RetrainResult {
    TrainingReport report;
    int pipelines = 0;
    int samples = 0;
    int64_t weights_id = 0; // 0 when kept_start
    std::string provenance;
    std::optional<RetrainingCheck> check; // with keep_start_unless_better
    bool kept_start = false;              // nothing trained or written: the start ranks better
};

// Throws UserError (tuner/modes/oneshot.h) when there is nothing to train on or an
// input is bad (naming the sample whose featurization is corrupt), and
// db::DbError for database problems.
RetrainResult retrain_from_database(const RetrainOptions &options);
// The same on a database the caller has open (options.db_path only names it
// in messages). A process must not open a second connection to a file it
// has open: closing any descriptor of the file drops the process's POSIX
// locks on it, and SQLite then takes the other connection for gone (it
// checkpoints and deletes the WAL under it).
RetrainResult retrain_from_database(const RetrainOptions &options, db::Database &database);

} // namespace gpusched
