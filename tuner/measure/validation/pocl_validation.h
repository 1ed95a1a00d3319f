#pragma once
// Checks that a GPU schedule does not change what a pipeline computes, with
// no GPU: the same schedule is compiled for host-opencl and run on POCL (the
// CPU OpenCL implementation), blocks, threads, shared memory and all, and
// its outputs are compared with a CPU build of the same pipeline scheduled
// by Halide's Mullapudi2016 (any schedule computes the same values; that one
// keeps deep pipelines fast to run on the CPU).
//
// Everything runs out of process: the generators, the linker, and the two
// runners (Halide's JIT with OpenCL in the same process as libHalide has
// crashed; DESIGN.md). Inputs are random with a fixed seed at the
// generator's estimated sizes. The reference is built and run once per
// pipeline (generator, params, input seed) in a process, and its outputs are
// reused by every schedule of that pipeline validated afterwards.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"
#include "tuner/measure/validation/output_file.h"

namespace gpusched {

// The targets of the two builds compared. Both use strict_float: without
// it Halide and POCL may fuse a*b+c into an FMA or reassociate, and which
// ones they fuse depends on what the schedule inlines, so a pipeline that
// bins float values (random_pipeline seed 41: two chained histograms of a
// bilinear upsample) changed a hundred bins between correct schedules.
// strict_float keeps the loops, tiles and memory of the schedule under test
// and only pins the rounding; what is left between the builds is the math
// library (sin, exp, ...) of POCL against the CPU's. Both run on this CPU, so
// they start from host_cpu_target() (tuner/host_target.h), not Halide's host.
std::string validation_cpu_target();
std::string validation_opencl_target();

struct ValidationRequest {
    std::string generator_path;
    std::string generator_name;
    std::map<std::string, std::string> generator_params;
    ScheduleSource source;
    // gpusched only: the plugin config (GPU profile, ...) and the decision
    // record to replay, so the OpenCL build gets exactly the chosen schedule.
    nlohmann::json plugin_config;
    std::string replay_record;
    std::string work_dir;
    // Where the scheduled build's Halide runtime is built once and shared
    // (tuner/generate/shared_runtime.h); empty: each build compiles its own.
    std::string runtime_cache_dir;
    std::chrono::seconds timeout{600}; // per step
    uint64_t input_seed = 1;
};

enum class ValidationStatus { Passed, Failed, NotRun };

// How a passed report's detail begins when only the device reference agreed.
inline constexpr const char *kAgreesWithDeviceReference = "agrees with the device's own build";
const char *to_string(ValidationStatus s);

struct ValidationReport {
    ValidationStatus status = ValidationStatus::NotRun;
    std::string detail; // one line: why not run, what failed, or what agreed
    std::vector<std::pair<std::string, OutputComparison>> outputs;
    double seconds = 0;
};

// A candidate the CPU references disagree with is compared with a third
// reference before it fails: the pipeline built for the device with every
// Func at root (the plugin's root_only), run on POCL. Where that build
// differs from the CPU's at a few points only (at most 1 value in 1000 of
// each output) and the candidate agrees with it, the schedule kept what the
// device computes, and what differs from the CPU is the device's math
// library (POCL's sin or exp against the CPU's, which strict_float does not
// pin); the report then passes and says so. A device build that differs
// all over (definitions that depend on the target) fails as before.
//
// Never throws for what the pipeline or the tools do; all of it is in the
// report. NotRun means validation could not be attempted (no OpenCL
// runtime, no C++ compiler, no runner archive), Failed that it ran and the
// schedule broke something: the outputs differ, or the scheduled build
// failed to compile or crashed.
ValidationReport validate_schedule_on_pocl(const ValidationRequest &request);

// Compares every output file (*.raw) of ref_dir with the same file in
// cand_dir: Passed, Failed (some differ or are missing), or NotRun (no
// outputs in ref_dir).
ValidationReport compare_output_dirs(const std::string &ref_dir, const std::string &cand_dir);

// The CPU reference of a request's pipeline: its outputs (*.raw) in dir, for
// the request's generator, params and input seed. Built and run once per
// pipeline in this process (in the work dir of the first request that needs
// it) and shared by every later request; failure says why there is none.
struct ReferenceOutputs {
    std::string dir;
    std::string failure; // empty on success
    bool ok() const { return failure.empty(); }
};
ReferenceOutputs reference_outputs(const ValidationRequest &request);

// The generator invocation that compiles the request's schedule (its
// source; for gpusched, the replayed decision record) into dir for target,
// emitting a library, header and registration for a runner to link.
GeneratorInvocation scheduled_build(const ValidationRequest &request, const std::string &dir,
                                    const std::string &target);
// Runs scheduled_build(request, dir, target), sharing the Halide runtime
// when the request names a runtime_cache_dir.
GeneratorOutcome run_scheduled_build(const ValidationRequest &request, const std::string &dir,
                                     const std::string &target);

// A C++ compiler to link runners with ($CXX, else c++); empty if none.
std::string locate_cxx_compiler();

// True when an OpenCL ICD loader (libOpenCL.so.1) can be loaded.
bool opencl_runtime_present();

// The prebuilt runner archive (output_runner_main.cpp); empty if not found.
std::string locate_output_runner_archive();

// A file gpusched builds and installs beside itself: $env_var, else next to
// the running binary's install tree (<libdir>/gpusched/, tuner/install_layout.h)
// or build tree (tuner/, tuner/measure/runner/), else build_path (where this build put
// it). Empty if none.
std::string locate_build_artifact(const char *env_var, const char *file_name, const char *build_path);

// The OpenCL probe (opencl_probe_main.cpp); empty if not found.
std::string locate_opencl_probe();

// Empty if this machine's OpenCL runs a trivial kernel (the probe, in a
// process of its own), else one line saying what is wrong with the OpenCL
// environment. Validation asks this before it builds anything.
std::string opencl_environment_problem(std::chrono::seconds timeout);

} // namespace gpusched
