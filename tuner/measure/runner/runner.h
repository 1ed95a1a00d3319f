#pragma once
// The runner: takes a compiled sample and returns what it measured (TVM
// MetaSchedule's Runner; the build step is benchmark_build.h, the record
// goes to the database). A benchmark runs in a harness process of its own
// (benchmark_main.cpp, linked once per run with the run's Halide runtime),
// with a timeout, in its own process group; the harness loads the sample's
// shared object, checks its output against the CPU reference before it
// times anything (see benchmark_main.cpp for what is timed). run_many()
// times a group of samples in one harness process: one device context, one
// start of POCL's kernel compiler, for all of them (the per-process cost was
// most of a sample's benchmark on POCL: docs/results/autotune-pocl.md).
//
// Two devices behind one interface:
// - cuda: the real thing. One benchmark (group) per GPU at a time
//   (CUDA_VISIBLE_DEVICES names the one it gets), all GPUs busy; compiles
//   may run beside benchmarks, on the CPU.
// - opencl: the same harness on POCL, the CPU's OpenCL, for machines without
//   a GPU and for CI. Its times are real times of a CPU OpenCL device, never
//   a GPU's: they carry the device name pocl-<cpu model>. One benchmark
//   (group) at a time, and never beside compile jobs, which would share its
//   cores.
//
// Invariants: run() never throws for anything a sample does; a crash
// (signal), a hang (timeout: the process group is killed), a device error,
// running out of device memory and a wrong output each come back as a
// Measurement with its outcome and one line of error, never a time. In a
// group, a sample that ends the harness process (crash, hang, device error)
// is recorded as such, the samples measured before it keep their results
// (each is written as it finishes), and those after it run in a fresh
// harness process. A Measurement with outcome Measured always has min,
// median and reps.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusched {

enum class DeviceKind { Cuda, OpenCl };
const char *to_string(DeviceKind kind);
std::optional<DeviceKind> parse_device_kind(const std::string &name);

struct TimingOptions {
    // Repetitions run until both hold: min_time_s seconds timed in total and
    // min_reps calls; never more than max_reps. 0.1 s is RunGen's default.
    double min_time_s = 0.1;
    int min_reps = 3;
    int max_reps = 1000;
    // And, where > 0, until the median's 95% confidence interval reaches no
    // further than this fraction of the median on either side
    // (timing_statistics.h); max_reps is the cap (issue 56).
    double precision = 0.02;
    int warmup = 1;                   // untimed calls after the first
    std::chrono::seconds timeout{60}; // per sample (its alarm in the harness)
    // Bytes the harness writes before each timed call, outside the timed
    // interval, so that no call is timed on the data the one before left in
    // cache (cache_flush.h; issue 56). Unset: twice the device's last-level
    // cache, which the runner fills in (resolve_flush_bytes); 0: no flush
    // (tune --no-flush).
    std::optional<int64_t> flush_bytes;
    // Read every call with the host's steady_clock, even where CUDA events
    // can be had (tune --host-clock): with --no-flush and --precision 0, the
    // timing before issue 56, so the two can be compared on the same samples.
    bool host_clock = false;
};
// As stored in a run's config: min_time_s, min_reps, max_reps, precision,
// warmup, timeout_s, flush_bytes (null: the device's rule), host_clock.
nlohmann::json to_json(const TimingOptions &t);
// The reverse; throws nlohmann::json::exception for a missing or mistyped field.
TimingOptions timing_from_json(const nlohmann::json &j);
// The timing a harness on a device whose last-level cache has this many
// bytes (0: unknown) runs with: flush_bytes, where unset, by the rule of
// cache_flush_size.h.
TimingOptions resolve_flush_bytes(TimingOptions timing, int64_t last_level_cache_bytes);

enum class MeasureOutcome {
    Measured,
    WrongOutput,
    Crashed,
    TimedOut,
    OutOfMemory,
    DeviceError,
    BuildFailed,
    NotRun
};
// As stored in samples.benchmark: measured, wrong output, crashed, timeout,
// out of memory, device error, build failed, not run.
const char *to_string(MeasureOutcome outcome);

// A benchmark, built (benchmark_build.h) and ready to run: the harness
// executable and the sample's shared object it loads.
struct BenchmarkBinary {
    std::string label;         // "sample 3", "li2018": for messages
    std::string executable;    // the harness (shared by the run's samples)
    std::string library;       // the sample's shared object
    std::string function_name; // its pipeline function (NAME_argv, NAME_metadata)
    std::string work_dir;      // its outputs and benchmark.json go here
    std::string reference_dir; // the CPU reference's outputs
    std::string target;        // the Halide target it was built for
    uint64_t input_seed = 1;
};

