#pragma once
// Baselines: schedules of the same pipeline from other sources (Halide's
// Li2018, the generator's own naive or manual schedule), built and timed by
// the mode's runner beside gpusched's samples, so a speedup compares like
// with like. Top 5 and Autotune both take them (--baselines). Each baseline
// is a run of its own in the database (autoscheduler = its source) holding
// its one sample, which is what `gpusched report` compares against.

#include <functional>
#include <string>
#include <vector>

#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/batch.h"
#include "tuner/measure/runner/benchmark_build.h"
#include "tuner/measure/runner/runner.h"

namespace gpusched {

// The sources named (li2018, naive, manual). Throws UserError naming an
// unknown one, or a searching one (gpusched itself), with the known names.
std::vector<ScheduleSource> baseline_sources(const std::vector<std::string> &names);

struct BaselineBuild {
    OneShotSample schedule; // its batch of one: the CUDA library and its ptxas check
    BenchmarkBuild build;   // ok false, with the error, when the schedule did not compile
};

// Makes the baseline's schedule in dir, hands it to `store` (the caller
// writes its run and sample rows before anything else can fail), then builds
// its benchmark for benchmark_target: cuda links the schedule's library,
// opencl compiles it again. `reference_dir` is asked for the CPU reference's
// outputs only once the build needs them, so the schedule is made while the
// reference may still be computing.
BaselineBuild build_baseline(const OneShotOptions &batch, const ScheduleSource &source, DeviceKind device,
                             const std::string &benchmark_target, const std::string &dir,
                             const std::function<void(const OneShotSample &)> &store,
                             const std::function<std::string()> &reference_dir);

} // namespace gpusched
