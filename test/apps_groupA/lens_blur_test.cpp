// Lens blur: a stereo pair with a known disparity, focused at that disparity, must reproduce the
// left view (depth found, blur radius 0, only the pixel itself contributes); focused elsewhere
// it must blur (less variance, different pixels); constant views give the constant back.
#include "app_test_util.h"
#include "lens_blur_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace {

constexpr int kW = 96, kH = 64, kDisparity = 5;

// left(x) = T(x), right(x) = T(x + d): the right view sees each point d pixels to the left.
void make_pair(Halide::Runtime::Buffer<uint8_t> &left, Halide::Runtime::Buffer<uint8_t> &right) {
    Halide::Runtime::Buffer<uint8_t> texture(kW + kDisparity, kH, 3);
    apps_test::Rng rng(12);
    texture.for_each_value([&](uint8_t &v) { v = (uint8_t)rng.uniform_int(0, 255); });
    left.for_each_element([&](int x, int y, int c) { left(x, y, c) = texture(x, y, c); });
    right.for_each_element([&](int x, int y, int c) { right(x, y, c) = texture(x + kDisparity, y, c); });
}

double variance_interior(const Halide::Runtime::Buffer<uint8_t> &b) {
    double s = 0, s2 = 0;
    long n = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 16; y < kH - 16; y++)
            for (int x = 24; x < kW - 24; x++) {
                s += b(x, y, c);
                s2 += (double)b(x, y, c) * b(x, y, c);
                n++;
            }
    return s2 / n - (s / n) * (s / n);
}

} // namespace

TEST_CASE("lens_blur: in focus at the scene's disparity, the left view comes back",
          "[apps_groupA][lens_blur]") {
    Halide::Runtime::Buffer<uint8_t> left(kW, kH, 3), right(kW, kH, 3), out(kW, kH, 3);
    make_pair(left, right);
    REQUIRE(lens_blur_cpu(left, right, kDisparity, 1.0f, out) == 0);
    int mismatches = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 16; y < kH - 16; y++)
            for (int x = 24; x < kW - 24; x++)
                mismatches += std::abs(out(x, y, c) - left(x, y, c)) > 1;
    CHECK(mismatches == 0);
}

TEST_CASE("lens_blur: out of focus, the image is blurred", "[apps_groupA][lens_blur]") {
    Halide::Runtime::Buffer<uint8_t> left(kW, kH, 3), right(kW, kH, 3), out(kW, kH, 3);
    make_pair(left, right);
    REQUIRE(lens_blur_cpu(left, right, kDisparity + 12, 1.0f, out) == 0);
    CHECK(variance_interior(out) < 0.5 * variance_interior(left));
}

TEST_CASE("lens_blur: constant views stay constant", "[apps_groupA][lens_blur]") {
    Halide::Runtime::Buffer<uint8_t> left(40, 30, 3), right(40, 30, 3), out(40, 30, 3);
    left.for_each_element([&](int x, int y, int c) { left(x, y, c) = (uint8_t)(60 + 50 * c); });
    right.for_each_element([&](int x, int y, int c) { right(x, y, c) = (uint8_t)(60 + 50 * c); });
    REQUIRE(lens_blur_cpu(left, right, 20, 1.0f, out) == 0);
    out.for_each_element([&](int x, int y, int c) { CHECK(out(x, y, c) == 60 + 50 * c); });
}
