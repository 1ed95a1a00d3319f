#pragma once
// One Shot mode (Anderson et al. 2021, sec. 6): N schedule searches of one
// pipeline - a beam search and N-1 greedy samples with distinct seeds - run
// as parallel generator processes; each result is compiled for CUDA, its PTX
// assembled with ptxas for the GPU profile's architecture, and the best
// predicted sample that does not spill is kept. No GPU is needed.
//
// Baseline sources (li2018, naive, manual) run the same way with a single
// sample, so their output lands in the same database with the same checks.
//
// Invariants: inputs are validated before anything is written; a run whose
// every sample failed leaves no row in the database; otherwise the pipeline,
// the run and all its samples (failed ones with their error) are written in
// one transaction.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_profile.h"
#include "tuner/generator_run.h"
#include "tuner/ptxas_report.h"
#include "tuner/validation/pocl_validation.h"

namespace gpusched {

// An error in what the user asked for; its message is the whole explanation.
class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct OneShotOptions {
    std::string generator_path;
    std::string generator_name;
    std::map<std::string, std::string> generator_params;
    GpuProfile gpu;
    std::string target;                  // empty: host-cuda-<profile's capability>
    std::string schedule_source = "gpusched";
    std::string output_dir;
    std::string db_path;
    int samples = 80;                    // paper: 80 per batch
    int jobs = 2;
    int beam_size = 32;                  // paper: 32
    int passes = 5;                      // paper: 5
    uint64_t seed = 0;                   // seeds of greedy samples are seed+1 .. seed+N-1
    // Probability of dropping each ranked child in greedy samples. The
    // reference autotuner keeps the overall best path with 1% probability;
    // over the ~20 decisions of a typical app that is ~0.2 per decision.
    double greedy_dropout = 0.2;
    bool validate = true;                // run the chosen schedule on POCL against a CPU build
    bool validate_every_sample = false;  // validate all compiled samples (fuzzing)
    nlohmann::json search_config;        // extra keys passed to the plugin config
    std::chrono::seconds timeout{600};   // per generator run
    std::string gpusched_version;
};

struct OneShotSample {
    int index = 0;
    bool beam = false;
    std::optional<uint64_t> seed;
    std::string dir;
    GeneratorOutcome generator;
    PtxasReport ptxas;
    std::optional<double> predicted_cost;
    std::optional<double> search_seconds;
    nlohmann::json record;  // the plugin's decision record, if any
    std::string schedule_source_text;
    std::vector<uint8_t> featurization;
    std::string validation = "not run";  // not run | passed | failed
    std::string validation_detail;

    bool compiled() const { return generator.ok(); }
};

struct OneShotResult {
    std::string target;
    std::vector<OneShotSample> samples;
    std::optional<std::size_t> best;        // index into samples
    std::vector<std::size_t> ranking;       // usable samples, best predicted first
    int64_t run_id = 0;
    std::string db_path;
    std::vector<std::string> best_files;    // copied into output_dir
    double wall_seconds = 0;
};

using ProgressFn = std::function<void(const OneShotSample &, int done, int total)>;
using ValidationProgressFn = std::function<void(const OneShotSample &, const ValidationReport &)>;

// Throws UserError for bad input (and when every sample failed), and
// db::DbError for database problems.
OneShotResult run_oneshot(const OneShotOptions &options, const ProgressFn &progress = {},
                          const ValidationProgressFn &progress_validation = {});

// The default Halide target for a profile: this CPU (host_cpu_target())
// with cuda-cuda_capability_XX.
std::string default_cuda_target(const GpuProfile &gpu);

// Canonical JSON text of generator params (sorted keys), the pipeline identity.
std::string canonical_params(const std::map<std::string, std::string> &params);

// FNV-1a 64 of a file's bytes as 16 hex digits: identifies a generator build.
std::string hash_file(const std::string &path);

} // namespace gpusched
