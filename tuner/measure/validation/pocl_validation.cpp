#include "tuner/measure/validation/pocl_validation.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#include "tuner/bundle_c_library.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/shared_runtime.h"
#include "tuner/host_target.h"
#include "tuner/install_layout.h"
#include "tuner/measure/validation/output_file.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;

const char *to_string(ValidationStatus s) {
    switch (s) {
    case ValidationStatus::Passed:
        return "passed";
    case ValidationStatus::Failed:
        return "failed";
    case ValidationStatus::NotRun:
        return "not run";
    }
    return "?";
}

std::string validation_cpu_target() {
    return host_target_with("strict_float");
}
std::string validation_opencl_target() {
    return host_target_with("opencl-strict_float");
}

std::string locate_build_artifact(const char *env_var, const char *file_name, const char *build_path) {
    if (const char *env = std::getenv(env_var); env && *env) return env;
    std::error_code ec;
    const fs::path self = running_executable_dir();
    for (const fs::path &c : {fs::path(installed_pkglib_dir()) / file_name, self / "../tuner" / file_name,
                              self / "../tuner/runner" / file_name}) {
        if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    }
    if (build_path && fs::exists(build_path, ec)) return build_path;
    return {};
}

std::string locate_cxx_compiler() {
    const char *cxx_env = std::getenv("CXX");
    auto compiler = find_executable(cxx_env && *cxx_env ? cxx_env : "c++");
    return compiler ? *compiler : std::string();
}

std::string locate_output_runner_archive() {
#ifdef GPUSCHED_BUILD_OUTPUT_RUNNER
    const char *built = GPUSCHED_BUILD_OUTPUT_RUNNER;
#else
    const char *built = nullptr;
#endif
    return locate_build_artifact("GPUSCHED_OUTPUT_RUNNER", "libgpusched_output_runner.a", built);
}

std::string locate_opencl_probe() {
#ifdef GPUSCHED_BUILD_OPENCL_PROBE
    const char *built = GPUSCHED_BUILD_OPENCL_PROBE;
#else
    const char *built = nullptr;
#endif
    return locate_build_artifact("GPUSCHED_OPENCL_PROBE", "gpusched-opencl-probe", built);
}

std::string opencl_environment_problem(std::chrono::seconds timeout) {
    const std::string probe = locate_opencl_probe();
    if (probe.empty()) return "the OpenCL probe (gpusched-opencl-probe) was not found";
    ProcessSpec spec;
    spec.argv = through_bundle_loader({probe});
    spec.timeout = timeout;
    ProcessResult r = run_process(spec);
    if (r.ok()) return {};
    std::string why = last_lines(r.err, 1);
    if (why.empty()) why = r.describe_failure();
    return "OpenCL cannot run a kernel on this machine (" + why +
           "); check POCL (pocl-opencl-icd), its ICD file and that /sys is mounted";
}

bool opencl_runtime_present() {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != nullptr;
}

namespace {

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
    spec.argv = {compiler,
                 "-o",
                 dir + "/runner",
                 "-Wl,--whole-archive",
                 archive,
                 "-Wl,--no-whole-archive",
                 dir + "/" + name + ".registration.cpp",
                 dir + "/" + name + ".a",
                 "-ldl",
                 "-lpthread"};
    for (auto &flag : bundle_c_library_link_flags())
        spec.argv.push_back(std::move(flag));
    spec.timeout = timeout;
    return run_process(spec);
}

ProcessResult run_runner(const std::string &dir, uint64_t seed, std::chrono::seconds timeout) {
    ProcessSpec spec;
    spec.argv = {dir + "/runner", dir, "seed=" + std::to_string(seed)};
    spec.timeout = timeout;
    // POCL caches compiled kernels under $HOME by default; keep it in the work dir.
    spec.env["POCL_CACHE_DIR"] = dir + "/pocl-cache";
    // Compiling the kernels is most of a POCL run. POCL 3.1's work-item
    // loops method (loops) compiled a random pipeline's kernels in half the
    // time of Debian's default (loopvec: 8.5 s against 4.2 s, same outputs);
    // a method set by the user is kept.
    const char *method = std::getenv("POCL_WORK_GROUP_METHOD");
    spec.env["POCL_WORK_GROUP_METHOD"] = method && *method ? method : "loops";
    return run_process(spec);
}

// The reference (a CPU build and its outputs) depends only on the pipeline
// and the inputs, not on the schedule under test, so the samples of one
// pipeline share it: building and running it was a third of a fuzz seed's
// validation time. Keyed by the generator file (path, size and time, so a
// rebuilt generator is not mistaken for the old one), its params and the
// input seed; a reference whose directory has since been removed is built
// again.
constexpr const char *kReferenceDone = "reference-done";

