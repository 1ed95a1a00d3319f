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

#include "common/errors.h"
#include "common/gpu_profile.h"
#include "tuner/generate/batch.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/ptxas_report.h"
#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched {

struct OneShotResult {
    std::string target;
    std::vector<OneShotSample> samples;
    std::optional<std::size_t> best;  // index into samples
    std::vector<std::size_t> ranking; // usable samples, best predicted first
    int64_t run_id = 0;
    std::string db_path;
    std::vector<std::string> best_files; // copied into output_dir
    double wall_seconds = 0;
};

using ValidationProgressFn = std::function<void(const OneShotSample &, const ValidationReport &)>;

// Throws UserError for bad input (and when every sample failed), and
// db::DbError for database problems.
OneShotResult run_oneshot(const OneShotOptions &options, const ProgressFn &progress = {},
                          const ValidationProgressFn &progress_validation = {});

} // namespace gpusched
