// The runner with real benchmark processes on POCL: a correct sample is
// measured, and a sample that crashes, hangs or computes the wrong output is
// recorded with what happened - never a time - while the next sample on the
// same device still measures. Builds go through the real build step
// (generator, linker) against a real CPU reference.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <dlfcn.h>

#include "test/catch2_compat.h"

#include "common/errors.h"
#include "test_support.h"
#include "tuner/cuda_device_query.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/batch.h"
#include "tuner/measure/runner/benchmark_build.h"
#include "tuner/measure/runner/cache_flush_size.h"
#include "tuner/measure/runner/runner.h"
#include "tuner/measure/validation/pocl_validation.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

TimingOptions quick_timing(int timeout_s = 60) {
    TimingOptions t;
    t.min_time_s = 0.01;
    t.min_reps = 3;
    t.max_reps = 50;
    t.timeout = std::chrono::seconds(timeout_s);
    return t;
}

ValidationRequest planted(const test::TempDir &dir, const std::string &fault) {
    ValidationRequest r;
    r.generator_path = RUNNER_TEST_GENERATORS;
    r.generator_name = "planted_fault";
    r.generator_params = {{"fault", fault}};
    r.source = *find_schedule_source("naive");
    r.work_dir = dir / ("work-" + fault);
    r.timeout = std::chrono::seconds(300);
    return r;
}

// The benchmark of planted_fault with this fault for the target (OpenCL
// unless named), built against the CPU reference (which is the same for
// every fault: the fault is GPU-only).
BenchmarkBinary build(const test::TempDir &dir, const std::string &fault, const std::string &copy = "",
                      const std::string &target = benchmark_target(DeviceKind::OpenCl, "")) {
    ValidationRequest req = planted(dir, fault);
    ReferenceOutputs ref = reference_outputs(req);
    INFO(ref.failure);
    REQUIRE(ref.ok());
    BenchmarkBuildRequest b;
    b.label = fault + copy;
    b.schedule = req;
    b.target = target;
    b.work_dir = dir / ("bench-" + fault + copy);
    b.reference_dir = ref.dir;
    BenchmarkBuild built = build_benchmark(b);
    INFO(built.error);
    REQUIRE(built.ok);
    return built.binary;
}

void check_measured(const Measurement &m) {
    INFO(m.error);
    REQUIRE(m.outcome == MeasureOutcome::Measured);
    CHECK(m.validation == "passed");
    REQUIRE(m.min_ms);
    REQUIRE(m.median_ms);
    CHECK(*m.min_ms > 0);
    CHECK(*m.min_ms <= *m.median_ms);
    CHECK(m.reps >= 3);
    CHECK(m.reps <= 50);
    CHECK(m.device.rfind("pocl-", 0) == 0);
    CHECK(m.device_kind == DeviceKind::OpenCl);
}

} // namespace

TEST_CASE("the opencl runner measures a correct sample after checking its output", "[runner]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing());
    Measurement m = runner->run(build(dir, "none"));
    check_measured(m);
    CHECK(m.validation_detail.find("2048 float32 values agree") != std::string::npos);
    // The first call (POCL's kernel compiler) is reported, not counted.
    CHECK(m.first_call_ms > 0);
    CHECK(m.timed_ms >= *m.min_ms * static_cast<double>(m.reps));
    CHECK(fs::exists(dir / "bench-none/run/benchmark.json"));
    CHECK(runner->device_name() == m.device);
}

TEST_CASE("a sample that crashes is recorded as crashed and the next sample still measures",
          "[runner][fault]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing());
    const BenchmarkBinary crash = build(dir, "crash"), good = build(dir, "none");
    Measurement bad = runner->run(crash);
    INFO(bad.error);
    CHECK(bad.outcome == MeasureOutcome::Crashed);
    CHECK(bad.error.find("signal") != std::string::npos);
    CHECK_FALSE(bad.median_ms);
    CHECK(bad.reps == 0);
    check_measured(runner->run(good));
}