// One measurement, as TVM keeps it: what ran where, what came out, and how.
struct Measurement {
    // Inputs.
    std::string label, target;
    DeviceKind device_kind = DeviceKind::OpenCl;
    std::string device;           // the GPU's name, or pocl-<cpu model>
    std::optional<int> gpu_index; // cuda: the CUDA_VISIBLE_DEVICES it ran with
    // Outputs.
    MeasureOutcome outcome = MeasureOutcome::NotRun;
    std::string error; // one line; empty when measured
    std::optional<double> min_ms, median_ms, max_ms;
    int64_t reps = 0;
    // The median's distribution-free 95% confidence interval (none below 6
    // repetitions), and whether the run's precision was met before the cap.
    std::optional<double> median_ci95_low_ms, median_ci95_high_ms;
    bool precision_met = false;
    // How the times were taken (benchmark_main.cpp): the timer,
    // "cuda-events" or "host-clock" (empty when nothing was timed); the
    // bytes written before each timed call to flush the cache (0: none); the
    // GPU's SM clock and temperature after the timed calls (cuda with NVML).
    std::string timer;
    std::optional<int64_t> flush_bytes;
    std::optional<double> sm_clock_mhz, temperature_c;
    std::string validation = "not run"; // not run | passed | failed
    std::string validation_detail;
    // Provenance: the harness's own figures and the process as seen from here.
    double first_call_ms = 0; // module load + JIT + first run, not counted
    double input_copy_ms = 0; // host-to-device copies before timing, not counted
    double setup_ms = 0;      // arguments parsed, inputs made, bounds query
    double check_ms = 0;      // outputs copied back, written and compared with the reference
    double timed_ms = 0;      // sum of the timed calls
    double process_ms = 0;    // the harness's main(), start to end
    double wall_seconds = 0;  // the process, start to exit, from the driver

    bool measured() const { return outcome == MeasureOutcome::Measured; }
    nlohmann::json to_json() const;
    // The inverse of to_json(); missing fields keep their defaults.
    static Measurement from_json(const nlohmann::json &j);
};

class Runner {
public:
    virtual ~Runner() = default;
    virtual DeviceKind kind() const = 0;
    // The device name measurements are stored under.
    virtual std::string device_name() const = 0;
    // How many benchmarks may run at once (one per GPU).
    virtual int slots() const = 0;
    // Whether compile jobs may run while a benchmark is timed.
    virtual bool compiles_may_overlap() const = 0;
    // Thread-safe; waits for a free device. Never throws for what the sample does.
    virtual Measurement run(const BenchmarkBinary &binary) = 0;
    // The same for a group, in order, on one device, in as few harness
    // processes as the samples allow (see the invariants above); one
    // Measurement per binary. on_measured(i, m) is called for each binary as
    // soon as its measurement is known (while the harness goes on with the
    // next), so a caller can store it before the group ends. What
    // on_measured throws is rethrown once the harness process has ended.
    using MeasuredFn = std::function<void(std::size_t index, const Measurement &)>;
    virtual std::vector<Measurement> run_many(const std::vector<BenchmarkBinary> &binaries,
                                              const MeasuredFn &on_measured = {}) = 0;
};

// Most samples a driver hands to run_many() at once: a crash costs a new
// process for the rest, and an interrupt waits for the group.
constexpr std::size_t kMaxBenchmarkGroup = 16;

// Throw UnavailableError (common/errors.h) with one line when the device
// cannot be used here: no GPU (naming --device opencl), no OpenCL runtime or
// one that cannot run a kernel.
std::unique_ptr<Runner> make_cuda_runner(const TimingOptions &timing);
std::unique_ptr<Runner> make_opencl_runner(const TimingOptions &timing);
std::unique_ptr<Runner> make_runner(DeviceKind kind, const TimingOptions &timing);

// The device tune uses when none is named: cuda when a GPU is visible.
std::optional<DeviceKind> default_device_kind();

// pocl-<cpu model name from /proc/cpuinfo>.
std::string pocl_device_name();

namespace detail {
// Runs a built benchmark with extra environment: the shared part of both
// devices. Fills everything but device, device_kind and gpu_index.
Measurement run_benchmark_process(const BenchmarkBinary &binary, const TimingOptions &timing,
                                  const std::map<std::string, std::string> &env);
// The same for a group: harness processes until every binary has its
// Measurement (a sample that ends one is charged with it, the rest go to
// the next). Binaries of one group share an executable.
std::vector<Measurement> run_benchmark_group(const std::vector<BenchmarkBinary> &binaries,
                                             const TimingOptions &timing,
                                             const std::map<std::string, std::string> &env,
                                             const Runner::MeasuredFn &on_measured = {});
// The outcome of a harness that exited with a Halide error, from its message.
MeasureOutcome classify_pipeline_error(const std::string &message);
} // namespace detail

} // namespace gpusched
