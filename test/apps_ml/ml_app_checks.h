// Checks shared by the reduction-shaped app tests (test/apps_ml/<app>_test.cpp).
//
// float_sum_tolerance: how far a float32 sum of n terms may honestly be from the exact (double)
// sum, whatever order the schedule adds them in. The worst-case bound of recursive summation,
// (n-1) u sum |x_i| with u = 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd
// ed., sec. 4.2), is 0.3% of the sum at n = 50,000: loose enough to hide a whole missed row. The
// rounding errors of the n additions are independent and as often up as down, so the error
// behaves like a random walk of n steps of at most u sum |x_i| each; this allows 4 standard
// deviations of that walk, 4 sqrt(n) u sum |x_i| (a tenth of the worst case at n = 1600, a
// fiftieth at 40,000), and never more than the worst case. An honest reordering (a split across
// threads, a tree) is well inside it; a missed row or tile is far outside it (one small term
// missed is not, and no comparison of float sums could see it).
//
// ML_APP_PTX_TESTS(app): the naive and manual GPU schedules of the app compile for CUDA
// (host-cuda-cuda_capability_86, Halide 14's highest) and every PTX module assembles with ptxas
// for sm_90. A missing ptxas fails the test.
#pragma once

#include "app_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace apps_ml_test {

inline double float_sum_tolerance(int64_t n, double sum_of_magnitudes) {
    const double u = std::ldexp(1.0, -24);
    const double k = static_cast<double>(n > 1 ? n - 1 : 0);
    const double worst = k * u / (1.0 - k * u);
    return std::min(worst, 4.0 * std::sqrt(k) * u) * sum_of_magnitudes;
}

inline void check_ptx_assembles(const std::string &app, const std::string &schedule) {
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
        CHECK(modules[i].find(".entry") != std::string::npos);
        auto as = apps_test::run_process({apps_test::ptxas_path(), "-arch=sm_90", "-v", ptx, "-o",
                                          dir + "/" + app + "_" + std::to_string(i) + ".cubin"});
        INFO("ptxas output:\n" << as.output);
        REQUIRE(as.exit_code == 0);
    }
}

} // namespace apps_ml_test

#define ML_APP_PTX_TESTS(app)                                                                                \
    TEST_CASE(app ": naive GPU schedule compiles to PTX that ptxas accepts for sm_90", "[apps_ml][ptx]") {   \
        apps_ml_test::check_ptx_assembles(app, "naive");                                                     \
    }                                                                                                        \
    TEST_CASE(app ": manual GPU schedule compiles to PTX that ptxas accepts for sm_90", "[apps_ml][ptx]") {  \
        apps_ml_test::check_ptx_assembles(app, "manual");                                                    \
    }
