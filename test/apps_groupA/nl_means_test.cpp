// Non-local means: properties of a normalised patch-weighted average. A constant image stays
// constant; every output lies within its search window's range (a convex combination); noise
// on a flat image is reduced; a strong edge is kept (patches across it do not match).
#include "app_test_util.h"
#include "nl_means_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>

TEST_CASE("nl_means: a constant image stays constant", "[apps_groupA][nl_means]") {
    Halide::Runtime::Buffer<float> in(24, 19, 3), out(24, 19, 3);
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = 0.2f + 0.3f * c; });
    REQUIRE(nl_means_cpu(in, 0.12f, out) == 0);
    out.for_each_element(
        [&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(0.2f + 0.3f * c).margin(1e-5)); });
}

TEST_CASE("nl_means: outputs are convex combinations of the search window", "[apps_groupA][nl_means]") {
    const int W = 26, H = 21;
    Halide::Runtime::Buffer<float> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(4);
    in.for_each_value([&](float &v) { v = rng.uniform(0.0f, 1.0f); });
    REQUIRE(nl_means_cpu(in, 0.3f, out) == 0);
    out.for_each_element([&](int x, int y, int c) {
        float lo = 1.0f, hi = 0.0f;
        for (int dy = -3; dy <= 3; dy++) {
            for (int dx = -3; dx <= 3; dx++) {
                const float v = in(std::clamp(x + dx, 0, W - 1), std::clamp(y + dy, 0, H - 1), c);
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
        CHECK(out(x, y, c) >= lo - 1e-5f);
        CHECK(out(x, y, c) <= hi + 1e-5f);
    });
}

TEST_CASE("nl_means: reduces noise and keeps a strong edge", "[apps_groupA][nl_means]") {
    const int W = 32, H = 24;
    Halide::Runtime::Buffer<float> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(6);
    auto level = [](int x) { return x < 16 ? 0.2f : 0.8f; };
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = level(x) + rng.uniform(-0.05f, 0.05f); });
    REQUIRE(nl_means_cpu(in, 0.12f, out) == 0);
    double err_in = 0, err_out = 0;
    out.for_each_element([&](int x, int y, int c) {
        err_in += std::pow(in(x, y, c) - level(x), 2);
        err_out += std::pow(out(x, y, c) - level(x), 2);
        CHECK(std::abs(out(x, y, c) - level(x)) < 0.1f); // never pulled across the edge
    });
    CHECK(err_out < 0.5 * err_in);
}
