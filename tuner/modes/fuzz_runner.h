#pragma once
// Fuzzing the search (`gpusched fuzz`): One Shot on seeded random pipelines
// (benchmarks/random_pipeline), validating every sample. Each seed ends in
// one outcome: the search or codegen failed, ptxas rejected the PTX, a
// schedule changed the output on POCL, or all passed. Nothing a pipeline
// does stops the run; the summary lists every failing seed with its error,
// so a failure can be reproduced with one oneshot command.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "tuner/generate/search_settings.h"

namespace gpusched {

// LaunchRefused: the plugin's post-lowering check (core/launch_check.h)
// refused a schedule a GPU would not launch: a search bug caught before it
// reached a GPU.
enum class FuzzOutcome { Passed, SearchFailed, LaunchRefused, PtxasFailed, ValidationFailed, NotValidated };
const char *to_string(FuzzOutcome o);

struct FuzzOptions {
    std::string generator_path; // random_pipeline.generator
    std::string generator_name = "random_pipeline";
    std::map<std::string, std::string> params{{"size", "small"}, {"num_outputs", "0"}};
    uint64_t first_seed = 0, last_seed = 9;
    int samples = 2;       // the beam search + greedy samples
    SearchSettings search; // the seed: each pipeline's own (its seed x 1000)
    int jobs = 2;          // seeds run at a time (each runs its steps one at a time)
    GpuProfile gpu;
    std::string work_dir, db_path;
    std::chrono::seconds timeout{600};
    std::string gpusched_version;
};

struct FuzzCase {
    uint64_t seed = 0;
    FuzzOutcome outcome = FuzzOutcome::Passed;
    std::string detail;
    int samples = 0, validated = 0;
    int device_math = 0; // of those validated, against the device's own build only (pocl_validation.h)
    double seconds = 0;
    int outputs = 0;            // the pipeline's outputs (0: not known, no schedule was emitted)
    bool has_reduction = false; // some Func has update stages
};

using FuzzProgress = std::function<void(const FuzzCase &, int done, int total)>;

std::vector<FuzzCase> run_fuzz(const FuzzOptions &options, const FuzzProgress &progress = {});

std::string fuzz_report_markdown(const FuzzOptions &options, const std::vector<FuzzCase> &cases,
                                 const std::string &command_line);

} // namespace gpusched