struct ReferenceEntry {
    std::mutex mutex; // held while the reference is built: others wait for it
    std::string dir;
    std::optional<std::string> failure; // set once built: empty on success, else why it failed
};

// The reduction splits (core/reduction_split.h) of the record a gpusched
// candidate replays, as JSON ("[]" for none or an unreadable record, which
// the candidate's own build then reports). A split sums in another order
// than the pipeline as written; its reference must split the same way.
std::string replayed_reduction_splits(const ValidationRequest &req) {
    if (!req.source.searches || req.replay_record.empty()) return "[]";
    try {
        std::ifstream in(req.replay_record);
        const nlohmann::json j = nlohmann::json::parse(in);
        if (j.contains("reduction_splits") && j["reduction_splits"].is_array() &&
            !j["reduction_splits"].empty())
            return j["reduction_splits"].dump();
    } catch (const std::exception &) {
    }
    return "[]";
}

std::string reference_key(const ValidationRequest &req) {
    std::error_code ec;
    std::string key =
        req.generator_path + "\n" + std::to_string(fs::file_size(req.generator_path, ec)) + "\n" +
        std::to_string(fs::last_write_time(req.generator_path, ec).time_since_epoch().count()) + "\n" +
        req.generator_name + "\n" + std::to_string(req.input_seed) + "\n" + replayed_reduction_splits(req);
    for (const auto &[k, v] : req.generator_params)
        key += "\n" + k + "=" + v;
    return key;
}

std::shared_ptr<ReferenceEntry> reference_entry(const std::string &key) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<ReferenceEntry>> entries;
    std::lock_guard<std::mutex> lock(mutex);
    auto &e = entries[key];
    if (!e) e = std::make_shared<ReferenceEntry>();
    return e;
}

// Builds the CPU reference into dir, links its runner and runs it; returns
// an empty string, or why there is no reference.
// What the reference and the candidate build share: the request's generator
// and params, built as a library for the runner, into dir, for target.
GeneratorInvocation validation_build(const ValidationRequest &req, const std::string &dir,
                                     const std::string &target) {
    GeneratorInvocation g;
    g.generator_path = req.generator_path;
    g.generator_name = req.generator_name;
    g.output_dir = dir;
    g.emit = {"static_library", "h", "registration"};
    g.target = target;
    g.params = req.generator_params;
    g.timeout = req.timeout;
    return g;
}

// A reference build's memory: a third of the machine's (two or three run at
// once with -j), and at least 4 GiB. Real suite apps need well under 2 GiB.
std::uint64_t reference_build_memory_limit() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const std::uint64_t physical = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page : 0;
    return std::max<std::uint64_t>(std::uint64_t{4} << 30, physical / 3);
}

// The second reference, in dir/reordered (output_file.h,
// kReorderedReferenceDir): the pipeline with every long float reduction
// summed in blocks. Where the pipeline has none (the plugin says so in its
// report and stops before compiling), or the build fails, there is no such
// folder and the serial reference is the only one; why is kept in
// dir/reordered.txt.
void build_reordered_reference(const ValidationRequest &req, const std::string &compiler,
                               const std::string &archive, const std::string &plugin,
                               const std::string &dir) {
    const std::string rdir = dir + "/" + kReorderedReferenceDir;
    const std::string report = dir + "/reordered-splits.json";
    auto skip = [&](const std::string &why) {
        std::error_code ec;
        fs::remove_all(rdir, ec);
        std::ofstream(dir + "/reordered.txt") << why << "\n";
    };
    GeneratorInvocation inv = validation_build(req, rdir, validation_cpu_target());
    inv.memory_limit_bytes = reference_build_memory_limit();
    inv.plugin_path = plugin;
    inv.autoscheduler = "gpusched_root_reordered";
    inv.env["GPUSCHED_REORDER_REPORT"] = report;
    std::error_code ec;
    fs::create_directories(rdir, ec);
    fs::remove(report, ec);
    const GeneratorOutcome out = run_generator(inv);
    std::string splits;
    std::getline(std::ifstream(report), splits);
    if (splits.rfind("[]", 0) == 0)
        return skip("no long float reduction (none whose summing order can matter at the tolerance): the "
                    "serial reference is the only one");
    if (!out.ok()) return skip("the reordered reference did not build: " + out.message);
    ProcessResult link = link_runner(compiler, archive, rdir, req.generator_name, req.timeout);
    if (!link.ok()) return skip("linking the reordered reference failed (" + link.describe_failure() + ")");
    ProcessResult run = run_runner(rdir, req.input_seed, req.timeout);
    if (!run.ok()) return skip("the reordered reference did not run (" + run.describe_failure() + ")");
    std::ofstream(dir + "/reordered.txt") << "float reductions summed in blocks: " << splits;
}

