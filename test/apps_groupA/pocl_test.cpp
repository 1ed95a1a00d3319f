// The naive and manual GPU schedules compute what the CPU build computes: an OpenCL build of
// each runs on POCL (the CPU OpenCL implementation) in a separate runner process, so blocks,
// threads, shared-memory staging, atomics and rfactor execute for real, and its output is
// compared with the CPU (cpu_root) build on the same inputs. Done for the apps listed in
// GPUSCHED_APPS_POCL; the rest are checked by ptxas only.
#include "app_test_util.h"
#include "pocl_inputs.h"

#include "bilateral_grid_cpu.h"
#include "harris_cpu.h"
#include "histogram_equalize_cpu.h"
#include "max_filter_cpu.h"
#include "stencil_chain_cpu.h"

#include "test/catch2_compat.h"

#include <cmath>
#include <cstring>
#include <string>

namespace {

std::string run_runner(const std::string &app, const std::string &schedule) {
    const std::string runner =
        std::string(GPUSCHED_APPS_POCL_RUNNER_DIR) + "/apps_groupA_pocl_" + app + "_" + schedule;
    const std::string out = apps_test::scratch_dir(app + "_" + schedule + "_pocl") + "/out.bin";
    auto r = apps_test::run_process({runner, out});
    INFO("runner output:\n" << r.output);
    REQUIRE(r.exit_code == 0);
    return apps_test::read_file(out);
}

template <typename T>
void compare(const std::string &bytes, const Halide::Runtime::Buffer<T> &expected, double tolerance) {
    REQUIRE(bytes.size() == expected.size_in_bytes());
    const T *got = reinterpret_cast<const T *>(bytes.data());
    double max_err = 0;
    size_t not_finite = 0;
    for (size_t i = 0; i < expected.number_of_elements(); i++) {
        const double err = std::abs((double)got[i] - (double)expected.data()[i]);
        if (!std::isfinite(err))
            not_finite++;
        else
            max_err = std::max(max_err, err);
    }
    CHECK(not_finite == 0); // a NaN would otherwise slip through the max
    CHECK(max_err <= tolerance);
}

} // namespace

using namespace apps_test;

#define POCL_TEST(app, body)                                                                                 \
    TEST_CASE(app ": naive and manual GPU schedules match the CPU build on POCL", "[apps_groupA][pocl]") {   \
        body;                                                                                                \
        for (const char *schedule : {"naive", "manual"}) {                                                   \
            DYNAMIC_SECTION(schedule) {                                                                      \
                compare(run_runner(app, schedule), expected, tolerance);                                     \
            }                                                                                                \
        }                                                                                                    \
    }

POCL_TEST("stencil_chain", auto in = pocl_float_input(0, 21);
          Halide::Runtime::Buffer<float> expected(kPoclW, kPoclH);
          REQUIRE(stencil_chain_cpu(in, expected) == 0); const double tolerance = 1e-5)
POCL_TEST("bilateral_grid", auto in = pocl_float_input(0, 21);
          Halide::Runtime::Buffer<float> expected(kPoclW, kPoclH);
          REQUIRE(bilateral_grid_cpu(in, expected) == 0); const double tolerance = 1e-4)
POCL_TEST("harris", auto in = pocl_float_input(3, 22);
          Halide::Runtime::Buffer<float> expected(kPoclW, kPoclH); REQUIRE(harris_cpu(in, expected) == 0);
          const double tolerance = 1e-6)
POCL_TEST("max_filter", auto in = pocl_float_input(3, 23);
          Halide::Runtime::Buffer<float> expected(kPoclW, kPoclH, 3);
          REQUIRE(max_filter_cpu(in, expected) == 0); const double tolerance = 0)
POCL_TEST("histogram_equalize", auto in = pocl_u8_input(24);
          Halide::Runtime::Buffer<uint8_t> expected(kPoclW, kPoclH, 3);
          REQUIRE(histogram_equalize_cpu(in, expected) == 0); const double tolerance = 0)
