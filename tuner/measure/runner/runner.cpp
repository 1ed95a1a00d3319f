#include "tuner/measure/runner/runner.h"

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/errors.h"
#include "tuner/measure/runner/cache_flush_size.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;

const char *to_string(DeviceKind kind) {
    return kind == DeviceKind::Cuda ? "cuda" : "opencl";
}

std::optional<DeviceKind> parse_device_kind(const std::string &name) {
    if (name == "cuda") return DeviceKind::Cuda;
    if (name == "opencl") return DeviceKind::OpenCl;
    return std::nullopt;
}

const char *to_string(MeasureOutcome o) {
    switch (o) {
    case MeasureOutcome::Measured:
        return "measured";
    case MeasureOutcome::WrongOutput:
        return "wrong output";
    case MeasureOutcome::Crashed:
        return "crashed";
    case MeasureOutcome::TimedOut:
        return "timeout";
    case MeasureOutcome::OutOfMemory:
        return "out of memory";
    case MeasureOutcome::DeviceError:
        return "device error";
    case MeasureOutcome::BuildFailed:
        return "build failed";
    case MeasureOutcome::NotRun:
        return "not run";
    }
    return "?";
}

nlohmann::json to_json(const TimingOptions &t) {
    return {{"min_time_s", t.min_time_s},
            {"min_reps", t.min_reps},
            {"max_reps", t.max_reps},
            {"precision", t.precision},
            {"warmup", t.warmup},
            {"timeout_s", t.timeout.count()},
            {"flush_bytes", t.flush_bytes ? nlohmann::json(*t.flush_bytes) : nlohmann::json(nullptr)},
            {"host_clock", t.host_clock}};
}

TimingOptions timing_from_json(const nlohmann::json &j) {
    TimingOptions t;
    t.min_time_s = j.at("min_time_s").get<double>();
    t.min_reps = j.at("min_reps").get<int>();
    t.max_reps = j.at("max_reps").get<int>();
    // Runs configured before issue 56 timed without a precision rule.
    t.precision = j.value("precision", 0.0);
    t.warmup = j.at("warmup").get<int>();
    t.timeout = std::chrono::seconds(j.at("timeout_s").get<int64_t>());
    // Runs configured before the flush timed without one; null is the
    // device's rule.
    if (!j.contains("flush_bytes"))
        t.flush_bytes = 0;
    else if (!j.at("flush_bytes").is_null())
        t.flush_bytes = j.at("flush_bytes").get<int64_t>();
    // Runs configured before the choice used events where they could.
    t.host_clock = j.value("host_clock", false);
    return t;
}

TimingOptions resolve_flush_bytes(TimingOptions t, int64_t last_level_cache_bytes) {
    if (!t.flush_bytes) t.flush_bytes = flush_bytes_for_cache(last_level_cache_bytes);
    return t;
}

