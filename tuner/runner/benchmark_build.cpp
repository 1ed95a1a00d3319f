#include "tuner/runner/benchmark_build.h"

#include <chrono>
#include <filesystem>

#include "tuner/generator_run.h"
#include "tuner/host_target.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;

std::string locate_benchmark_runner_archive() {
#ifdef GPUSCHED_BUILD_BENCHMARK_RUNNER
    const char *built = GPUSCHED_BUILD_BENCHMARK_RUNNER;
#else
    const char *built = nullptr;
#endif
    return locate_build_artifact("GPUSCHED_BENCHMARK_RUNNER", "libgpusched_benchmark_runner.a", built);
}

std::string benchmark_target(DeviceKind kind, const std::string &cuda_target) {
    return kind == DeviceKind::Cuda ? cuda_target : host_target_with("opencl");
}

BenchmarkBuild build_benchmark(const BenchmarkBuildRequest &req) {
    const auto t0 = std::chrono::steady_clock::now();
    BenchmarkBuild out;
    auto finish = [&](std::string error) {
        out.ok = error.empty();
        out.error = std::move(error);
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
    };
    const std::string archive = locate_benchmark_runner_archive();
    if (archive.empty())
        return finish("the benchmark harness (libgpusched_benchmark_runner.a) was not found");
    const std::string compiler = locate_cxx_compiler();
    if (compiler.empty()) return finish("no C++ compiler to link the benchmark");

    std::error_code ec;
    fs::remove_all(req.work_dir, ec);
    fs::create_directories(req.work_dir, ec);
    std::string lib_dir = req.work_dir;
    if (req.library_dir) {
        lib_dir = *req.library_dir;
    } else {
        GeneratorOutcome g = run_scheduled_build(req.schedule, req.work_dir, req.target);
        if (!g.ok()) return finish("building for " + req.target + " failed: " + g.message);
    }
    const std::string name = req.schedule.generator_name;
    ProcessSpec link;
    link.argv = {compiler,
                 "-o",
                 req.work_dir + "/benchmark",
                 "-Wl,--whole-archive",
                 archive,
                 "-Wl,--no-whole-archive",
                 lib_dir + "/" + name + ".registration.cpp",
                 lib_dir + "/" + name + ".a",
                 "-ldl",
                 "-lpthread"};
    link.timeout = req.schedule.timeout;
    ProcessResult r = run_process(link);
    if (!r.ok())
        return finish("linking the benchmark failed (" + r.describe_failure() + "): " + last_lines(r.err, 1));

    out.binary.label = req.label;
    out.binary.executable = req.work_dir + "/benchmark";
    out.binary.work_dir = req.work_dir + "/run";
    out.binary.reference_dir = req.reference_dir;
    out.binary.target = req.target;
    out.binary.input_seed = req.schedule.input_seed;
    return finish({});
}

} // namespace gpusched
