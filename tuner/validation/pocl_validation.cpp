#include "tuner/validation/pocl_validation.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <dlfcn.h>

#include "tuner/generator_run.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;

const char *to_string(ValidationStatus s) {
    switch (s) {
    case ValidationStatus::Passed: return "passed";
    case ValidationStatus::Failed: return "failed";
    case ValidationStatus::NotRun: return "not run";
    }
    return "?";
}

std::string locate_output_runner_archive() {
    if (const char *env = std::getenv("GPUSCHED_OUTPUT_RUNNER"); env && *env) return env;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
    for (const fs::path &c : {self / "../tuner/libgpusched_output_runner.a",
                              self / "../lib/gpusched/libgpusched_output_runner.a"}) {
        if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    }
#ifdef GPUSCHED_BUILD_OUTPUT_RUNNER
    if (fs::exists(GPUSCHED_BUILD_OUTPUT_RUNNER, ec)) return GPUSCHED_BUILD_OUTPUT_RUNNER;
#endif
    return {};
}

namespace {

bool opencl_runtime_present() {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != nullptr;
}

ValidationReport fail(ValidationStatus status, std::string detail) {
    ValidationReport r;
    r.status = status;
    r.detail = std::move(detail);
    return r;
}

// Links the runner archive around a compiled pipeline.
ProcessResult link_runner(const std::string &compiler, const std::string &archive, const std::string &dir,
                          const std::string &name, std::chrono::seconds timeout) {
    ProcessSpec spec;
    spec.argv = {compiler, "-o", dir + "/runner", "-Wl,--whole-archive", archive, "-Wl,--no-whole-archive",
                 dir + "/" + name + ".registration.cpp", dir + "/" + name + ".a", "-ldl", "-lpthread"};
    spec.timeout = timeout;
    return run_process(spec);
}

ProcessResult run_runner(const std::string &dir, uint64_t seed, std::chrono::seconds timeout) {
    ProcessSpec spec;
    spec.argv = {dir + "/runner", dir, "seed=" + std::to_string(seed)};
    spec.timeout = timeout;
    // POCL caches compiled kernels under $HOME by default; keep it in the work dir.
    spec.env["POCL_CACHE_DIR"] = dir + "/pocl-cache";
    return run_process(spec);
}

} // namespace

ValidationReport validate_schedule_on_pocl(const ValidationRequest &req) {
    const auto t0 = std::chrono::steady_clock::now();
    auto finish = [&](ValidationReport r) {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return r;
    };
    if (!opencl_runtime_present())
        return finish(fail(ValidationStatus::NotRun, "no OpenCL runtime (install pocl-opencl-icd and ocl-icd-libopencl1)"));
    const std::string archive = locate_output_runner_archive();
    if (archive.empty())
        return finish(fail(ValidationStatus::NotRun, "the validation runner (libgpusched_output_runner.a) was not found"));
    const char *cxx_env = std::getenv("CXX");
    auto compiler = find_executable(cxx_env && *cxx_env ? cxx_env : "c++");
    if (!compiler) return finish(fail(ValidationStatus::NotRun, "no C++ compiler to link the validation runners"));

    const std::string ref_dir = req.work_dir + "/reference", cand_dir = req.work_dir + "/opencl";
    std::error_code ec;
    fs::remove_all(req.work_dir, ec);
    fs::create_directories(ref_dir, ec);
    fs::create_directories(cand_dir, ec);

    // The reference: a CPU build. Mullapudi2016 keeps deep pipelines fast;
    // if it cannot schedule this one, the unscheduled (all inline) build is
    // just as correct.
    GeneratorInvocation ref;
    ref.generator_path = req.generator_path;
    ref.generator_name = req.generator_name;
    ref.output_dir = ref_dir;
    ref.emit = {"static_library", "h", "registration"};
    ref.target = "host";
    ref.params = req.generator_params;
    ref.timeout = req.timeout;
    ref.plugin_path = std::string(GPUSCHED_HALIDE_PLUGIN_DIR) + "/libautoschedule_mullapudi2016.so";
    ref.autoscheduler = "Mullapudi2016";
    GeneratorOutcome ref_out = run_generator(ref);
    if (!ref_out.ok()) {
        ref.plugin_path.reset();
        ref.autoscheduler.reset();
        ref_out = run_generator(ref);
    }
    if (!ref_out.ok()) return finish(fail(ValidationStatus::NotRun, "reference build failed: " + ref_out.message));

    // The candidate: the same schedule, for OpenCL.
    GeneratorInvocation cand = ref;
    cand.output_dir = cand_dir;
    cand.target = "host-opencl";
    cand.plugin_path.reset();
    cand.autoscheduler.reset();
    if (req.source.schedule_param) cand.params["schedule"] = *req.source.schedule_param;
    if (req.source.plugin_path) {
        cand.plugin_path = req.source.plugin_path;
        cand.autoscheduler = req.source.halide_name;
    }
    if (req.source.searches) {
        nlohmann::json config = req.plugin_config.is_object() ? req.plugin_config : nlohmann::json::object();
        config.erase("record_path");
        config["replay"] = req.replay_record;
        const std::string config_path = cand_dir + "/config.json";
        std::ofstream(config_path) << config.dump(2);
        cand.env["GPUSCHED_CONFIG"] = config_path;
    }
    GeneratorOutcome cand_out = run_generator(cand);
    if (!cand_out.ok()) return finish(fail(ValidationStatus::Failed, "OpenCL build failed: " + cand_out.message));

    for (const auto *dir : {&ref_dir, &cand_dir}) {
        ProcessResult link = link_runner(*compiler, archive, *dir, req.generator_name, req.timeout);
        if (!link.ok())
            return finish(fail(ValidationStatus::NotRun, "linking the runner failed (" + link.describe_failure() +
                                                              "): " + last_lines(link.err, 1)));
    }
    ProcessResult ref_run = run_runner(ref_dir, req.input_seed, req.timeout);
    if (!ref_run.ok())
        return finish(fail(ValidationStatus::NotRun, "the reference build did not run (" + ref_run.describe_failure() +
                                                         "): " + last_lines(ref_run.err, 1)));
    ProcessResult cand_run = run_runner(cand_dir, req.input_seed, req.timeout);
    if (!cand_run.ok())
        return finish(fail(ValidationStatus::Failed, "the OpenCL build did not run on POCL (" +
                                                         cand_run.describe_failure() + "): " + last_lines(cand_run.err, 1)));

    ValidationReport report;
    report.status = ValidationStatus::Passed;
    for (const auto &entry : fs::directory_iterator(ref_dir)) {
        if (entry.path().extension() != ".raw") continue;
        const std::string output = entry.path().stem().string();
        OutputComparison c;
        try {
            c = compare_outputs(read_output_file(entry.path().string()),
                                read_output_file(cand_dir + "/" + output + ".raw"));
        } catch (const std::exception &e) {
            c.detail = e.what();
        }
        if (!c.passed()) report.status = ValidationStatus::Failed;
        report.outputs.emplace_back(output, c);
    }
    if (report.outputs.empty()) return finish(fail(ValidationStatus::NotRun, "the reference wrote no outputs"));
    for (const auto &[name, c] : report.outputs) {
        if (!report.detail.empty()) report.detail += "; ";
        report.detail += name + ": " + c.detail;
    }
    return finish(report);
}

} // namespace gpusched