nlohmann::json Measurement::to_json() const {
    auto opt = [](const std::optional<double> &v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    nlohmann::json j = {
        {"label", label},
        {"target", target},
        {"device_kind", to_string(device_kind)},
        {"device", device},
        {"outcome", to_string(outcome)},
        {"error", error},
        {"min_ms", opt(min_ms)},
        {"median_ms", opt(median_ms)},
        {"max_ms", opt(max_ms)},
        {"reps", reps},
        {"median_ci95_low_ms", opt(median_ci95_low_ms)},
        {"median_ci95_high_ms", opt(median_ci95_high_ms)},
        {"precision_met", precision_met},
        {"timer", timer},
        {"flush_bytes", flush_bytes ? nlohmann::json(*flush_bytes) : nlohmann::json(nullptr)},
        {"sm_clock_mhz", opt(sm_clock_mhz)},
        {"temperature_c", opt(temperature_c)},
        {"validation", validation},
        {"validation_detail", validation_detail},
        {"first_call_ms", first_call_ms},
        {"input_copy_ms", input_copy_ms},
        {"setup_ms", setup_ms},
        {"check_ms", check_ms},
        {"timed_ms", timed_ms},
        {"process_ms", process_ms},
        {"wall_seconds", wall_seconds},
    };
    j["gpu_index"] = gpu_index ? nlohmann::json(*gpu_index) : nlohmann::json(nullptr);
    return j;
}

namespace {

// The validation and provenance fields, which the harness's benchmark.json
// (benchmark_main.cpp) and Measurement::to_json() name alike.
void read_check_and_provenance(const nlohmann::json &j, Measurement &m) {
    m.validation = j.value("validation", "not run");
    m.validation_detail = j.value("validation_detail", "");
    m.first_call_ms = j.value("first_call_ms", 0.0);
    m.input_copy_ms = j.value("input_copy_ms", 0.0);
    m.setup_ms = j.value("setup_ms", 0.0);
    m.check_ms = j.value("check_ms", 0.0);
    m.timed_ms = j.value("timed_ms", 0.0);
    m.process_ms = j.value("process_ms", 0.0);
}

// The fields that say how good the times are and how they were taken,
// named alike in benchmark.json and Measurement::to_json().
void read_timing_detail(const nlohmann::json &j, Measurement &m) {
    auto number = [&](const char *key) {
        return j.contains(key) && j[key].is_number() ? std::optional<double>(j[key].get<double>())
                                                     : std::nullopt;
    };
    m.median_ci95_low_ms = number("median_ci95_low_ms");
    m.median_ci95_high_ms = number("median_ci95_high_ms");
    m.precision_met = j.value("precision_met", false);
    m.timer = j.value("timer", "");
    if (j.contains("flush_bytes") && j["flush_bytes"].is_number_integer())
        m.flush_bytes = j["flush_bytes"].get<int64_t>();
    m.sm_clock_mhz = number("sm_clock_mhz");
    m.temperature_c = number("temperature_c");
}

} // namespace

Measurement Measurement::from_json(const nlohmann::json &j) {
    Measurement m;
    auto opt = [&](const char *k) -> std::optional<double> {
        return j.contains(k) && j[k].is_number() ? std::optional<double>(j[k].get<double>()) : std::nullopt;
    };
    m.label = j.value("label", "");
    m.target = j.value("target", "");
    m.device_kind = parse_device_kind(j.value("device_kind", "opencl")).value_or(DeviceKind::OpenCl);
    m.device = j.value("device", "");
    if (j.contains("gpu_index") && j["gpu_index"].is_number()) m.gpu_index = j["gpu_index"].get<int>();
    const std::string outcome = j.value("outcome", "not run");
    m.outcome = MeasureOutcome::NotRun;
    for (MeasureOutcome o :
         {MeasureOutcome::Measured, MeasureOutcome::WrongOutput, MeasureOutcome::Crashed,
          MeasureOutcome::TimedOut, MeasureOutcome::OutOfMemory, MeasureOutcome::DeviceError,
          MeasureOutcome::BuildFailed, MeasureOutcome::NotRun})
        if (outcome == to_string(o)) m.outcome = o;
    m.error = j.value("error", "");
    m.min_ms = opt("min_ms");
    m.median_ms = opt("median_ms");
    m.max_ms = opt("max_ms");
    m.reps = j.value("reps", int64_t{0});
    read_timing_detail(j, m);
    read_check_and_provenance(j, m);
    m.wall_seconds = j.value("wall_seconds", 0.0);
    return m;
}

namespace {

std::string read_whole_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

} // namespace

namespace detail {

MeasureOutcome classify_pipeline_error(const std::string &m) {
    // Halide's runtimes name the driver's error code in the message.
    for (const char *oom : {"CUDA_ERROR_OUT_OF_MEMORY", "CL_MEM_OBJECT_ALLOCATION_FAILURE",
                            "CL_OUT_OF_HOST_MEMORY", "out of memory", "Out of memory"}) {
        if (m.find(oom) != std::string::npos) return MeasureOutcome::OutOfMemory;
    }
    for (const char *dev : {"CUDA", "cuda", "CL_", "OpenCL", "device"}) {
        if (m.find(dev) != std::string::npos) return MeasureOutcome::DeviceError;
    }
    return MeasureOutcome::Crashed;
}

namespace {

// What a harness wrote for one sample, if it finished it.
std::optional<Measurement> read_result(const BenchmarkBinary &b) {
    nlohmann::json result =
        nlohmann::json::parse(read_whole_file(b.work_dir + "/benchmark.json"), nullptr, false);
    if (!result.is_object() || !result.value("complete", false)) return std::nullopt;
    Measurement m;
    m.label = b.label;
    m.target = b.target;
    read_check_and_provenance(result, m);
    m.wall_seconds = m.process_ms / 1000.0;
    if (result.contains("load_error")) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = result.value("load_error", "");
    } else if (m.validation == "failed") {
        m.outcome = MeasureOutcome::WrongOutput;
        m.error = "wrong output: " + m.validation_detail;
    } else if (!result.contains("median_ms")) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark wrote no times to " + b.work_dir + "/benchmark.json";
    } else if (m.validation == "not run" && !b.reference_dir.empty()) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark did not check its output";
    } else {
        m.outcome = MeasureOutcome::Measured;
        m.min_ms = result.value("min_ms", 0.0);
        m.median_ms = result.value("median_ms", 0.0);
        m.max_ms = result.value("max_ms", 0.0);
        m.reps = result.value("reps", int64_t{0});
        read_timing_detail(result, m);
    }
    return m;
}

