// Interpolate (benchmarks/apps/interpolate): properties of pyramid
// push-pull interpolation that any correct implementation has. Opaque
// pixels keep their colour; a constant colour stays constant whatever the
// alpha; the colour of transparent pixels never leaks into the result; the
// output is a weighted average of opaque colours, so it stays in range.
#include "appsB_interpolate_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <cmath>

namespace {

using Halide::Runtime::Buffer;

// At least 256x256: the Mullapudi2016 CPU schedule tiles the output by up to 256.
constexpr int kW = 256, kH = 256;

Buffer<float, 3> run(Buffer<float, 3> &in) {
    Buffer<float, 3> out(in.width(), in.height(), 3);
    REQUIRE(appsB_interpolate_cpu(in, out) == 0);
    return out;
}

} // namespace

TEST_CASE("interpolate returns a fully opaque image unchanged", "[apps_groupB][interpolate]") {
    Buffer<float, 3> in(kW, kH, 4);
    appsB::fill_uniform(in, 11, 0.0f, 1.0f);
    in.for_each_element([&](int x, int y, int c) {
        if (c == 3) {
            in(x, y, c) = 1.0f;
        }
    });
    Buffer<float, 3> out = run(in);
    out.for_each_element(
        [&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(in(x, y, c)).margin(1e-6)); });
}

TEST_CASE("interpolate keeps a constant colour constant under any alpha", "[apps_groupB][interpolate]") {
    Buffer<float, 3> in(kW, kH, 4);
    appsB::fill_uniform(in, 12, 0.0f, 1.0f);
    const float colour[3] = {0.25f, 0.5f, 0.9f};
    in.for_each_element([&](int x, int y, int c) {
        if (c < 3) {
            in(x, y, c) = colour[c];
        } else if ((x + 3 * y) % 5 != 0) {
            in(x, y, c) = 0.0f; // mostly holes; 1 pixel in 5 keeps a random alpha
        }
    });
    Buffer<float, 3> out = run(in);
    out.for_each_element([&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(colour[c]).margin(1e-4)); });
}

TEST_CASE("interpolate fills holes from opaque colours only", "[apps_groupB][interpolate]") {
    // Left half opaque red, right half fully transparent with a green colour
    // that must not show up anywhere; the holes must fill with (mostly) red.
    Buffer<float, 3> in(kW, kH, 4);
    in.for_each_element([&](int x, int y, int c) {
        const bool opaque = x < kW / 2;
        const float rgba_opaque[4] = {1.0f, 0.0f, 0.0f, 1.0f};
        const float rgba_hole[4] = {0.0f, 1.0f, 0.0f, 0.0f};
        in(x, y, c) = opaque ? rgba_opaque[c] : rgba_hole[c];
    });
    Buffer<float, 3> out = run(in);
    out.for_each_element([&](int x, int y) {
        CHECK(out(x, y, 0) == Approx(1.0f).margin(1e-5));
        CHECK(std::abs(out(x, y, 1)) < 1e-6f);
        CHECK(std::abs(out(x, y, 2)) < 1e-6f);
    });
}

TEST_CASE("interpolate output stays within the range of the input colours", "[apps_groupB][interpolate]") {
    Buffer<float, 3> in(kW, kH, 4);
    appsB::fill_uniform(in, 13, 0.2f, 0.8f);
    in.for_each_element([&](int x, int y, int c) {
        if (c == 3 && (x * 7 + y * 3) % 4 != 0) {
            in(x, y, c) = 0.0f;
        }
    });
    Buffer<float, 3> out = run(in);
    int differs_from_input = 0;
    out.for_each_element([&](int x, int y, int c) {
        const float v = out(x, y, c);
        CHECK(std::isfinite(v));
        CHECK(v >= 0.2f - 1e-5f);
        CHECK(v <= 0.8f + 1e-5f);
        differs_from_input += std::abs(v - in(x, y, c)) > 1e-3f;
    });
    // Holes were filled with something else than their own (ignored) colour.
    CHECK(differs_from_input > kW * kH);
}