// A math library moves a few values across a discontinuity: at most one
// value in this many of an output (and at least one) may differ between the
// device's own build and the CPU's for the device reference to stand. One in
// a hundred, not a thousand (issue 57): Halide's bgu solves small
// least-squares systems, and POCL's arithmetic moves 0.44% of its outputs
// past the tolerance in every build alike, its own every-Func-at-root one
// included; a pipeline that computes something else on the device differs
// nearly everywhere (test_validation.cpp's planted one: every value).
constexpr std::size_t kMathLibraryOutlierDivisor = 100;

// The device reference, in dir: the pipeline on POCL with every Func at
// root (the plugin's root_only search at beam 1, no reduction splits): the
// device's own arithmetic under the simplest GPU schedule. Built only for a
// candidate the CPU references disagree with (validate_schedule_on_pocl).
// Returns why there is none, or empty.
std::string build_device_reference(const ValidationRequest &req, const std::string &compiler,
                                   const std::string &archive, const std::string &dir) {
    const std::string plugin = locate_gpusched_plugin();
    if (plugin.empty()) return "no gpusched plugin to schedule it";
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    nlohmann::json config = {
        {"beam_size", 1}, {"passes", 1}, {"seed", 0}, {"root_only", true}, {"split_reductions", false}};
    if (req.plugin_config.is_object() && req.plugin_config.contains("gpu_profile"))
        config["gpu_profile"] = req.plugin_config["gpu_profile"];
    const std::string config_path = dir + "/config.json";
    std::ofstream(config_path) << config.dump(2);
    GeneratorInvocation inv = validation_build(req, dir, validation_opencl_target());
    inv.plugin_path = plugin;
    inv.autoscheduler = "gpusched";
    inv.env["GPUSCHED_CONFIG"] = config_path;
    const GeneratorOutcome out = run_generator(inv);
    if (!out.ok()) return "it did not build: " + out.message;
    ProcessResult link = link_runner(compiler, archive, dir, req.generator_name, req.timeout);
    if (!link.ok()) return "linking it failed (" + link.describe_failure() + ")";
    ProcessResult run = run_runner(dir, req.input_seed, req.timeout);
    if (!run.ok()) return "it did not run on POCL (" + run.describe_failure() + ")";
    return {};
}

std::string build_and_run_reference(const ValidationRequest &req, const std::string &compiler,
                                    const std::string &archive, const std::string &dir) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    // Mullapudi2016 keeps deep pipelines fast. Where it cannot schedule one
    // (or runs out of memory trying), gpusched_root (every Func at root: the
    // plugin's core/root_reference_scheduler.cpp) gives the same outputs with
    // a compile that grows with the pipeline; unscheduled (all inline) is the
    // last resort. Each build is capped in memory, so a pipeline whose
    // lowering explodes fails that build instead of taking the machine.
    GeneratorInvocation ref = validation_build(req, dir, validation_cpu_target());
    ref.memory_limit_bytes = reference_build_memory_limit();
    struct Attempt {
        std::string label;
        std::optional<std::string> plugin, autoscheduler; // none: unscheduled
    };
    std::vector<Attempt> attempts;
    const std::string plugin = locate_gpusched_plugin();
    if (replayed_reduction_splits(req) != "[]") {
        // Only gpusched_root can split the reference's reductions as the
        // candidate does (core/root_reference_scheduler.cpp): it replays the
        // record's splits, then computes every Func at root.
        if (plugin.empty())
            return "the candidate splits reductions, and no gpusched plugin was found to split its reference";
        nlohmann::json config = {{"replay", req.replay_record}};
        const std::string config_path = dir + "/reference-config.json";
        std::ofstream(config_path) << config.dump(2);
        ref.env["GPUSCHED_CONFIG"] = config_path;
        attempts.push_back({"gpusched_root with the record's reduction splits", plugin, "gpusched_root"});
    } else {
        attempts.push_back(
            {"Mullapudi2016", halide_plugin_dir() + "/libautoschedule_mullapudi2016.so", "Mullapudi2016"});
        // Without the gpusched plugin (its own error comes elsewhere) there is no gpusched_root.
        if (!plugin.empty()) attempts.push_back({"gpusched_root", plugin, "gpusched_root"});
        attempts.push_back({"unscheduled", std::nullopt, std::nullopt});
    }
    GeneratorOutcome ref_out;
    std::string tried;
    for (const Attempt &a : attempts) {
        ref.plugin_path = a.plugin;
        ref.autoscheduler = a.autoscheduler;
        ref_out = run_generator(ref);
        if (ref_out.ok()) break;
        tried += (tried.empty() ? "" : "; ") + a.label + ": " + ref_out.message;
    }
    if (!ref_out.ok()) return "reference build failed (" + tried + ")";
    ProcessResult link = link_runner(compiler, archive, dir, req.generator_name, req.timeout);
    if (!link.ok())
        return "linking the runner failed (" + link.describe_failure() + "): " + last_lines(link.err, 1);
    ProcessResult run = run_runner(dir, req.input_seed, req.timeout);
    if (!run.ok())
        return "the reference build did not run (" + run.describe_failure() + "): " + last_lines(run.err, 1);
    // The serial reference is what the pipeline says; schedules that sum
    // its float reductions in other orders are also checked against one
    // that sums them in blocks (core/root_reference_scheduler.cpp). Not
    // needed where the reference already replays the candidate's splits.
    if (replayed_reduction_splits(req) == "[]" && !plugin.empty())
        build_reordered_reference(req, compiler, archive, plugin, dir);
    std::ofstream(fs::path(dir) / kReferenceDone) << "ok\n";
    return {};
}

} // namespace

