// Learned demosaic (benchmarks/apps/learned_demosaic): properties of a
// residual-CNN demosaic. Sampled colours pass through exactly; flat and
// linearly varying images (where bilinear demosaicking is exact and the
// network's high-pass input is zero) are reconstructed exactly away from the
// border; and on textured input the network really changes the bilinear
// answer, by a bounded amount.
#include "apps_test_util.h"
#include "appsB_learned_demosaic_cpu.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace {

using Halide::Runtime::Buffer;

constexpr int kW = 32, kH = 24;

// Colour the RGGB mosaic sampled at (x, y): 0 red, 1 green, 2 blue.
int sampled_colour(int x, int y) {
    const int pos = (x % 2) + 2 * (y % 2);
    return pos == 0 ? 0 : (pos == 3 ? 2 : 1);
}

Buffer<float, 3> run(Buffer<float, 2> &mosaic) {
    Buffer<float, 3> out(mosaic.width(), mosaic.height(), 3);
    REQUIRE(appsB_learned_demosaic_cpu(mosaic, out) == 0);
    return out;
}

// Plain bilinear demosaic of an interior pixel, for comparison.
float bilinear(const Buffer<float, 2> &m, int x, int y, int c) {
    const bool xo = x % 2, yo = y % 2;
    const float h = (m(x - 1, y) + m(x + 1, y)) / 2, v = (m(x, y - 1) + m(x, y + 1)) / 2;
    const float d = (m(x - 1, y - 1) + m(x + 1, y - 1) + m(x - 1, y + 1) + m(x + 1, y + 1)) / 4;
    if (c == sampled_colour(x, y)) {
        return m(x, y);
    }
    if (c == 1) {
        return (h + v) / 2;
    }
    const bool at_same_row = (c == 0) ? !yo : yo;  // row containing this colour's samples
    const bool at_same_col = (c == 0) ? !xo : xo;
    if (at_same_row) {
        return h;
    }
    if (at_same_col) {
        return v;
    }
    return d;
}

}  // namespace

TEST_CASE("learned_demosaic passes sampled colours through", "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> mosaic(kW, kH);
    appsB::fill_uniform(mosaic, 71, 0.0f, 1.0f);
    Buffer<float, 3> out = run(mosaic);
    mosaic.for_each_element([&](int x, int y) { CHECK(out(x, y, sampled_colour(x, y)) == mosaic(x, y)); });
}

TEST_CASE("learned_demosaic reconstructs flat and linear images exactly", "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> flat(kW, kH), ramp(kW, kH);
    flat.fill(0.4f);
    ramp.for_each_element([&](int x, int y) { ramp(x, y) = 0.1f + 0.01f * x + 0.02f * y; });
    Buffer<float, 3> out_flat = run(flat), out_ramp = run(ramp);
    out_flat.for_each_element([&](int x, int y, int c) { CHECK(out_flat(x, y, c) == Approx(0.4f).margin(1e-5)); });
    // The network sees 2 half-res pixels (4 full-res) around each pixel and
    // the mirrored border is not linear, so only the interior is exact.
    for (int y = 6; y < kH - 6; y++) {
        for (int x = 6; x < kW - 6; x++) {
            for (int c = 0; c < 3; c++) {
                CHECK(out_ramp(x, y, c) == Approx(ramp(x, y)).margin(1e-5));
            }
        }
    }
}

TEST_CASE("learned_demosaic's network corrects the bilinear result on texture", "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> mosaic(kW, kH);
    appsB::fill_uniform(mosaic, 72, 0.0f, 1.0f);
    Buffer<float, 3> out = run(mosaic);
    double max_change = 0;
    for (int y = 2; y < kH - 2; y++) {
        for (int x = 2; x < kW - 2; x++) {
            for (int c = 0; c < 3; c++) {
                const float v = out(x, y, c);
                REQUIRE(std::isfinite(v));
                max_change = std::max(max_change, (double)std::abs(v - bilinear(mosaic, x, y, c)));
            }
        }
    }
    INFO("largest change over bilinear " << max_change);
    CHECK(max_change > 1e-2);
    CHECK(max_change < 10.0);
}
