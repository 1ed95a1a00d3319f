#pragma once
// The nightly config (`gpusched nightly CONFIG`, docs/cron.md): one JSON file
// naming the database, the folder promoted schedules go to, the night's time
// budget and the pipelines to tune, each with its mode (top5 or autotune)
// and device.
//
// Invariants of a parsed config: every field was checked (type, range, known
// name), relative paths are resolved against the config file's folder (cron
// starts jobs in $HOME, not where the config lives), pipeline names are
// unique and safe as file names (they name NAME.schedule.h). A bad field is
// refused with one line naming the file and the field, e.g.
//   nightly.json: field 'pipelines[1].mode': "fast" is not top5 or autotune
// Unknown fields are refused too: a misspelt key in a file nobody watches
// would otherwise be silently ignored every night.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tuner/measure/executor/executor.h"

#include "common/errors.h"
#include "common/gpu_profile.h"
#include "tuner/generate/search_settings.h"
#include "tuner/measure/runner/runner.h"
#include "tuner/modes/autotune.h"

namespace gpusched {

enum class NightlyMode { Top5, Autotune };
const char *to_string(NightlyMode mode);

struct NightlyPipeline {
    std::string name; // NAME of NAME.schedule.h; default: generator_name
    std::string generator_path;
    std::string generator_name;
    std::map<std::string, std::string> params;
    GpuProfile gpu;
    DeviceKind device = DeviceKind::Cuda;
    NightlyMode mode = NightlyMode::Autotune;
    double share = 1;                   // weight of this pipeline in the budget split
    int samples = 80;                   // top5: the batch; autotune: samples per batch (paper: 80)
    int iterations = 20;                // autotune (paper: 20)
    int top = 5;                        // top5 (paper: 5)
    std::vector<std::string> baselines; // li2018, naive, manual, measured beside it (autotune: once per run)
    SearchSettings search;              // greedy dropout: the default; seed: the first night's
    TrainOn train_on = TrainOn::Run;
    TimingOptions timing;
};

struct NightlyConfig {
    std::string path; // the config file, as given
    std::string database;
    std::string schedules; // where promoted schedules go
    std::string work_dir;  // runs' batches, benchmarks and weights
    double budget_s = 0;   // the night's tuning time, all pipelines together
    std::string log;       // appended to, timestamped; empty: stderr only
    std::string report;    // written by `gpusched report`; empty: none
    std::string lock;      // default: SCHEDULES/.nightly.lock
    int jobs = 0;          // compile jobs; 0: every core
    // The least relative gain that promotes, however quiet the measurements
    // look: repetitions in one process understate the noise between runs.
    double noise_floor = 0.01;
    int epochs = 100;
    double learning_rate = 1e-3;
    // Where the pipelines' benchmarks run: "local", or "slurm" with its
    // options (tuner/measure/executor/executor.h); each pipeline's jobs share
    // slurm.work_dir/NAME.
    std::string executor = "local";
    SlurmOptions slurm;
    std::vector<NightlyPipeline> pipelines;
};

// Thrown for a bad config: its message is the one line to print.
class ConfigError : public UserError {
public:
    using UserError::UserError;
};

// Parses and checks the JSON text (path names it in messages and resolves
// relative paths). Does not look at the file system.
NightlyConfig parse_nightly_config(const std::string &text, const std::string &path);
// Reads the file and parses it.
NightlyConfig load_nightly_config(const std::string &path);
// What must exist before a night starts: each generator, and folders that
// can be created. Throws ConfigError naming the field.
void check_nightly_paths(const NightlyConfig &config);

} // namespace gpusched