GeneratorInvocation scheduled_build(const ValidationRequest &req, const std::string &dir,
                                    const std::string &target) {
    GeneratorInvocation cand = validation_build(req, dir, target);
    if (req.source.schedule_param) cand.params["schedule"] = *req.source.schedule_param;
    if (req.source.plugin_path) {
        cand.plugin_path = req.source.plugin_path;
        cand.autoscheduler = req.source.halide_name;
        cand.autoscheduler_options = req.source.options;
    }
    if (req.source.searches) {
        nlohmann::json config = req.plugin_config.is_object() ? req.plugin_config : nlohmann::json::object();
        config.erase("record_path");
        config["replay"] = req.replay_record;
        const std::string config_path = dir + "/config.json";
        std::error_code ec;
        fs::create_directories(dir, ec);
        std::ofstream(config_path) << config.dump(2);
        cand.env["GPUSCHED_CONFIG"] = config_path;
    }
    return cand;
}

GeneratorOutcome run_scheduled_build(const ValidationRequest &req, const std::string &dir,
                                     const std::string &target) {
    const GeneratorInvocation inv = scheduled_build(req, dir, target);
    return req.runtime_cache_dir.empty() ? run_generator(inv)
                                         : run_generator_sharing_runtime(inv, req.runtime_cache_dir);
}

ReferenceOutputs reference_outputs(const ValidationRequest &req) {
    ReferenceOutputs out;
    const std::string archive = locate_output_runner_archive();
    if (archive.empty()) {
        out.failure = "the validation runner (libgpusched_output_runner.a) was not found";
        return out;
    }
    const std::string compiler = locate_cxx_compiler();
    if (compiler.empty()) {
        out.failure = "no C++ compiler to link the validation runners";
        return out;
    }
    // Built and run once per pipeline and input seed in this process, in the
    // work dir of the first request that needs them.
    std::shared_ptr<ReferenceEntry> ref_entry = reference_entry(reference_key(req));
    std::lock_guard<std::mutex> lock(ref_entry->mutex);
    std::error_code ec;
    const bool built_and_kept =
        ref_entry->failure &&
        (!ref_entry->failure->empty() || fs::exists(fs::path(ref_entry->dir) / kReferenceDone, ec));
    if (!built_and_kept) {
        ref_entry->dir = req.work_dir + "/reference";
        ref_entry->failure = build_and_run_reference(req, compiler, archive, ref_entry->dir);
    }
    out.dir = ref_entry->dir;
    out.failure = *ref_entry->failure;
    return out;
}

