// The benchmark harness (tuner/measure/runner/runner.h): this file's main, prebuilt
// as libgpusched_benchmark_runner.a, is linked once per run and target with
// the run's Halide runtime (tuner/generate/shared_runtime.h), which it exports
// (-rdynamic). Each sample is a shared object of its compiled pipeline
// (built with no_runtime, or carrying a runtime that the harness's own
// interposes), loaded with dlopen: one process times a group of samples with
// one device context and one start of POCL's kernel compiler, and no sample
// needs a link around the harness.
//
//   bench --list FILE [--min-time S] [--min-reps N] [--max-reps N]
//         [--warmup N] [--timeout S] [--precision R] [--flush-bytes N]
//         [--timer auto|host-clock]
//
// FILE has one sample per line, tab-separated: shared object, function name,
// output directory, reference directory (may be empty), input seed. For
// each sample, in order:
//
// 0. OUT_DIR/started is written, an alarm of --timeout seconds is set, the
//    object is loaded and its NAME_argv and NAME_metadata are looked up.
// 1. Inputs as the validation runner makes them (RunGen.h: random with the
//    seed, at the generator's estimated sizes), so a reference build run by
//    output_runner_main.cpp with the same seed computed the same thing.
// 2. Inputs are copied to the device before anything is timed
//    (halide_copy_to_device with the device interface the runtime defines:
//    CUDA, OpenCL, or none for a CPU build).
// 3. The first call (module load, the driver's or POCL's JIT) is timed on
//    its own and never counted. Its outputs are copied to the host, written
//    as OUT_DIR/<output>.raw and compared with the reference's files: a
//    mismatch is recorded with the difference, and nothing is timed.
// 4. Warm-up calls, then timed calls until both --min-time seconds in total
//    and --min-reps calls and, with --precision R > 0, until the median's
//    95% confidence interval reaches no further than R times the median from
//    it (timing_statistics.h), or --max-reps calls; the interval and whether
//    the precision was met are recorded. Each timed call is the
//    pipeline call plus halide_device_sync of every output: what a user of
//    the schedule waits for. RunGen's own benchmark mode syncs the outputs
//    too, but reports only the best time and leaves the first host-to-device
//    copy of the inputs inside its measurement loop; this one keeps every
//    time and reports min and median.
//    Before each timed call, outside the timed interval, --flush-bytes
//    bytes are written (cache_flush.h: a device buffer on CUDA, a host
//    buffer for POCL and CPU builds; the driver passes twice the device's
//    last-level cache, 0 turns it off), so no call is timed on the data the
//    one before left in cache. The call is read with CUDA events on a CUDA
//    harness, on the GPU's own clock, and with the host's steady_clock
//    elsewhere or where events cannot be had (device_timer.h), or everywhere
//    with --timer host-clock (the timing before issue 56, to compare the
//    two on the same samples); "timer" and "flush_bytes" say which and how
//    much.
// 5. On CUDA, the SM clock and temperature after the timed calls, where
//    NVML can be loaded (gpu_telemetry.h): "sm_clock_mhz", "temperature_c".
// 6. OUT_DIR/benchmark.json is written, with "complete": true, and
//    "finished OUT_DIR" printed, before the next sample starts: the driver
//    stores the result at once, and a later crash loses nothing measured.
//
// A sample that ends the process (a signal; a Halide error, exit 3; its
// alarm, exit 5) is the one whose OUT_DIR has `started` and no complete
// result: the driver records it and starts a new harness for the samples
// after it. Exit status: 0 every sample ran (wrong outputs included), 2 bad
// usage, 3 a pipeline failed (halide_error: its message on stderr, e.g. a
// CUDA or OpenCL error), 5 a sample ran past --timeout.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#define HALIDE_NO_PNG
#define HALIDE_NO_JPEG
#include "RunGen.h"

#include "tuner/measure/runner/cache_flush.h"
#include "tuner/measure/runner/device_timer.h"
#include "tuner/measure/runner/gpu_telemetry.h"
#include "tuner/measure/runner/timing_statistics.h"
#include "tuner/measure/validation/gpu_api_preload.h"
#include "tuner/measure/validation/output_file.h"
#include "tuner/measure/validation/output_file_writer.h"
#include "tuner/measure/validation/runner_main_support.h"

