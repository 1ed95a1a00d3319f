#include "tuner/runner/runner.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tuner/subprocess.h"
#include "tuner/user_error.h"

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

Measurement run_benchmark_process(const BenchmarkBinary &b, const TimingOptions &t,
                                  const std::map<std::string, std::string> &env) {
    Measurement m;
    m.label = b.label;
    m.target = b.target;
    std::error_code ec;
    fs::create_directories(b.work_dir, ec);
    const std::string result_path = b.work_dir + "/benchmark.json";
    fs::remove(result_path, ec);

    ProcessSpec spec;
    spec.argv = {b.executable,
                 b.work_dir,
                 "seed=" + std::to_string(b.input_seed),
                 "--min-time",
                 std::to_string(t.min_time_s),
                 "--min-reps",
                 std::to_string(t.min_reps),
                 "--max-reps",
                 std::to_string(t.max_reps),
                 "--warmup",
                 std::to_string(t.warmup)};
    if (!b.reference_dir.empty()) {
        spec.argv.push_back("--reference");
        spec.argv.push_back(b.reference_dir);
    }
    spec.env = env;
    spec.timeout = t.timeout;
    const ProcessResult r = run_process(spec);
    m.wall_seconds = r.wall_seconds;

    nlohmann::json result = nlohmann::json::parse(read_whole_file(result_path), nullptr, false);
    if (result.is_object()) {
        m.validation = result.value("validation", "not run");
        m.validation_detail = result.value("validation_detail", "");
        m.first_call_ms = result.value("first_call_ms", 0.0);
        m.input_copy_ms = result.value("input_copy_ms", 0.0);
        m.setup_ms = result.value("setup_ms", 0.0);
        m.check_ms = result.value("check_ms", 0.0);
        m.process_ms = result.value("process_ms", 0.0);
        m.timed_ms = result.value("timed_ms", 0.0);
    }
    const std::string last = last_lines(r.err, 1);
    if (!r.started) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark did not start: " + r.start_error;
    } else if (r.timed_out) {
        m.outcome = MeasureOutcome::TimedOut;
        m.error = "the benchmark did not finish in " + std::to_string(t.timeout.count()) +
                  " s; its process group was killed";
    } else if (r.term_signal != 0) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark crashed (" + r.describe_failure() + ")" + (last.empty() ? "" : ": " + last);
    } else if (r.exit_code == 4) {
        m.outcome = MeasureOutcome::WrongOutput;
        m.validation = "failed";
        m.error = "wrong output: " + m.validation_detail;
    } else if (r.exit_code == 3) {
        m.outcome = classify_pipeline_error(last);
        m.error = (last.empty() ? std::string("the pipeline failed") : last);
    } else if (r.exit_code != 0) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark failed (" + r.describe_failure() + ")" + (last.empty() ? "" : ": " + last);
    } else if (!result.is_object() || !result.contains("median_ms")) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark exited without writing " + result_path;
    } else if (m.validation == "not run" && !b.reference_dir.empty()) {
        m.outcome = MeasureOutcome::Crashed;
        m.error = "the benchmark did not check its output";
    } else {
        m.outcome = MeasureOutcome::Measured;
        m.min_ms = result.value("min_ms", 0.0);
        m.median_ms = result.value("median_ms", 0.0);
        m.max_ms = result.value("max_ms", 0.0);
        m.reps = result.value("reps", int64_t{0});
    }
    return m;
}

} // namespace detail

std::unique_ptr<Runner> make_runner(DeviceKind kind, const TimingOptions &timing) {
    return kind == DeviceKind::Cuda ? make_cuda_runner(timing) : make_opencl_runner(timing);
}

} // namespace gpusched