ValidationReport validate_schedule_on_pocl(const ValidationRequest &req) {
    const auto t0 = std::chrono::steady_clock::now();
    auto finish = [&](ValidationReport r) {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return r;
    };
    if (!opencl_runtime_present())
        return finish(fail(ValidationStatus::NotRun,
                           "no OpenCL runtime (install pocl-opencl-icd and ocl-icd-libopencl1)"));
    // A runtime that cannot run even a trivial kernel would fail every
    // schedule alike: that is the environment's fault, not a verdict.
    if (std::string problem = opencl_environment_problem(std::min(req.timeout, std::chrono::seconds(120)));
        !problem.empty())
        return finish(fail(ValidationStatus::NotRun, problem));
    const std::string archive = locate_output_runner_archive();
    if (archive.empty())
        return finish(fail(ValidationStatus::NotRun,
                           "the validation runner (libgpusched_output_runner.a) was not found"));
    const std::string compiler = locate_cxx_compiler();
    if (compiler.empty())
        return finish(fail(ValidationStatus::NotRun, "no C++ compiler to link the validation runners"));

    const std::string cand_dir = req.work_dir + "/opencl";
    std::error_code ec;
    fs::remove_all(req.work_dir, ec);
    fs::create_directories(cand_dir, ec);

    const ReferenceOutputs ref = reference_outputs(req);
    if (!ref.ok()) return finish(fail(ValidationStatus::NotRun, ref.failure));

    // The candidate: the same schedule, for OpenCL.
    GeneratorOutcome cand_out = run_scheduled_build(req, cand_dir, validation_opencl_target());
    if (!cand_out.ok())
        return finish(fail(ValidationStatus::Failed, "OpenCL build failed: " + cand_out.message));

    ProcessResult link = link_runner(compiler, archive, cand_dir, req.generator_name, req.timeout);
    if (!link.ok())
        return finish(fail(ValidationStatus::NotRun, "linking the runner failed (" + link.describe_failure() +
                                                         "): " + last_lines(link.err, 1)));
    ProcessResult cand_run = run_runner(cand_dir, req.input_seed, req.timeout);
    if (!cand_run.ok())
        return finish(fail(ValidationStatus::Failed, "the OpenCL build did not run on POCL (" +
                                                         cand_run.describe_failure() +
                                                         "): " + last_lines(cand_run.err, 1)));

    ValidationReport against_cpu = compare_output_dirs(ref.dir, cand_dir);
    if (against_cpu.status != ValidationStatus::Failed) return finish(against_cpu);
    // The schedule, or the device's math library? strict_float pins the
    // rounding of both builds, but POCL's sin, exp, ... differ from the CPU's
    // in the last bits, and a discretization downstream (a histogram's bin)
    // turns that into a large change at a few points, for every schedule
    // alike (fuzz seed 2040). A candidate that agrees with the device's own
    // simplest build kept what the device computes.
    const std::string device_dir = req.work_dir + "/device-reference";
    if (const std::string none = build_device_reference(req, compiler, archive, device_dir); !none.empty()) {
        against_cpu.detail += " (no device reference: " + none + ")";
        return finish(against_cpu);
    }
    // The device's own build may differ from the CPU at a few points (a
    // last bit moved across a bin edge), not all over: a pipeline that
    // computes something else on the device (its definitions depend on the
    // target) is what validation is there to catch, and its device build
    // would agree with its candidates.
    const ValidationReport device_against_cpu = compare_output_dirs(ref.dir, device_dir);
    for (const auto &[name, c] : device_against_cpu.outputs) {
        if (!c.same_shape || c.nonfinite_mismatches > 0 ||
            c.mismatches > std::max<std::size_t>(1, c.elements / kMathLibraryOutlierDivisor)) {
            against_cpu.detail +=
                " (the device's own build differs from the CPU build too, in " + name + ": " + c.detail + ")";
            return finish(against_cpu);
        }
    }
    ValidationReport against_device = compare_output_dirs(device_dir, cand_dir);
    if (against_device.status != ValidationStatus::Passed) return finish(against_cpu);
    against_device.detail = std::string(kAgreesWithDeviceReference) +
                            " (every Func at root, on POCL), where the CPU reference differs (the math "
                            "library): " +
                            against_cpu.detail;
    return finish(against_device);
}

ValidationReport compare_output_dirs(const std::string &ref_dir, const std::string &cand_dir) {
    ValidationReport report;
    report.status = ValidationStatus::Passed;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(ref_dir, ec)) {
        if (entry.path().extension() != ".raw") continue;
        const std::string output = entry.path().stem().string();
        const OutputComparison c = compare_with_references(ref_dir, output, cand_dir + "/" + output + ".raw");
        if (!c.passed()) report.status = ValidationStatus::Failed;
        report.outputs.emplace_back(output, c);
    }
    std::sort(report.outputs.begin(), report.outputs.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    if (report.outputs.empty()) return fail(ValidationStatus::NotRun, "the reference wrote no outputs");
    for (const auto &[name, c] : report.outputs) {
        if (!report.detail.empty()) report.detail += "; ";
        report.detail += name + ": " + c.detail;
    }
    return report;
}

} // namespace gpusched