// The sample a harness process ended on, from how it ended.
Measurement charge_failure(const BenchmarkBinary &b, const ProcessResult &r, const TimingOptions &t,
                           double wall_seconds) {
    Measurement m;
    m.label = b.label;
    m.target = b.target;
    m.wall_seconds = wall_seconds;
    const std::string last = last_lines(r.err, 1);
    constexpr int kExitTimeout = 5; // benchmark_main.cpp: the sample's alarm
    if (!r.started) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark did not start: " + r.start_error;
    } else if (r.timed_out || (r.term_signal == 0 && r.exit_code == kExitTimeout)) {
        m.outcome = MeasureOutcome::TimedOut;
        m.error = "the benchmark did not finish in " + std::to_string(t.timeout.count()) +
                  " s; its process group was killed";
    } else if (r.term_signal != 0) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark crashed (" + r.describe_failure() + ")" + (last.empty() ? "" : ": " + last);
    } else if (r.exit_code == 3) {
        m.outcome = classify_pipeline_error(last);
        m.error = (last.empty() ? std::string("the pipeline failed") : last);
    } else if (r.exit_code != 0) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark failed (" + r.describe_failure() + ")" + (last.empty() ? "" : ": " + last);
    } else {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark exited without writing " + b.work_dir + "/benchmark.json";
    }
    return m;
}

