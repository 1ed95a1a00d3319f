// sum_of_squares: the CPU build equals the double-precision sum of squares within the float
// summation bound (ml_app_checks.h), and a planted fault (the last row missed, what a wrong tail
// gives) is outside it.
#include "ml_app_checks.h"
#include "sum_of_squares_cpu.h"

#include <HalideBuffer.h>

namespace {

TEST_CASE("sum_of_squares: equals the double sum of squares within the float summation bound",
          "[apps_ml][sum_of_squares]") {
    const int W = 301, H = 157;
    Halide::Runtime::Buffer<float> in(W, H);
    Halide::Runtime::Buffer<float, 0> out = Halide::Runtime::Buffer<float, 0>::make_scalar();
    apps_test::Rng rng(11);
    in.for_each_value([&](float &v) { v = rng.uniform(-2.0f, 2.0f); });
    REQUIRE(sum_of_squares_cpu(in, out) == 0);

    double exact = 0, magnitudes = 0;
    in.for_each_value([&](float v) {
        const double sq = static_cast<double>(v * v); // the square is a float product, as in the app
        exact += sq;
        magnitudes += sq;
    });
    const double tol = apps_ml_test::float_sum_tolerance(int64_t(W) * H, magnitudes);
    CHECK(std::abs(out() - exact) <= tol);
    // The bound is tight enough to see the last row missed.
    double last_row = 0;
    for (int x = 0; x < W; x++)
        last_row += static_cast<double>(in(x, H - 1) * in(x, H - 1));
    CHECK(last_row > tol);
}

} // namespace

ML_APP_PTX_TESTS("sum_of_squares")
