// Bilateral grid: properties of an edge-aware blur. A constant image stays constant; noise on a
// flat region is smoothed; a strong step edge is not blurred across (a plain blur of the same
// radius would smear it); values stay within the input's range.
#include "app_test_util.h"
#include "bilateral_grid_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>

namespace {

double variance(const Halide::Runtime::Buffer<float> &b) {
    double s = 0, s2 = 0;
    long n = 0;
    b.for_each_value([&](float v) {
        s += v;
        s2 += (double)v * v;
        n++;
    });
    return s2 / n - (s / n) * (s / n);
}

} // namespace

TEST_CASE("bilateral_grid: a constant image stays constant", "[apps_groupA][bilateral_grid]") {
    Halide::Runtime::Buffer<float> in(40, 33), out(40, 33);
    in.fill(0.37f);
    REQUIRE(bilateral_grid_cpu(in, out) == 0);
    out.for_each_value([](float v) { CHECK(v == Approx(0.37f).margin(1e-5)); });
}

TEST_CASE("bilateral_grid: smooths noise but keeps a strong edge", "[apps_groupA][bilateral_grid]") {
    const int W = 64, H = 48;
    Halide::Runtime::Buffer<float> in(W, H), out(W, H);
    apps_test::Rng rng(1);
    in.for_each_element(
        [&](int x, int y) { in(x, y) = (x < 32 ? 0.2f : 0.8f) + rng.uniform(-0.03f, 0.03f); });
    REQUIRE(bilateral_grid_cpu(in, out) == 0);

    // Edge kept: every pixel stays on its own side of the step (a Gaussian blur with sigma 8
    // would pull pixels next to the edge half way across).
    out.for_each_element([&](int x, int y) {
        const float side = x < 32 ? 0.2f : 0.8f;
        CHECK(std::abs(out(x, y) - side) < 0.06f);
    });
    // Noise smoothed: compare the residual variance around each side's level.
    Halide::Runtime::Buffer<float> in_res(W, H), out_res(W, H);
    in_res.for_each_element([&](int x, int y) { in_res(x, y) = in(x, y) - (x < 32 ? 0.2f : 0.8f); });
    out_res.for_each_element([&](int x, int y) { out_res(x, y) = out(x, y) - (x < 32 ? 0.2f : 0.8f); });
    CHECK(variance(out_res) < 0.25 * variance(in_res));
}

TEST_CASE("bilateral_grid: output stays within the input's range", "[apps_groupA][bilateral_grid]") {
    Halide::Runtime::Buffer<float> in(45, 38), out(45, 38);
    apps_test::Rng rng(2);
    in.for_each_value([&](float &v) { v = rng.uniform(0.25f, 0.75f); });
    REQUIRE(bilateral_grid_cpu(in, out) == 0);
    out.for_each_value([](float v) {
        CHECK(v >= 0.25f - 1e-5f);
        CHECK(v <= 0.75f + 1e-5f);
    });
}