// Defined by the harness's Halide runtime when it was built for that
// device; weak, so one harness source serves CUDA, OpenCL and CPU runtimes.
extern "C" const struct halide_device_interface_t *halide_cuda_device_interface() __attribute__((weak));
extern "C" const struct halide_device_interface_t *halide_opencl_device_interface() __attribute__((weak));

namespace {

using Clock = std::chrono::steady_clock;

using gpusched::runner_main::kExitPipelineFailed;

constexpr int kExitUsage = 2;
constexpr int kExitTimeout = 5;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string json_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
            continue;
        }
        out += c;
    }
    return out;
}

const halide_device_interface_t *device_interface(std::string &name) {
    if (halide_cuda_device_interface) {
        name = "cuda";
        return halide_cuda_device_interface();
    }
    if (halide_opencl_device_interface) {
        name = "opencl";
        return halide_opencl_device_interface();
    }
    name = "none";
    return nullptr;
}

struct SampleSpec {
    std::string library, function, out_dir, reference, seed;
};

// The sample list the driver writes (runner.cpp): five NUL-terminated
// fields a sample (library, function, out dir, reference, seed), so that
// paths with tabs or line breaks in them arrive whole.
bool read_list(const std::string &path, std::vector<SampleSpec> &samples) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "cannot read the sample list %s\n", path.c_str());
        return false;
    }
    std::vector<std::string> fields;
    for (std::string field; std::getline(f, field, '\0');)
        fields.push_back(field);
    if (fields.size() % 5 != 0) {
        std::fprintf(stderr, "bad sample list %s: %zu fields, not five a sample\n", path.c_str(),
                     fields.size());
        return false;
    }
    for (std::size_t i = 0; i < fields.size(); i += 5) {
        if (fields[i].empty() || fields[i + 1].empty() || fields[i + 2].empty()) {
            std::fprintf(stderr, "bad sample %zu in %s: no library, function or out dir\n", i / 5,
                         path.c_str());
            return false;
        }
        samples.push_back({fields[i], fields[i + 1], fields[i + 2], fields[i + 3],
                           fields[i + 4].empty() ? "1" : fields[i + 4]});
    }
    return true;
}

// The sample that ran past its time: the process ends, and the driver finds
// it by its `started` file without a result.
void on_alarm(int) {
    static const char msg[] = "the sample ran past --timeout\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(kExitTimeout);
}

bool write_started(const std::string &out_dir) {
    std::ofstream f(out_dir + "/started");
    f << "started\n";
    return static_cast<bool>(f);
}

// What the first call's outputs came to against the CPU reference.
struct OutputCheck {
    std::string validation = "not run"; // not run | passed | failed
    std::string detail;
};

// Writes every output of the first call (OUT/NAME.raw) and compares each
// with the reference, if any. False when an output cannot be written.
bool check_outputs(const SampleSpec &spec, const halide_filter_metadata_t *md,
                   const std::vector<void *> &filter_argv, OutputCheck &check) {
    for (int i = 0; i < md->num_arguments; ++i) {
        if (md->arguments[i].kind != halide_argument_kind_output_buffer) continue;
        std::string name = md->arguments[i].name;
        // RunGen drops a "$N" suffix from argument names; so do the files.
        if (name.size() > 2 && name[name.size() - 2] == '$') name = name.substr(0, name.size() - 2);
        Halide::Runtime::Buffer<> out(
            *static_cast<halide_buffer_t *>(filter_argv[static_cast<std::size_t>(i)]));
        const std::string path = spec.out_dir + "/" + name + ".raw";
        if (!gpusched::write_output_file(path, out)) {
            std::fprintf(stderr, "cannot write %s\n", path.c_str());
            return false;
        }
        if (spec.reference.empty()) continue;
        const gpusched::OutputComparison c = gpusched::compare_with_references(spec.reference, name, path);
        if (!check.detail.empty()) check.detail += "; ";
        check.detail += name + ": " + c.detail;
        if (!c.passed())
            check.validation = "failed";
        else if (check.validation != "failed")
            check.validation = "passed";
    }
    return true;
}

