#pragma once
// The benchmark suite runner (`gpusched bench`): every app of a suite
// manifest (benchmarks/suite.json) through every schedule source - gpusched
// One Shot, li2018, naive, manual - with the same driver and checks, and one
// markdown table of the results with the command and machine that produced
// it. CPU columns (search time, states featurized, peak memory, compile time,
// registers, spills, validation) always; runtime columns where a GPU
// benchmarked the schedule.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "tuner/generate/batch.h"

namespace gpusched {

struct SuiteApp {
    std::string name;
    std::string generator; // path relative to the build directory
    std::string generator_name;
    std::map<std::string, std::string> params;
};

// Throws UserError naming the file and the problem.
std::vector<SuiteApp> read_suite_manifest(const std::string &path);

struct SuiteOptions {
    std::string manifest;
    std::string build_dir;
    std::vector<std::string> apps;    // empty: all
    std::vector<std::string> sources; // schedule sources
    std::string work_dir;
    std::string db_path;
    GpuProfile gpu;
    int samples = 16;
    int jobs = 2;
    bool validate = false;
    std::chrono::seconds timeout{900};
    std::string gpusched_version;
};

struct SuiteCell {
    std::string app, source;
    bool ok = false;
    std::string error;
    double wall_seconds = 0;
    std::optional<double> search_seconds;    // the chosen sample's search
    std::optional<double> compile_seconds;   // the chosen sample's codegen
    std::optional<double> states_featurized; // the chosen sample's search
    std::optional<double> peak_rss_mb;       // the largest over the run's samples
    std::optional<double> predicted_cost;
    std::optional<GpuFillSummary> gpu_fill; // the chosen sample's (gpusched rows)
    int splits = 0;                         // reduction splits in the chosen schedule
    int kernels = 0, max_registers = 0;
    long spill_bytes = 0;
    std::string ptxas;
    std::string validation = "not run";
    std::optional<double> runtime_ms; // GPU median, when benchmarked
    // The pipeline's roofline on the profile (core/roofline.h: no schedule
    // runs faster), from the gpusched search's record.
    std::optional<double> roofline_ms;
    int64_t run_id = 0;
};

using SuiteProgress = std::function<void(const SuiteCell &, int done, int total)>;

// Runs every (app, source) pair; a failing pair is a failed cell, never an
// exception. Throws UserError for bad options (unknown app or source,
// missing generator).
std::vector<SuiteCell> run_suite(const SuiteOptions &options, const SuiteProgress &progress = {});

// The markdown report: the command, the machine, and one table.
std::string suite_report_markdown(const SuiteOptions &options, const std::vector<SuiteCell> &cells,
                                  const std::string &command_line);

} // namespace gpusched
