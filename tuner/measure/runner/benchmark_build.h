#pragma once
// The build step of a benchmark (TVM MetaSchedule's Builder): a sample's
// compiled library as a shared object, and the run's benchmark harness
// (benchmark_main.cpp, prebuilt as libgpusched_benchmark_runner.a) linked
// once per run and target with the run's Halide runtime
// (tuner/generate/shared_runtime.h); a Runner runs the harness on the shared object.
// For the cuda device the library is the one the batch already compiled
// (host-cuda-<capability>); for the opencl device the same schedule is
// compiled again for host-opencl, without a runtime (a gpusched sample by
// replaying its decision record, so it is exactly the schedule measured).
//
// Invariant: build_benchmark() never throws for what a generator or the
// linker does; a failed build comes back with its one-line error.

#include <optional>
#include <string>

#include "tuner/measure/runner/runner.h"
#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched {

struct BenchmarkBuildRequest {
    std::string label;
    // The pipeline and its schedule (generator, params, source, plugin
    // config and decision record to replay, timeout, input seed).
    ValidationRequest schedule;
    // A directory that already holds NAME.a and NAME.registration.cpp for
    // target: only link. Otherwise compile the schedule for target first.
    std::optional<std::string> library_dir;
    std::string target;
    std::string work_dir;
    std::string reference_dir; // the CPU reference's outputs (pocl_validation.h)
};

struct BenchmarkBuild {
    bool ok = false;
    std::string error; // one line, when not ok
    BenchmarkBinary binary;
    double seconds = 0;
};

BenchmarkBuild build_benchmark(const BenchmarkBuildRequest &request);

// The Halide target a device's benchmarks are built for: the batch's CUDA
// target for cuda, this CPU with opencl for opencl (no strict_float: what is
// timed is the schedule as a user builds it; the comparison tolerates FMA
// contraction).
std::string benchmark_target(DeviceKind kind, const std::string &cuda_target);

// The prebuilt harness archive; empty if not found.
std::string locate_benchmark_runner_archive();

} // namespace gpusched
