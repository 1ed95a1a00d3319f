// Validation where OpenCL itself cannot run: the environment is reported,
// once, as the reason nothing was validated; no schedule is blamed for it.
// POCL_DEVICES=bogus makes POCL 3 start with no device, as a root without
// /sys ("Not enough memory to run on this device") or a broken ICD does.

#include <cstdlib>
#include <filesystem>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/measure/validation/pocl_validation.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string> kPoclWithoutDevice = {{"POCL_DEVICES", "bogus"}};

} // namespace

TEST_CASE("the OpenCL probe runs a kernel on POCL here and names the failed step where POCL has no device",
          "[validation][environment]") {
    REQUIRE_FALSE(locate_opencl_probe().empty());
    CHECK(opencl_environment_problem(std::chrono::seconds(60)).empty());
    test::ScopedEnv broken(kPoclWithoutDevice);
    const std::string problem = opencl_environment_problem(std::chrono::seconds(60));
    CHECK(problem.find("OpenCL cannot run a kernel on this machine") != std::string::npos);
    CHECK(problem.find("device query") != std::string::npos);
}

TEST_CASE("validation with an OpenCL that cannot start is not run and gives no verdict on the schedule",
          "[validation][environment]") {
    test::TempDir dir;
    ValidationRequest r;
    r.generator_path = DRIVER_TEST_GENERATORS;
    r.generator_name = "wrong_on_gpu"; // would fail validation if it ran
    r.source = *find_schedule_source("naive");
    r.work_dir = dir / "validate";
    r.timeout = std::chrono::seconds(300);
    test::ScopedEnv broken(kPoclWithoutDevice);
    const ValidationReport report = validate_schedule_on_pocl(r);
    INFO(report.detail);
    CHECK(report.status == ValidationStatus::NotRun);
    CHECK(report.detail.find("OpenCL cannot run a kernel on this machine") != std::string::npos);
    CHECK(report.outputs.empty());
}

TEST_CASE("oneshot with an OpenCL that cannot start keeps the model's choice marked not validated",
          "[validation][environment][oneshot]") {
    test::TempDir dir;
    ProcessResult r = test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "tiny_stencil",
                                          "--samples", "3", "--beam-size", "2", "--passes", "1", "-o",
                                          dir / "out", "--db", dir / "db.sqlite", "--json"},
                                         kPoclWithoutDevice);
    INFO("stderr: " << r.err);
    REQUIRE(r.ok());
    // Said once, on stderr, not once per sample.
    std::size_t said = 0;
    for (std::size_t at = r.err.find("OpenCL cannot run a kernel"); at != std::string::npos;
         at = r.err.find("OpenCL cannot run a kernel", at + 1))
        ++said;
    CHECK(said == 1);
    CHECK(r.err.find("changed the pipeline's output") == std::string::npos);
    const auto j = nlohmann::json::parse(r.out);
    const auto &best = j["samples"][j["best_sample"].get<std::size_t>()];
    CHECK(best["validation"]["status"] == "not run");
    CHECK(best["validation"]["detail"].get<std::string>().find("OpenCL cannot run a kernel") !=
          std::string::npos);
    for (const auto &s : j["samples"])
        CHECK(s["validation"]["status"] != "failed");
    CHECK(fs::exists(dir / "out/tiny_stencil.schedule.h"));
}