TEST_CASE("a sample that hangs is killed at the timeout and the next sample still measures",
          "[runner][fault]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing(8));
    const BenchmarkBinary hang = build(dir, "hang"), good = build(dir, "none");
    Measurement bad = runner->run(hang);
    INFO(bad.error);
    CHECK(bad.outcome == MeasureOutcome::TimedOut);
    CHECK(bad.error.find("did not finish in 8 s") != std::string::npos);
    CHECK(bad.wall_seconds < 30);
    CHECK_FALSE(bad.median_ms);
    check_measured(runner->run(good));
}

TEST_CASE("a wrong output is a failed measurement with the difference and no time", "[runner][fault]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing());
    Measurement bad = runner->run(build(dir, "wrong"));
    INFO(bad.error);
    CHECK(bad.outcome == MeasureOutcome::WrongOutput);
    CHECK(bad.validation == "failed");
    CHECK(bad.validation_detail.find("2048 of 2048 values differ") != std::string::npos);
    CHECK(bad.error.find("wrong output") != std::string::npos);
    CHECK_FALSE(bad.min_ms);
    CHECK_FALSE(bad.median_ms);
}

namespace {
// The samples of the sample list a harness process was started with.
int listed_samples(const fs::path &list) {
    std::string text = test::read_file(list.string());
    return static_cast<int>(std::count(text.begin(), text.end(), '\0')) / 5; // five fields a sample
}
} // namespace

TEST_CASE("a group shares one harness process and a crash in it loses no other sample's result",
          "[runner][fault][group]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing());
    const std::vector<BenchmarkBinary> group = {build(dir, "none", "-a"), build(dir, "crash"),
                                                build(dir, "none", "-b"), build(dir, "wrong")};
    // One harness for the run, a shared object per sample.
    for (const BenchmarkBinary &b : group) {
        CHECK(b.executable == group.front().executable);
        CHECK(fs::exists(b.library));
    }
    const std::vector<Measurement> ms = runner->run_many(group);
    REQUIRE(ms.size() == 4);
    check_measured(ms[0]);
    INFO(ms[1].error);
    CHECK(ms[1].outcome == MeasureOutcome::Crashed);
    CHECK(ms[1].error.find("signal") != std::string::npos);
    CHECK_FALSE(ms[1].median_ms);
    check_measured(ms[2]);
    CHECK(ms[3].outcome == MeasureOutcome::WrongOutput);
    CHECK(ms[3].validation_detail.find("2048 of 2048 values differ") != std::string::npos);
    // The first process was given all four and ended on the crash; the
    // samples after it went to a second one.
    CHECK(listed_samples(fs::path(group[0].work_dir) / "group.list") == 4);
    CHECK(listed_samples(fs::path(group[2].work_dir) / "group.list") == 2);
    CHECK_FALSE(fs::exists(fs::path(group[1].work_dir) / "group.list"));
    // Labels stay with their samples.
    for (std::size_t i = 0; i < group.size(); ++i)
        CHECK(ms[i].label == group[i].label);
}

TEST_CASE("a sample that hangs in a group is stopped at its timeout and the samples after it measure",
          "[runner][fault][group]") {
    test::TempDir dir;
    auto runner = make_opencl_runner(quick_timing(8));
    const std::vector<BenchmarkBinary> group = {build(dir, "none", "-a"), build(dir, "hang"),
                                                build(dir, "none", "-b")};
    // Each measurement reaches the caller as soon as it is known: the first
    // one while the hanging sample still runs, long before the group ends.
    std::vector<std::size_t> order;
    std::vector<std::chrono::steady_clock::time_point> when;
    const std::vector<Measurement> ms = runner->run_many(group, [&](std::size_t i, const Measurement &m) {
        order.push_back(i);
        when.push_back(std::chrono::steady_clock::now());
        CHECK(m.device.rfind("pocl-", 0) == 0);
    });
    const auto ended = std::chrono::steady_clock::now();
    CHECK(order == std::vector<std::size_t>{0, 1, 2});
    REQUIRE(when.size() == 3);
    CHECK(ended - when[0] > std::chrono::seconds(6));
    REQUIRE(ms.size() == 3);
    check_measured(ms[0]);
    INFO(ms[1].error);
    CHECK(ms[1].outcome == MeasureOutcome::TimedOut);
    CHECK(ms[1].error.find("did not finish in 8 s") != std::string::npos);
    CHECK(ms[1].wall_seconds < 30);
    check_measured(ms[2]);
}

