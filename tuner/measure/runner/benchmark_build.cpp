#include "tuner/measure/runner/benchmark_build.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "tuner/bundle_c_library.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/shared_runtime.h"
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

namespace {

// The harness linked with a runtime object, beside it: once per runtime
// and process (a harness whose file is gone is linked again).
struct HarnessEntry {
    std::mutex mutex;
    std::string path, failure;
    bool built = false;
};

std::string harness_for(const std::string &compiler, const std::string &archive,
                        const std::string &runtime_object, std::chrono::milliseconds timeout,
                        std::string &failure) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<HarnessEntry>> entries;
    std::shared_ptr<HarnessEntry> e;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto &slot = entries[archive + "\n" + runtime_object];
        if (!slot) slot = std::make_shared<HarnessEntry>();
        e = slot;
    }
    std::lock_guard<std::mutex> lock(e->mutex);
    std::error_code ec;
    if (!e->built || (e->failure.empty() && !fs::exists(e->path, ec))) {
        e->path = (fs::path(runtime_object).parent_path() / "benchmark-harness").string();
        ProcessSpec link;
        // -rdynamic: the samples' shared objects find the runtime here, so
        // the whole group shares one device context.
        link.argv = {compiler,
                     "-o",
                     e->path,
                     "-rdynamic",
                     "-Wl,--whole-archive",
                     archive,
                     "-Wl,--no-whole-archive",
                     runtime_object,
                     "-ldl",
                     "-lpthread"};
        for (auto &flag : bundle_c_library_link_flags())
            link.argv.push_back(std::move(flag));
        link.timeout = timeout;
        ProcessResult r = run_process(link);
        e->failure = r.ok() ? std::string()
                            : "linking the benchmark harness failed (" + r.describe_failure() +
                                  "): " + last_lines(r.err, 1);
        e->built = true;
    }
    failure = e->failure;
    return e->path;
}

} // namespace

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

    // The run's Halide runtime for this target, and the harness around it.
    const std::string cache =
        req.schedule.runtime_cache_dir.empty() ? req.work_dir + "/runtime" : req.schedule.runtime_cache_dir;
    const SharedRuntime runtime =
        shared_runtime(req.schedule.generator_path, req.target, cache, req.schedule.timeout);
    if (!runtime.ok()) return finish(runtime.failure);
    std::string harness_failure;
    const std::string harness =
        harness_for(compiler, archive, runtime.object, req.schedule.timeout, harness_failure);
    if (!harness_failure.empty()) return finish(harness_failure);

    // The sample's library: the batch's (cuda), or the schedule compiled for
    // the target without a runtime of its own (the harness has it).
    const std::string name = req.schedule.generator_name;
    std::string library;
    if (req.library_dir) {
        library = *req.library_dir + "/" + name + ".a";
    } else {
        GeneratorOutcome g =
            run_generator(scheduled_build(req.schedule, req.work_dir, req.target + "-no_runtime"));
        if (!g.ok()) return finish("building for " + req.target + " failed: " + g.message);
        library = req.work_dir + "/" + name + ".a";
    }
    ProcessSpec link;
    link.argv = {compiler,
                 "-shared",
                 "-o",
                 req.work_dir + "/" + name + ".so",
                 "-Wl,--whole-archive",
                 library,
                 "-Wl,--no-whole-archive"};
    link.timeout = req.schedule.timeout;
    ProcessResult r = run_process(link);
    if (!r.ok())
        return finish("linking the sample's shared object failed (" + r.describe_failure() +
                      "): " + last_lines(r.err, 1));

    out.binary.label = req.label;
    out.binary.executable = harness;
    out.binary.library = req.work_dir + "/" + name + ".so";
    out.binary.function_name = name;
    out.binary.work_dir = req.work_dir + "/run";
    out.binary.reference_dir = req.reference_dir;
    out.binary.target = req.target;
    out.binary.input_seed = req.schedule.input_seed;
    return finish({});
}

} // namespace gpusched
