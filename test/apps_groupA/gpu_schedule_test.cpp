// The naive and manual GPU schedules of every group-A app, checked without a GPU: the generator
// compiles each for CUDA (host-cuda-cuda_capability_86, Halide 14's highest), and every PTX
// module in the resulting static library must assemble with ptxas for sm_90 (which accepts the
// older .target). A schedule that Halide rejects, or that emits PTX ptxas refuses, fails here.
// ptxas's spill report is printed for information: spilling is a performance problem, not a
// correctness one. Also: asking for a GPU schedule on a CPU target must fail with a message
// that says so.
#include "app_test_util.h"

#include "test/catch2_compat.h"
#include "tuner/generate/generator_protocol.h"

#include <string>
#include <vector>

namespace {

const std::vector<std::string> kApps = {"bilateral_grid", "local_laplacian",    "nl_means",
                                        "lens_blur",      "camera_pipe",        "stencil_chain",
                                        "harris",         "histogram_equalize", "max_filter"};

void check_ptx_assembles(const std::string &app, const std::string &schedule) {
    const std::string dir = apps_test::scratch_dir(app + "_" + schedule + "_cuda");
    auto gen = apps_test::run_process({apps_test::generator_path(app), "-g", app, "-o", dir, "-e",
                                       "static_library,h", "target=host-cuda-cuda_capability_86",
                                       "schedule=" + schedule});
    INFO("generator output:\n" << gen.output);
    REQUIRE(gen.exit_code == 0);

    const auto modules = apps_test::extract_ptx(apps_test::read_file(dir + "/" + app + ".a"));
    REQUIRE(modules.size() >= 1);
    for (size_t i = 0; i < modules.size(); i++) {
        const std::string ptx = dir + "/" + app + "_" + std::to_string(i) + ".ptx";
        apps_test::write_file(ptx, modules[i]);
        // Halide 14 declares the kernels with .entry; at least one must be there.
        CHECK(modules[i].find(".entry") != std::string::npos);
        auto as = apps_test::run_process({apps_test::ptxas_path(), "-arch=sm_90", "-v", ptx, "-o",
                                          dir + "/" + app + "_" + std::to_string(i) + ".cubin"});
        INFO("ptxas output:\n" << as.output);
        REQUIRE(as.exit_code == 0);
        const bool spills = as.output.find("bytes spill stores") != std::string::npos &&
                            as.output.find(" 0 bytes spill stores") == std::string::npos;
        if (spills) WARN(app << " schedule=" << schedule << " spills registers:\n" << as.output);
    }
}

} // namespace

// One test case per app and schedule, so ctest can run them side by side.
#define GPU_SCHEDULE_PTX_TESTS(app)                                                                          \
    TEST_CASE(app ": naive GPU schedule compiles to PTX that ptxas accepts for sm_90",                       \
              "[apps_groupA][ptx]") {                                                                        \
        check_ptx_assembles(app, "naive");                                                                   \
    }                                                                                                        \
    TEST_CASE(app ": manual GPU schedule compiles to PTX that ptxas accepts for sm_90",                      \
              "[apps_groupA][ptx]") {                                                                        \
        check_ptx_assembles(app, "manual");                                                                  \
    }

GPU_SCHEDULE_PTX_TESTS("bilateral_grid")
GPU_SCHEDULE_PTX_TESTS("local_laplacian")
GPU_SCHEDULE_PTX_TESTS("nl_means")
GPU_SCHEDULE_PTX_TESTS("lens_blur")
GPU_SCHEDULE_PTX_TESTS("camera_pipe")
GPU_SCHEDULE_PTX_TESTS("stencil_chain")
GPU_SCHEDULE_PTX_TESTS("harris")
GPU_SCHEDULE_PTX_TESTS("histogram_equalize")
GPU_SCHEDULE_PTX_TESTS("max_filter")

TEST_CASE("GPU schedules are refused for a CPU target, naming the app and the target", "[apps_groupA]") {
    for (const auto &app : kApps) {
        DYNAMIC_SECTION(app) {
            const std::string dir = apps_test::scratch_dir(app + "_cpu_refused");
            auto gen = apps_test::run_process({apps_test::generator_path(app), "-g", app, "-o", dir, "-e",
                                               "h", "target=host", "schedule=manual"});
            CHECK(gen.exit_code != 0);
            CHECK(gen.output.find(app + ": schedule=manual is a GPU schedule") != std::string::npos);
            CHECK(gen.output.find("has no GPU feature") != std::string::npos);
        }
    }
}

TEST_CASE("a hand GPU schedule combined with an autoscheduler is refused and cpu_root is offered",
          "[apps_groupA]") {
    // bilateral_grid stands for the group: the check lives in the shared
    // benchmarks/apps/common/schedule_helpers.h.
    const std::string app = "bilateral_grid";
    const std::string dir = apps_test::scratch_dir(app + "_auto_and_manual");
    std::vector<std::string> argv = {apps_test::generator_path(app),
                                     "-g",
                                     app,
                                     "-o",
                                     dir,
                                     "-e",
                                     "h",
                                     "target=host-cuda",
                                     "schedule=manual",
                                     "-p",
                                     GPUSCHED_PLUGIN_PATH};
    for (const std::string &a : gpusched::autoscheduler_args("gpusched"))
        argv.push_back(a);
    auto both = apps_test::run_process(argv);
    CHECK(both.exit_code != 0);
    CHECK(both.output.find("cannot be combined with an autoscheduler") != std::string::npos);
    auto unknown = apps_test::run_process(
        {apps_test::generator_path(app), "-g", app, "-o", dir, "-e", "h", "target=host", "schedule=fastest"});
    CHECK(unknown.exit_code != 0);
    CHECK(unknown.output.find("expected none, cpu_root, naive or manual") != std::string::npos);
}