// How a process's samples are timed: the timer and the cache flush of its
// device (device_timer.h, cache_flush.h), made when the first sample
// reaches its timed calls (a CUDA context exists by then: Halide's runtime
// makes it in the first call) and kept for the rest of the process.
struct TimingTools {
    bool host_clock = false; // --timer host-clock
    std::unique_ptr<gpusched::harness::DeviceTimer> timer;
    std::unique_ptr<gpusched::harness::CacheFlush> flush;
    std::string timer_problem, flush_problem; // why CUDA fell back, if it did
};

void make_timing_tools(TimingTools &tools, const std::string &device, int64_t flush_bytes) {
    if (tools.timer) return;
    tools.timer =
        gpusched::harness::make_device_timer(tools.host_clock ? "host" : device, &tools.timer_problem);
    tools.flush = gpusched::harness::make_cache_flush(device, flush_bytes, &tools.flush_problem);
}

// Warm-up calls, then timed calls until the stopping rule says enough
// (timing_statistics.h: min_reps calls and min_time_s, and the median's 95%
// interval within --precision of it, or max_reps): the timing fields of
// benchmark.json. The precision is checked at geometric steps of the count
// (each 10% more calls), so a long run sorts its times O(log n) times. Each
// timed call: the flush, then the timer around the pipeline call and the
// outputs' sync (device_timer.h says where the interval ends).
template <typename Pipeline, typename Sync>
std::string timed_calls(const Pipeline &pipeline, const Sync &sync,
                        const gpusched::timing::StoppingRule &rule, long warmup, TimingTools &tools) {
    using namespace gpusched::timing;
    for (long i = 0; i < warmup; ++i) {
        pipeline();
        sync();
    }
    std::vector<double> times, sorted;
    times.reserve(static_cast<std::size_t>(std::min(rule.max_reps, 100000L)));
    double total_ms = 0;
    long next_check = 0;
    StopReason reason = StopReason::NotYet;
    while (reason == StopReason::NotYet) {
        tools.flush->flush();
        tools.timer->start();
        pipeline();
        tools.timer->pipeline_returned();
        sync();
        const double ms = tools.timer->elapsed_ms();
        times.push_back(ms);
        total_ms += ms;
        const long reps = static_cast<long>(times.size());
        if (reps < next_check && reps < rule.max_reps) continue;
        reason = should_stop(rule, reps, total_ms, [&]() -> const std::vector<double> & {
            sorted = times;
            std::sort(sorted.begin(), sorted.end());
            return sorted;
        });
        if (reps >= rule.min_reps && total_ms >= rule.min_time_ms) next_check = reps + reps / 10 + 1;
    }
    sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const MedianInterval ci = median_interval(sorted);
    char body[1024];
    std::snprintf(
        body, sizeof body,
        ", \"min_ms\": %.9g, \"median_ms\": %.9g, \"max_ms\": %.9g, \"reps\": %zu, \"warmup\": %ld, "
        "\"timed_ms\": %.9g, \"median_ci95_low_ms\": %s, \"median_ci95_high_ms\": %s, "
        "\"precision\": %.9g, \"precision_met\": %s, \"timer\": \"%s\", \"flush_bytes\": %lld",
        sorted.front(), median_of_sorted(sorted), sorted.back(), n, warmup, total_ms,
        ci.exists ? std::to_string(ci.low).c_str() : "null",
        ci.exists ? std::to_string(ci.high).c_str() : "null", rule.precision,
        rule.precision > 0 && median_precise(sorted, rule.precision) ? "true" : "false", tools.timer->name(),
        static_cast<long long>(tools.flush->bytes()));
    std::string out = body;
    if (!tools.timer_problem.empty())
        out += ", \"timer_problem\": \"" + json_escape(tools.timer_problem) + "\"";
    if (!tools.flush_problem.empty())
        out += ", \"flush_problem\": \"" + json_escape(tools.flush_problem) + "\"";
    return out;
}

// The GPU's SM clock and temperature now, as benchmark.json fields; none
// where they cannot be read (gpu_telemetry.h).
std::string telemetry_fields(const std::string &device) {
    const gpusched::harness::GpuTelemetry t = gpusched::harness::read_gpu_telemetry(device, nullptr);
    std::string out;
    if (t.sm_clock_mhz) out += ", \"sm_clock_mhz\": " + std::to_string(*t.sm_clock_mhz);
    if (t.temperature_c) out += ", \"temperature_c\": " + std::to_string(*t.temperature_c);
    return out;
}

