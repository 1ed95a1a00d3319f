// POCL validation of the group B GPU schedules: the OpenCL build of an app
// with schedule=naive or schedule=manual runs on POCL in its own process
// (pocl_runner.cpp); its output must match the CPU build of the same app on
// the same inputs (pocl_cases.h). Blocks, threads, shared-memory staging and
// register accumulators all execute for real on POCL, so a schedule that
// changes the values (a race, a wrong bound, a bad staging footprint) fails
// here. Which app/schedule pairs are built is set in CMakeLists.txt.
#include "appsB_bgu_cpu.h"
#include "appsB_conv_layer_cpu.h"
#include "appsB_depthwise_separable_conv_cpu.h"
#include "appsB_iir_blur_cpu.h"
#include "appsB_interpolate_cpu.h"
#include "appsB_learned_demosaic_cpu.h"
#include "appsB_sgemm_cpu.h"
#include "appsB_unsharp_mask_cpu.h"
#include "pocl_cases.h"
#include "subprocess_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using Halide::Runtime::Buffer;

// Runs the runner for app/schedule and compares with the CPU output `ref`.
// `tolerance` is relative to max(1, |ref|): the GPU code may contract
// multiply-adds differently.
void compare_with_runner(const std::string &app, const std::string &schedule, Buffer<float> &ref,
                         double tolerance) {
    const fs::path runner = fs::path(APPS_B_POCL_RUNNER_DIR) / ("appsB_pocl_" + app + "_" + schedule);
    REQUIRE(fs::exists(runner));
    const fs::path dir = fs::temp_directory_path() /
                         ("gpusched_appsB_pocl_" + app + "_" + schedule + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path out_file = dir / "output.raw";
    appsB::ProcessResult run =
        appsB::run_process({runner.string(), out_file.string()}, dir / "runner.log", 300);
    INFO(app << " schedule=" << schedule << " on POCL, runner output:\n" << run.output);
    REQUIRE_FALSE(run.timed_out);
    REQUIRE(run.exit_code == 0);

    const std::string bytes = appsB::read_file(out_file);
    REQUIRE(bytes.size() == ref.number_of_elements() * sizeof(float));
    const float *gpu = reinterpret_cast<const float *>(bytes.data());
    const float *cpu = ref.data();
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < ref.number_of_elements(); i++) {
        const double err = std::abs((double)gpu[i] - cpu[i]) / std::max(1.0, (double)std::abs(cpu[i]));
        if (!(err <= worst)) { // also catches NaN
            worst = std::isnan(err) ? INFINITY : err;
            worst_at = i;
        }
    }
    INFO("worst relative error " << worst << " at element " << worst_at << ": POCL " << gpu[worst_at]
                                 << ", CPU " << cpu[worst_at]);
    CHECK(worst <= tolerance);
    fs::remove_all(dir);
}

} // namespace

// One test case per app and schedule that CMakeLists.txt builds a runner for
// (APPS_B_POCL_<app>_<schedule> is defined for each).
#define APPS_B_POCL_TEST(app, schedule, tolerance)                                                           \
    TEST_CASE(#app " " #schedule " schedule on POCL matches the CPU build",                                  \
              "[apps_groupB][pocl][" #app "]") {                                                             \
        Buffer<float> ref;                                                                                   \
        REQUIRE(appsB::pocl::run_##app(appsB_##app##_cpu, ref) == 0);                                        \
        compare_with_runner(#app, #schedule, ref, tolerance);                                                \
    }

#ifdef APPS_B_POCL_unsharp_mask_manual
APPS_B_POCL_TEST(unsharp_mask, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_unsharp_mask_naive
APPS_B_POCL_TEST(unsharp_mask, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_interpolate_manual
APPS_B_POCL_TEST(interpolate, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_interpolate_naive
APPS_B_POCL_TEST(interpolate, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_conv_layer_manual
APPS_B_POCL_TEST(conv_layer, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_conv_layer_naive
APPS_B_POCL_TEST(conv_layer, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_sgemm_manual
APPS_B_POCL_TEST(sgemm, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_sgemm_naive
APPS_B_POCL_TEST(sgemm, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_iir_blur_manual
APPS_B_POCL_TEST(iir_blur, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_iir_blur_naive
APPS_B_POCL_TEST(iir_blur, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_bgu_manual
APPS_B_POCL_TEST(bgu, manual, 1e-3)
#endif
#ifdef APPS_B_POCL_bgu_naive
APPS_B_POCL_TEST(bgu, naive, 1e-3)
#endif
#ifdef APPS_B_POCL_depthwise_separable_conv_manual
APPS_B_POCL_TEST(depthwise_separable_conv, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_depthwise_separable_conv_naive
APPS_B_POCL_TEST(depthwise_separable_conv, naive, 1e-5)
#endif
#ifdef APPS_B_POCL_learned_demosaic_manual
APPS_B_POCL_TEST(learned_demosaic, manual, 1e-5)
#endif
#ifdef APPS_B_POCL_learned_demosaic_naive
APPS_B_POCL_TEST(learned_demosaic, naive, 1e-5)
#endif
