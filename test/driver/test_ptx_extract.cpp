#include <algorithm>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/ptx_extract.h"
#include "tuner/generate/ptxas_report.h"

using namespace gpusched;

namespace {
GeneratorOutcome compile_tiny_stencil(const std::string &dir, const std::string &target,
                                      const std::string &schedule) {
    GeneratorInvocation inv;
    inv.generator_path = DRIVER_TEST_GENERATORS;
    inv.generator_name = "tiny_stencil";
    inv.output_dir = dir;
    inv.emit = {"static_library", "h"};
    inv.target = target;
    inv.params["schedule"] = schedule;
    return run_generator(inv);
}
} // namespace

TEST_CASE("every CUDA kernel of a compiled library is found in its PTX", "[ptx]") {
    test::TempDir dir;
    auto out = compile_tiny_stencil(dir.path(), "host-cuda-cuda_capability_86", "naive");
    REQUIRE(out.ok());
    auto modules = extract_ptx_modules_from_file(dir / "tiny_stencil.a");
    REQUIRE(modules.size() == 1);
    const auto &names = modules[0].kernel_names;
    REQUIRE(names.size() == 2);
    CHECK(std::any_of(names.begin(), names.end(),
                      [](auto &n) { return n.find("blur_x") != std::string::npos; }));
    CHECK(std::any_of(names.begin(), names.end(),
                      [](auto &n) { return n.find("output") != std::string::npos; }));
    CHECK(modules[0].text.find(".target sm_86") != std::string::npos);

    PtxasReport report = check_with_ptxas({modules[0].text}, "sm_90", dir.path());
    CHECK(report.status == PtxasStatus::Checked);
    CHECK(report.kernels.size() == 2);
    for (const auto &k : report.kernels)
        CHECK(k.registers > 0);
}

TEST_CASE("a CPU-only library contains no PTX", "[ptx]") {
    test::TempDir dir;
    auto out = compile_tiny_stencil(dir.path(), GPUSCHED_HOST_TARGET, "none");
    REQUIRE(out.ok());
    CHECK(extract_ptx_modules_from_file(dir / "tiny_stencil.a").empty());
}

TEST_CASE("an unreadable library is a clear error naming it", "[ptx]") {
    CHECK_THROWS_WITH(extract_ptx_modules_from_file("/nonexistent/lib.a"),
                      Catch::Contains("/nonexistent/lib.a"));
}