// Times one sample; returns non-zero only for what must end the process.
int run_sample(const SampleSpec &spec, const gpusched::timing::StoppingRule &rule, long warmup,
               int64_t flush_bytes, TimingTools &tools) {
    using namespace Halide::RunGen;
    const auto sample_start = Clock::now();
    const std::string &out_dir = spec.out_dir;
    if (!write_started(out_dir)) {
        std::fprintf(stderr, "cannot write %s/started\n", out_dir.c_str());
        return kExitUsage;
    }
    std::string device;
    const halide_device_interface_t *interface = device_interface(device);

    auto write_result = [&](const std::string &body) {
        std::ofstream f(out_dir + "/benchmark.json");
        f << "{\"complete\": true, \"device_interface\": \"" << device << "\"" << body
          << ", \"process_ms\": " << ms_since(sample_start) << "}\n";
        return static_cast<bool>(f);
    };
    // A sample that cannot be loaded is that sample's failure, not the group's.
    void *handle = dlopen(spec.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    using ArgvCall = int (*)(void **);
    using MetadataCall = const halide_filter_metadata_t *(*)();
    ArgvCall argv_call = nullptr;
    MetadataCall metadata_call = nullptr;
    if (handle) {
        argv_call = reinterpret_cast<ArgvCall>(dlsym(handle, (spec.function + "_argv").c_str()));
        metadata_call = reinterpret_cast<MetadataCall>(dlsym(handle, (spec.function + "_metadata").c_str()));
    }
    if (!argv_call || !metadata_call) {
        const char *why = dlerror();
        const std::string error = "cannot load " + spec.function + " from " + spec.library + ": " +
                                  (why ? why : "no such function");
        if (!write_result(", \"load_error\": \"" + json_escape(error) + "\"")) return kExitUsage;
        return 0;
    }
    const halide_filter_metadata_t *md = metadata_call();

    RunGen r(argv_call, md);
    r.set_quiet(true);
    std::set<std::string> seen;
    r.validate(seen, "random:" + spec.seed + ":estimate_then_auto", "estimate", /*ok_to_omit_outputs=*/true);
    r.load_inputs("estimate");
    std::vector<Shape> shapes = r.run_bounds_query();
    r.adapt_input_buffers(shapes);
    r.allocate_output_buffers(shapes);

    // The argv the pipeline is called with; buffers by metadata index.
    std::vector<void *> filter_argv = r.build_filter_argv();
    std::vector<halide_buffer_t *> inputs, outputs;
    for (int i = 0; i < md->num_arguments; ++i) {
        auto *b = static_cast<halide_buffer_t *>(filter_argv[static_cast<std::size_t>(i)]);
        if (md->arguments[i].kind == halide_argument_kind_input_buffer) inputs.push_back(b);
        if (md->arguments[i].kind == halide_argument_kind_output_buffer) outputs.push_back(b);
    }
    const double setup_ms = ms_since(sample_start); // loaded, inputs made, bounds query
    const auto copy_start = Clock::now();
    if (interface) {
        for (halide_buffer_t *b : inputs) {
            if (int err = halide_copy_to_device(nullptr, b, interface); err != 0) {
                std::fprintf(stderr, "copying an input to the %s device failed (Halide error %d)\n",
                             device.c_str(), err);
                return kExitPipelineFailed;
            }
        }
    }
    const double input_copy_ms = ms_since(copy_start);

    auto pipeline = [&] {
        // halide_error ends the process (exit 3) before a non-zero return.
        if (int err = argv_call(filter_argv.data()); err != 0) {
            std::fprintf(stderr, "the pipeline returned Halide error %d\n", err);
            std::fflush(stderr);
            std::_Exit(kExitPipelineFailed);
        }
    };
    auto sync = [&] {
        for (halide_buffer_t *b : outputs) {
            // A CPU build's outputs have no device to wait for (and
            // halide_device_sync calls that an error).
            if (!b->device_interface) continue;
            if (int err = halide_device_sync(nullptr, b); err != 0) {
                std::fprintf(stderr, "device_sync failed (Halide error %d)\n", err);
                std::fflush(stderr);
                std::_Exit(kExitPipelineFailed);
            }
        }
    };

    // First call: module load and JIT, and the outputs to check.
    const auto first_start = Clock::now();
    pipeline();
    sync();
    const double first_call_ms = ms_since(first_start);
    const auto check_start = Clock::now();
    OutputCheck check;
    if (!check_outputs(spec, md, filter_argv, check)) return kExitUsage;
    const std::string &validation = check.validation;
    const double check_ms = ms_since(check_start); // outputs copied back, written and compared

    std::ostringstream common;
    common << ", \"validation\": \"" << validation << "\", \"validation_detail\": \""
           << json_escape(check.detail) << "\", \"first_call_ms\": " << first_call_ms
           << ", \"input_copy_ms\": " << input_copy_ms << ", \"setup_ms\": " << setup_ms
           << ", \"check_ms\": " << check_ms;
    if (validation == "failed") {
        if (!write_result(common.str())) return kExitUsage;
        return 0;
    }

    make_timing_tools(tools, device, flush_bytes);
    const std::string body = timed_calls(pipeline, sync, rule, warmup, tools) + telemetry_fields(device);
    if (!write_result(common.str() + body)) {
        std::fprintf(stderr, "cannot write %s/benchmark.json\n", out_dir.c_str());
        return kExitUsage;
    }
    // The sample's buffers (host and device) are freed here, by RunGen's
    // destructor; its loaded code stays until the process ends (the
    // runtime keeps its compiled kernels in its module list).
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    gpusched::preload_gpu_apis();
    std::string list;
    double min_time_s = 0.1, precision = 0;
    long min_reps = 3, max_reps = 1000, warmup = 1, timeout_s = 0;
    long long flush_bytes = 0; // the driver always passes it (runner.cpp)
    std::string timer = "auto";
    bool usage_ok = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            usage_ok = false;
            break;
        }
        const std::string v = argv[++i];
        if (a == "--list")
            list = v;
        else if (a == "--min-time")
            min_time_s = std::atof(v.c_str());
        else if (a == "--min-reps")
            min_reps = std::atol(v.c_str());
        else if (a == "--max-reps")
            max_reps = std::atol(v.c_str());
        else if (a == "--warmup")
            warmup = std::atol(v.c_str());
        else if (a == "--timeout")
            timeout_s = std::atol(v.c_str());
        else if (a == "--precision")
            precision = std::atof(v.c_str());
        else if (a == "--flush-bytes")
            flush_bytes = std::atoll(v.c_str());
        else if (a == "--timer")
            timer = v;
        else
            usage_ok = false;
    }
    if (!usage_ok || list.empty() || min_reps < 1 || max_reps < min_reps || warmup < 0 ||
        !(min_time_s >= 0) || timeout_s < 0 || !(precision >= 0 && precision < 1) || flush_bytes < 0 ||
        (timer != "auto" && timer != "host-clock")) {
        std::fprintf(stderr,
                     "usage: %s --list FILE [--min-time S] [--min-reps N] [--max-reps N] [--warmup N] "
                     "[--timeout S] [--precision R] [--flush-bytes N] [--timer auto|host-clock], with 1 <= "
                     "--min-reps <= --max-reps, --warmup >= 0, --min-time >= 0, 0 <= --precision < 1, "
                     "--flush-bytes >= 0\n",
                     argv[0]);
        return kExitUsage;
    }
    const gpusched::timing::StoppingRule rule{min_time_s * 1000.0, min_reps, max_reps, precision};
    std::vector<SampleSpec> samples;
    if (!read_list(list, samples)) return kExitUsage;
    std::signal(SIGALRM, on_alarm);
    TimingTools tools;
    tools.host_clock = timer == "host-clock";
    for (const SampleSpec &s : samples) {
        alarm(static_cast<unsigned>(timeout_s));
        if (int status = run_sample(s, rule, warmup, flush_bytes, tools); status != 0) return status;
        alarm(0);
        // The driver reads the result as soon as this line arrives.
        std::printf("finished %s\n", s.out_dir.c_str());
        std::fflush(stdout);
    }
    // Every result is written: leave without running destructors. Halide's
    // GPU runtimes release their contexts from a destructor after main, and
    // an OpenCL driver's teardown there can hang (Halide issue 7885 and
    // others); the kernel frees the device's memory either way.
    std::fflush(nullptr);
    std::_Exit(0);
}