TEST_CASE("the cuda runner refuses in one line naming --device opencl when no GPU is visible",
          "[runner][cuda]") {
    if (!query_local_gpus().devices.empty()) {
        // With a GPU it must come up with one slot per GPU instead.
        auto runner = make_cuda_runner(quick_timing());
        CHECK(runner->slots() == static_cast<int>(query_local_gpus().devices.size()));
        return;
    }
    try {
        make_cuda_runner(quick_timing());
        FAIL("make_cuda_runner succeeded without a GPU");
    } catch (const UnavailableError &e) {
        const std::string what = e.what();
        CHECK(what.find("--device opencl") != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
    }
}

// The cuda device's build step (the sample compiled for host-cuda, the
// harness linked with the CUDA runtime) runs on any machine: a GPU session
// must not be the first to find a build or link error in it. Where no GPU
// is visible the harness must still start, load the sample and fail as a
// device error that names CUDA, never crash or hang.
TEST_CASE("a CUDA benchmark builds without a GPU and runs as a measurement with a GPU or as a device error "
          "naming CUDA without one",
          "[runner][cuda]") {
    test::TempDir dir;
    const std::string cuda = default_cuda_target(*find_builtin_gpu_profile("h100"));
    const BenchmarkBinary binary = build(dir, "none", "-cuda", benchmark_target(DeviceKind::Cuda, cuda));
    CHECK(binary.target.find("-cuda-cuda_capability_86") != std::string::npos);

    const LocalGpuQuery gpus = query_local_gpus();
    const int64_t l2 = gpus.devices.empty() ? 0 : gpus.devices.front().l2_cache_bytes;
    const Measurement m = detail::run_benchmark_process(binary, resolve_flush_bytes(quick_timing(), l2),
                                                        {{"CUDA_VISIBLE_DEVICES", "0"}});
    INFO(to_string(m.outcome) << ": " << m.error);
    if (!gpus.devices.empty()) {
        CHECK(m.outcome == MeasureOutcome::Measured);
        CHECK(m.validation == "passed");
        // Timed on the GPU's clock, after a flush of twice its L2.
        CHECK(m.timer == "cuda-events");
        CHECK(l2 > 0);
        CHECK(m.flush_bytes == 2 * l2);
        // The SM clock and temperature wherever NVML is there to read them.
        if (void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
            dlclose(nvml);
            REQUIRE(m.sm_clock_mhz);
            CHECK(*m.sm_clock_mhz > 0);
            REQUIRE(m.temperature_c);
            CHECK(*m.temperature_c > 0);
        }
        // Asked for the host's clock (tune --host-clock), the same harness reads it.
        TimingOptions host = resolve_flush_bytes(quick_timing(), l2);
        host.host_clock = true;
        const Measurement on_host =
            detail::run_benchmark_process(binary, host, {{"CUDA_VISIBLE_DEVICES", "0"}});
        CHECK(on_host.outcome == MeasureOutcome::Measured);
        CHECK(on_host.timer == "host-clock");
        return;
    }
    CHECK(m.outcome == MeasureOutcome::DeviceError);
    CHECK(m.error.find("CUDA") != std::string::npos);
    CHECK(m.error.find('\n') == std::string::npos);
    CHECK_FALSE(m.min_ms);
}

TEST_CASE("a pipeline error is classified by the device error it names", "[runner]") {
    CHECK(detail::classify_pipeline_error(
              "halide_error: CUDA error: CUDA_ERROR_OUT_OF_MEMORY cuMemAlloc failed") ==
          MeasureOutcome::OutOfMemory);
    CHECK(detail::classify_pipeline_error(
              "halide_error: CL: clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE") ==
          MeasureOutcome::OutOfMemory);
    CHECK(detail::classify_pipeline_error("halide_error: CUDA error: CUDA_ERROR_ILLEGAL_ADDRESS") ==
          MeasureOutcome::DeviceError);
    CHECK(detail::classify_pipeline_error("halide_error: Input buffer input is accessed at -1") ==
          MeasureOutcome::Crashed);
}

TEST_CASE("a measurement and a timing read back from their JSON are the ones written", "[runner]") {
    // What a Slurm worker writes to its result file and the driver reads back.
    Measurement m;
    m.label = "sample 3";
    m.target = "host-cuda-cuda_capability_86";
    m.device_kind = DeviceKind::Cuda;
    m.device = "NVIDIA H100 80GB HBM3";
    m.gpu_index = 1;
    m.outcome = MeasureOutcome::WrongOutput;
    m.error = "output_0: 3 of 100 values differ";
    m.min_ms = 1.25;
    m.median_ms = 1.5;
    m.reps = 17;
    m.validation = "failed";
    m.first_call_ms = 40;
    m.wall_seconds = 2.5;
    m.median_ci95_low_ms = 1.4;
    m.median_ci95_high_ms = 1.6;
    m.precision_met = true;
    m.timer = "cuda-events";
    m.flush_bytes = 100 << 20;
    m.sm_clock_mhz = 1980;
    m.temperature_c = 61;
    const Measurement back = Measurement::from_json(nlohmann::json::parse(m.to_json().dump()));
    CHECK(back.to_json() == m.to_json());
    CHECK(back.outcome == MeasureOutcome::WrongOutput);
    CHECK(back.gpu_index == 1);
    CHECK_FALSE(back.max_ms);
    // How the times were taken and how good they are survive a Slurm
    // worker's result file.
    CHECK(back.median_ci95_high_ms == 1.6);
    CHECK(back.precision_met);
    CHECK(back.timer == "cuda-events");
    CHECK(back.flush_bytes == (100 << 20));
    CHECK(back.sm_clock_mhz == 1980);
    CHECK(back.temperature_c == 61);

    TimingOptions t;
    t.min_time_s = 0.25;
    t.min_reps = 5;
    t.max_reps = 50;
    t.warmup = 2;
    t.timeout = std::chrono::seconds(7);
    const TimingOptions tb = timing_from_json(nlohmann::json::parse(to_json(t).dump()));
    CHECK(to_json(tb) == to_json(t));
    CHECK_FALSE(tb.flush_bytes); // the device's rule, kept as such
    t.flush_bytes = 0;
    CHECK(timing_from_json(nlohmann::json::parse(to_json(t).dump())).flush_bytes == 0);
    // A run configured before the flush existed timed without one, and a
    // resume keeps timing it so.
    nlohmann::json old = to_json(t);
    old.erase("flush_bytes");
    CHECK(timing_from_json(old).flush_bytes == 0);
    // The clock asked for survives too; a run configured before the choice
    // read events where it could.
    t.host_clock = true;
    CHECK(timing_from_json(nlohmann::json::parse(to_json(t).dump())).host_clock);
    old.erase("host_clock");
    CHECK_FALSE(timing_from_json(old).host_clock);
}

TEST_CASE("the cache flush writes twice the last-level cache, 64 MiB where its size is unknown",
          "[runner][timing]") {
    CHECK(flush_bytes_for_cache(int64_t{50} << 20) == int64_t{100} << 20); // an H100's L2
    CHECK(flush_bytes_for_cache(int64_t{32} << 20) == int64_t{64} << 20);
    CHECK(flush_bytes_for_cache(0) == int64_t{64} << 20);
    CHECK(flush_bytes_for_cache(-1) == int64_t{64} << 20);
    CHECK(kFallbackFlushBytes == int64_t{64} << 20);

    // A runner fills in the rule where the run left it to the device, and
    // keeps what the run set (0: no flush).
    TimingOptions t;
    CHECK(resolve_flush_bytes(t, int64_t{40} << 20).flush_bytes == int64_t{80} << 20);
    CHECK(resolve_flush_bytes(t, 0).flush_bytes == kFallbackFlushBytes);
    t.flush_bytes = 0;
    CHECK(resolve_flush_bytes(t, int64_t{40} << 20).flush_bytes == 0);
    t.flush_bytes = 12345;
    CHECK(resolve_flush_bytes(t, int64_t{40} << 20).flush_bytes == 12345);
}

TEST_CASE("the host's last-level cache is the highest data or unified cache cpu0's sysfs folder lists",
          "[runner][timing]") {
    test::TempDir dir;
    auto cache = [&](const std::string &index, const std::string &level, const std::string &type,
                     const std::string &size) {
        const fs::path folder = fs::path(dir / "cache") / index;
        fs::create_directories(folder);
        std::ofstream(folder / "level") << level << "\n";
        std::ofstream(folder / "type") << type << "\n";
        std::ofstream(folder / "size") << size << "\n";
    };
    CHECK(last_level_cache_from_sysfs(dir / "cache") == 0); // none listed
    cache("index0", "1", "Data", "32K");
    cache("index1", "1", "Instruction", "32K");
    CHECK(last_level_cache_from_sysfs(dir / "cache") == 32 << 10);
    cache("index2", "2", "Unified", "512K");
    cache("index3", "3", "Unified", "32768K");
    cache("index4", "4", "Instruction", "64M"); // an instruction cache is never the one
    CHECK(last_level_cache_from_sysfs(dir / "cache") == int64_t{32} << 20);
    cache("index5", "5", "Unified", "garbage");
    CHECK(last_level_cache_from_sysfs(dir / "cache") == int64_t{32} << 20);
    CHECK(last_level_cache_from_sysfs(dir / "missing") == 0);
}

TEST_CASE("a POCL benchmark says it used the host clock and flushed the bytes the driver asked for",
          "[runner][timing]") {
    test::TempDir dir;
    const BenchmarkBinary good = build(dir, "none");
    auto harness_result = [&] {
        std::ifstream f(good.work_dir + "/benchmark.json");
        return nlohmann::json::parse(
            std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()));
    };

    // The runner's default: twice this CPU's last-level cache.
    Measurement m = make_opencl_runner(quick_timing())->run(good);
    check_measured(m);
    CHECK(m.timer == "host-clock");
    CHECK(m.flush_bytes == flush_bytes_for_cache(host_last_level_cache_bytes()));
    nlohmann::json j = harness_result();
    CHECK(j["timer"] == "host-clock");
    CHECK(j["flush_bytes"].get<int64_t>() == flush_bytes_for_cache(host_last_level_cache_bytes()));
    // No GPU, no clock or temperature.
    CHECK_FALSE(j.contains("sm_clock_mhz"));
    CHECK_FALSE(j.contains("temperature_c"));
    CHECK_FALSE(m.sm_clock_mhz);
    CHECK_FALSE(m.temperature_c);

    // What the run sets is what the harness writes: an odd size, and 0 (off).
    TimingOptions t = quick_timing();
    t.flush_bytes = 3 * 1000 * 1000 + 7;
    m = make_opencl_runner(t)->run(good);
    check_measured(m);
    CHECK(m.flush_bytes == 3 * 1000 * 1000 + 7);
    CHECK(harness_result()["flush_bytes"].get<int64_t>() == 3 * 1000 * 1000 + 7);
    t.flush_bytes = 0;
    m = make_opencl_runner(t)->run(good);
    check_measured(m);
    CHECK(m.flush_bytes == 0);
    CHECK(m.timer == "host-clock");
    CHECK(harness_result()["flush_bytes"].get<int64_t>() == 0);
    // The host's clock asked for: what POCL reads anyway.
    t.host_clock = true;
    m = make_opencl_runner(t)->run(good);
    check_measured(m);
    CHECK(m.timer == "host-clock");
}

TEST_CASE("the benchmark harness refuses a clock other than auto or host-clock with its usage line",
          "[runner][timing][bad-input]") {
    test::TempDir dir;
    const BenchmarkBinary good = build(dir, "none");
    ProcessSpec spec;
    spec.argv = {good.executable, "--list", dir / "list", "--timer", "sundial"};
    const ProcessResult r = run_process(spec);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("[--timer auto|host-clock]") != std::string::npos);
}

TEST_CASE("the database keeps a sample's search record without its per-step counts", "[runner][db]") {
    OneShotSample s;
    s.record = nlohmann::json::parse(R"({"predicted_cost": 1.5,
        "statistics": {"states_costed": 7, "steps": [{"pass": 0, "step": 0, "costed": 7}]}})");
    const db::SampleRow row = to_sample_row(s, nlohmann::json::object());
    const nlohmann::json stored = nlohmann::json::parse(row.decisions);
    CHECK(stored["predicted_cost"].get<double>() == 1.5);
    CHECK(stored["statistics"]["states_costed"].get<int64_t>() == 7);
    CHECK_FALSE(stored["statistics"].contains("steps"));
    CHECK(s.record["statistics"].contains("steps")); // the sample's own record is untouched
}
