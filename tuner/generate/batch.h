#pragma once
// The batch that One Shot and Top 5 share (Anderson et al. 2021, sec. 6):
// N schedule searches of one pipeline - sample 0 a beam search, samples
// 1..N-1 greedy with seeds seed+i - each a generator process compiling for
// CUDA, --jobs at a time, each sample's PTX assembled with ptxas for the GPU
// profile's architecture (sec. 6.1's spill check). A baseline source (li2018,
// naive, manual) is a batch of one. The batch knows nothing of what happens
// after: One Shot ranks and validates, Top 5 benchmarks.
//
// Invariants: check_batch_inputs() refuses bad input before anything is
// started or written; generate_batch() never throws for what a generator or
// ptxas does (each sample carries its own failure); samples[i].index == i.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/gpu_profile.h"
#include "db/sample_store.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/ptxas_report.h"
#include "tuner/generate/sample_selection.h"
#include "tuner/generate/search_settings.h"

namespace gpusched {

struct OneShotOptions {
    std::string generator_path;
    std::string generator_name;
    std::map<std::string, std::string> generator_params;
    GpuProfile gpu;
    std::string target; // empty: host-cuda-<profile's capability>
    std::string schedule_source = "gpusched";
    std::string output_dir;
    std::string db_path;
    int samples = 80; // paper: 80 per batch
    int jobs = 2;
    SearchSettings search;              // seeds of greedy samples are search.seed+1 .. +N-1
    bool validate = true;               // run the chosen schedule on POCL against a CPU build
    bool validate_every_sample = false; // validate all compiled samples (fuzzing)
    nlohmann::json search_config;       // extra keys passed to the plugin config
    std::chrono::seconds timeout{600};  // per generator run
    std::string gpusched_version;
};

// The search record's GPU fill (core/gpu_fill.h): work-weighted, and the
// least of the kernels with 1% of the work or more.
struct GpuFillSummary {
    double weighted = 0;
    double least = 0;
    std::string least_kernel;
    double capacity_threads = 0;
};

// A fill (a share in [0, 1]) as a percentage with three significant digits:
// one thread of an H100 is 0.00037%, and that it is not 0 is the point.
std::string fill_percent(double share);

struct OneShotSample {
    int index = 0;
    bool beam = false;
    std::optional<uint64_t> seed;
    std::string dir;
    GeneratorOutcome generator;
    PtxasReport ptxas;
    std::optional<double> predicted_cost;
    std::optional<double> search_seconds;
    std::optional<GpuFillSummary> gpu_fill;
    nlohmann::json record; // the plugin's decision record, if any
    std::string schedule_source_text;
    std::vector<uint8_t> featurization;
    std::string validation = "not run"; // not run | passed | failed
    std::string validation_detail;

    bool compiled() const { return generator.ok(); }
};

using ProgressFn = std::function<void(const OneShotSample &, int done, int total)>;

// What check_batch_inputs() resolved.
struct BatchInputs {
    ScheduleSource source;
    std::string target; // the Halide target samples are compiled for
    int samples = 1;    // the batch size (1 for a source that does not search)
};

// Refuses, with UserError, everything wrong that can be seen before work
// starts: the generator (missing, not executable, no such generator), the
// schedule source and its plugin, reserved params, sample and job counts,
// an output directory that cannot be written. The database is the caller's.
BatchInputs check_batch_inputs(const OneShotOptions &options);

// One sample of a batch, into sample.dir (removed first), with the seed and
// beam/greedy choice its index gives it: sample i of a batch is the same
// search whenever it runs (what Autotune's resume relies on). Set
// sample.index and sample.dir before the call. Never throws for what the
// generator or ptxas does.
void generate_sample(const OneShotOptions &options, const BatchInputs &inputs, OneShotSample &sample);

// Runs the batch into OUT/samples/<i>/. progress is called, serialized, as
// each sample finishes (generator and ptxas done).
std::vector<OneShotSample> generate_batch(const OneShotOptions &options, const BatchInputs &inputs,
                                          const ProgressFn &progress = {});

// The selection view of each sample (tuner/generate/sample_selection.h): usable when
// it compiled and ptxas did not reject it.
std::vector<SelectionCandidate> selection_candidates(const std::vector<OneShotSample> &samples);

// The database row of a sample (no measurement yet).
db::SampleRow to_sample_row(const OneShotSample &sample, const nlohmann::json &search_config);

// The plugin config keys of the run, with the sample's seed: its row's search_config.
nlohmann::json sample_search_config(const OneShotOptions &options, const OneShotSample &sample);

// The pipeline's identity in the database.
db::PipelineIdentity pipeline_identity(const OneShotOptions &options, const std::string &target);

// Copies a sample's NAME.* files (schedule, library, header, registration,
// decision record, featurization) into output_dir; returns their paths,
// sorted. Throws UserError when one cannot be written.
std::vector<std::string> copy_sample_files(const OneShotSample &sample, const std::string &generator_name,
                                           const std::string &output_dir);

// The default Halide target for a profile: this CPU (host_cpu_target())
// with cuda-cuda_capability_XX.
std::string default_cuda_target(const GpuProfile &gpu);

// The part of a run's config row that decides its batch: samples, jobs,
// beam, passes, seed, GPU profile, search config (modes add their own keys).
nlohmann::json batch_run_config(const OneShotOptions &options, int samples);

// Canonical JSON text of generator params (sorted keys), the pipeline identity.
std::string canonical_params(const std::map<std::string, std::string> &params);

// FNV-1a 64 of a file's bytes as 16 hex digits: identifies a generator build.
std::string hash_file(const std::string &path);

// Reads a whole file; empty if it cannot be read.
std::string read_text_file(const std::string &path);

} // namespace gpusched
