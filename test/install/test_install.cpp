// gpusched installed with `cmake --install` into a temporary prefix, as a
// Halide user gets it (docs/install.md): the installed driver finds its
// plugin, runners and probe relative to itself wherever the prefix is, and a
// small out-of-tree CMake project (consumer/) builds with Halide 14's
// add_halide_library(... AUTOSCHEDULER gpusched::gpusched) against it. Every
// step is a real subprocess: cmake --install, cmake configure and build, the
// generators with the plugin, ptxas, POCL.

#include <cstdlib>
#include <filesystem>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "tuner/generate/ptx_extract.h"
#include "tuner/generate/ptxas_report.h"
#include "tuner/measure/validation/pocl_validation.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

ProcessResult run(std::vector<std::string> argv, std::chrono::minutes timeout,
                  std::map<std::string, std::string> env = {}) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = timeout;
    spec.env = std::move(env);
    return run_process(spec);
}

std::string describe(const ProcessResult &r) {
    return r.describe_failure() + "\nstdout:\n" + last_lines(r.out, 40) + "\nstderr:\n" +
           last_lines(r.err, 40);
}

// `cmake --install` of this build into prefix.
void install_into(const std::string &prefix) {
    ProcessResult r = run({GPUSCHED_TEST_CMAKE, "--install", GPUSCHED_TEST_BUILD_DIR, "--prefix", prefix},
                          std::chrono::minutes(3));
    INFO("cmake --install: " << describe(r));
    REQUIRE(r.ok());
}

// The value after "<label>: " on its own line of text.
std::string line_value(const std::string &text, const std::string &label) {
    const std::string key = "\n" + label + ": ";
    const auto at = ("\n" + text).find(key);
    if (at == std::string::npos) return {};
    const auto start = at + key.size() - 1;
    return text.substr(start, text.find('\n', start) - start);
}

} // namespace

TEST_CASE("an installed gpusched moved to another prefix finds its plugin, runners and probe beside itself",
          "[install]") {
    test::TempDir dir;
    install_into(dir / "first");
    fs::rename(dir / "first", dir / "moved");
    const std::string prefix = dir / "moved";
    const std::string pkglib = prefix + "/" GPUSCHED_TEST_PKGLIBDIR;
    const std::string gpusched = prefix + "/" GPUSCHED_TEST_BINDIR "/gpusched";

    ProcessResult version = run({gpusched, "--version"}, std::chrono::minutes(1));
    INFO(describe(version));
    REQUIRE(version.ok());
    CHECK(line_value(version.out, "plugin") == pkglib + "/libgpusched_autoscheduler.so");
    CHECK(line_value(version.out, "validation runner") == pkglib + "/libgpusched_output_runner.a");
    CHECK(line_value(version.out, "benchmark runner") == pkglib + "/libgpusched_benchmark_runner.a");
    CHECK(line_value(version.out, "OpenCL probe") == pkglib + "/gpusched-opencl-probe");

    // The installed demo generator, scheduled and validated on POCL by the
    // installed driver alone.
    REQUIRE(opencl_environment_problem(std::chrono::seconds(60)).empty());
    ProcessResult oneshot = run({gpusched, "oneshot", pkglib + "/demo/demo_sharpen.generator", "-g",
                                 "demo_sharpen", "--samples", "2", "--beam-size", "4", "--passes", "1", "-o",
                                 dir / "out", "--db", dir / "samples.sqlite", "--json"},
                                std::chrono::minutes(5));
    INFO(describe(oneshot));
    REQUIRE(oneshot.ok());
    const auto report = nlohmann::json::parse(oneshot.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    INFO(report.dump(2).substr(0, 4000));
    CHECK(report.dump().find("\"passed\"") != std::string::npos);
    CHECK(fs::exists(dir / "out/demo_sharpen.a"));
}

TEST_CASE("a Halide user's CMake project builds with AUTOSCHEDULER gpusched::gpusched against an installed "
          "gpusched",
          "[install]") {
    test::TempDir dir;
    const std::string prefix = dir / "prefix";
    const std::string build = dir / "consumer-build";
    install_into(prefix);

    std::vector<std::string> configure = {GPUSCHED_TEST_CMAKE,
                                          "-S",
                                          GPUSCHED_TEST_CONSUMER_DIR,
                                          "-B",
                                          build,
                                          "-G",
                                          GPUSCHED_TEST_CMAKE_GENERATOR,
                                          "-DCMAKE_BUILD_TYPE=Release",
                                          "-DCMAKE_PREFIX_PATH=" + prefix,
                                          "-DGPUSCHED_HOST_TARGET=" GPUSCHED_HOST_TARGET};
    if (std::string(GPUSCHED_TEST_CCACHE).size()) {
        configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" GPUSCHED_TEST_CCACHE);
    }
    ProcessResult configured = run(configure, std::chrono::minutes(3));
    INFO("configure: " << describe(configured));
    REQUIRE(configured.ok());
    ProcessResult built = run({GPUSCHED_TEST_CMAKE, "--build", build, "-j", "2"}, std::chrono::minutes(10));
    INFO("build: " << describe(built));
    REQUIRE(built.ok());

    // The CUDA library carries gpusched's schedule, with its defaults.
    const std::string schedule = test::read_file(build + "/blur.schedule.h");
    CHECK(schedule.find("automatically generated by gpusched") != std::string::npos);
    CHECK(schedule.find("gpu_blocks") != std::string::npos);

    // Its kernels are PTX that ptxas assembles (sm_86: the library's cuda_capability_86).
    const auto modules = extract_ptx_modules_from_file(build + "/libblur.a");
    REQUIRE_FALSE(modules.empty());
    std::vector<std::string> texts;
    for (const auto &m : modules)
        texts.push_back(m.text);
    REQUIRE(std::string(GPUSCHED_TEST_PTXAS).size() > 0); // a check that cannot run must not pass
    setenv("GPUSCHED_PTXAS", GPUSCHED_TEST_PTXAS, 1);
    fs::create_directories(dir / "ptxas");
    const PtxasReport ptxas = check_with_ptxas(texts, "sm_86", dir / "ptxas");
    INFO("ptxas: " << ptxas.detail);
    CHECK(ptxas.status == PtxasStatus::Checked);
    CHECK_FALSE(ptxas.kernels.empty());

    // The OpenCL twin was searched with gpusched_configure_generator's config
    // (its decision record says so) ...
    const auto record =
        nlohmann::json::parse(test::read_file(build + "/blur_opencl.gpusched.json"), nullptr, false);
    REQUIRE_FALSE(record.is_discarded());
    CHECK(record["config"]["beam_size"] == 4);
    CHECK(record["config"]["passes"] == 2);
    CHECK(record["config"]["gpu_profile"]["name"] == "a100");

    // ... and computes what Halide's CPU build of the same generator does, on POCL.
    const std::string opencl_problem = opencl_environment_problem(std::chrono::seconds(60));
    INFO(opencl_problem);
    REQUIRE(opencl_problem.empty());
    ProcessResult compared =
        run({build + "/blur_compare"}, std::chrono::minutes(3),
            {{"POCL_CACHE_DIR", dir / "pocl-cache"}, {"POCL_WORK_GROUP_METHOD", "loops"}});
    INFO("blur_compare: " << describe(compared));
    CHECK(compared.ok());
    CHECK(compared.out.find("agree") == 0);
}