// One harness process for binaries[first, end): fills out[] for each sample
// it finished, and for the one it ended on; returns the index to go on from.
std::size_t run_harness(const std::vector<BenchmarkBinary> &bins, std::size_t first, std::size_t end,
                        const TimingOptions &t, const std::map<std::string, std::string> &env,
                        std::vector<Measurement> &out, const Runner::MeasuredFn &on_measured) {
    std::error_code ec;
    std::ostringstream list;
    for (std::size_t i = first; i < end; ++i) {
        const BenchmarkBinary &b = bins[i];
        fs::create_directories(b.work_dir, ec);
        fs::remove(b.work_dir + "/benchmark.json", ec);
        fs::remove(b.work_dir + "/started", ec);
        // Five NUL-terminated fields a sample: a path may hold a tab or a
        // line break, never a NUL (benchmark_main.cpp, read_list).
        for (const std::string &field :
             {b.library, b.function_name, b.work_dir, b.reference_dir, std::to_string(b.input_seed)})
            list << field << '\0';
    }
    const std::string list_path = bins[first].work_dir + "/group.list";
    std::ofstream(list_path) << list.str();

    // A runner has set flush_bytes for its device (resolve_flush_bytes); a
    // harness run without one flushes as for this host's cache.
    ProcessSpec spec;
    spec.argv = {
        bins[first].executable,
        "--list",
        list_path,
        "--min-time",
        std::to_string(t.min_time_s),
        "--min-reps",
        std::to_string(t.min_reps),
        "--max-reps",
        std::to_string(t.max_reps),
        "--precision",
        std::to_string(t.precision),
        "--flush-bytes",
        std::to_string(t.flush_bytes ? *t.flush_bytes : flush_bytes_for_cache(host_last_level_cache_bytes())),
        "--warmup",
        std::to_string(t.warmup),
        "--timeout",
        std::to_string(t.timeout.count()),
        "--timer",
        t.host_clock ? "host-clock" : "auto"};
    spec.env = env;
    // Each sample has its own alarm in the harness; this is the backstop for
    // a process the alarm cannot end: every sample's timeout, and a margin.
    spec.timeout = t.timeout * static_cast<int64_t>(end - first) + std::chrono::seconds(30);

    // The harness prints a line after each sample's result is written: pass
    // on every result complete by then. The caller's exception waits until
    // the process is over (run_process must not be unwound past its child).
    std::size_t reported = first;
    double accounted = 0;
    std::exception_ptr failure;
    auto deliver = [&](std::size_t i) {
        if (!on_measured || failure) return;
        try {
            on_measured(i, out[i]);
        } catch (...) {
            failure = std::current_exception();
        }
    };
    auto collect = [&] {
        for (; reported < end; ++reported) {
            std::optional<Measurement> m = read_result(bins[reported]);
            if (!m) break;
            out[reported] = *m;
            accounted += m->wall_seconds;
            deliver(reported);
        }
        return reported == end;
    };
    // With every result in, the harness has a few seconds to exit: an OpenCL
    // driver whose destructors hang after main (releasing the context Halide's
    // runtime frees at exit) would otherwise hold the round until the backstop.
    spec.on_stdout = collect;
    const ProcessResult r = run_process(spec);
    collect();
    std::size_t next = end;
    if (reported < end) {
        // The first sample without a result is the one the process ended on
        // (or, when it ended before loading any, the first one: a harness
        // that cannot start is charged to one sample at a time, so the group
        // always progresses).
        out[reported] = charge_failure(bins[reported], r, t, std::max(0.0, r.wall_seconds - accounted));
        deliver(reported);
        next = reported + 1;
    }
    if (failure) std::rethrow_exception(failure);
    return next;
}

} // namespace

std::vector<Measurement> run_benchmark_group(const std::vector<BenchmarkBinary> &bins, const TimingOptions &t,
                                             const std::map<std::string, std::string> &env,
                                             const Runner::MeasuredFn &on_measured) {
    std::vector<Measurement> out(bins.size());
    std::size_t next = 0;
    while (next < bins.size()) {
        // Consecutive binaries of one harness share a process.
        std::size_t end = next + 1;
        while (end < bins.size() && bins[end].executable == bins[next].executable)
            ++end;
        next = run_harness(bins, next, end, t, env, out, on_measured);
    }
    return out;
}

Measurement run_benchmark_process(const BenchmarkBinary &b, const TimingOptions &t,
                                  const std::map<std::string, std::string> &env) {
    return run_benchmark_group({b}, t, env).front();
}

} // namespace detail

std::unique_ptr<Runner> make_runner(DeviceKind kind, const TimingOptions &timing) {
    return kind == DeviceKind::Cuda ? make_cuda_runner(timing) : make_opencl_runner(timing);
}

} // namespace gpusched
