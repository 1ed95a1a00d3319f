// One Halide runtime per run (tuner/generate/shared_runtime.h): a sample compiled
// with no_runtime plus the shared runtime is still a complete library that
// links and runs on its own, and the runtime is built once, not per sample.
// Real generator (tiny_stencil), real ar, real link and run of the result.

#include <filesystem>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/generate/shared_runtime.h"
#include "tuner/host_target.h"
#include "tuner/measure/validation/pocl_validation.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

GeneratorInvocation tiny_stencil_for_cpu(const std::string &dir) {
    GeneratorInvocation inv;
    inv.generator_path = DRIVER_TEST_GENERATORS;
    inv.generator_name = "tiny_stencil";
    inv.output_dir = dir;
    inv.emit = {"static_library", "h", "registration"};
    inv.target = host_cpu_target();
    inv.timeout = std::chrono::minutes(5);
    return inv;
}

// The archive's member names (`ar t`).
std::string members(const std::string &archive) {
    ProcessSpec spec;
    spec.argv = {"ar", "t", archive};
    ProcessResult r = run_process(spec);
    INFO(r.err);
    REQUIRE(r.ok());
    return r.out;
}

} // namespace

TEST_CASE("a sample built with the shared runtime is a complete library and the runtime is built once",
          "[runner][shared_runtime]") {
    REQUIRE(find_executable("ar")); // binutils: without it the shortcut is not taken at all
    test::TempDir dir;
    const std::string cache = dir / "runtime";

    GeneratorOutcome a = run_generator_sharing_runtime(tiny_stencil_for_cpu(dir / "a"), cache);
    INFO(a.message);
    REQUIRE(a.ok());
    // The pipeline was compiled without a runtime and the shared one added.
    const std::string list = members(dir / "a/tiny_stencil.a");
    CHECK(list.find("gpusched_halide_runtime.o") != std::string::npos);
    const SharedRuntime runtime =
        shared_runtime(DRIVER_TEST_GENERATORS, host_cpu_target(), cache, std::chrono::minutes(5));
    REQUIRE(runtime.ok());
    CHECK(runtime.object.rfind(cache, 0) == 0);
    const auto built_at = fs::last_write_time(runtime.object);

    // A second sample reuses the runtime: the object is not written again.
    GeneratorOutcome b = run_generator_sharing_runtime(tiny_stencil_for_cpu(dir / "b"), cache);
    INFO(b.message);
    REQUIRE(b.ok());
    CHECK(fs::last_write_time(runtime.object) == built_at);
    CHECK(members(dir / "b/tiny_stencil.a").find("gpusched_halide_runtime.o") != std::string::npos);

    // Complete: it links with nothing but the validation runner and runs.
    const std::string archive = locate_output_runner_archive();
    REQUIRE_FALSE(archive.empty());
    ProcessSpec link;
    link.argv = {locate_cxx_compiler(),
                 "-o",
                 dir / "b/runner",
                 "-Wl,--whole-archive",
                 archive,
                 "-Wl,--no-whole-archive",
                 dir / "b/tiny_stencil.registration.cpp",
                 dir / "b/tiny_stencil.a",
                 "-ldl",
                 "-lpthread"};
    ProcessResult linked = run_process(link);
    INFO(linked.err);
    REQUIRE(linked.ok());
    ProcessSpec run;
    run.argv = {dir / "b/runner", dir / "b", "seed=1"};
    ProcessResult ran = run_process(run);
    INFO(ran.err);
    REQUIRE(ran.ok());
    CHECK(fs::file_size(dir / "b/output.raw") > 0);
}

TEST_CASE("without a static library to add it to, the generator runs as before with its own runtime",
          "[runner][shared_runtime]") {
    test::TempDir dir;
    GeneratorInvocation inv = tiny_stencil_for_cpu(dir / "h");
    inv.emit = {"h"};
    GeneratorOutcome o = run_generator_sharing_runtime(inv, dir / "runtime");
    INFO(o.message);
    REQUIRE(o.ok());
    CHECK(fs::exists(dir / "h/tiny_stencil.h"));
    // No runtime was built for it.
    CHECK_FALSE(fs::exists(dir / "runtime"));
}
