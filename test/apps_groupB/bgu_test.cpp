// Bilateral guided upsampling (benchmarks/apps/bgu): BGU fits local affine
// colour models, so when the low-res output is an exact affine function of
// the low-res input, the full-res output must be that function applied to
// the full-res input; the identity operator must give the input back; and a
// constant pair must give a constant image. The generator's defaults are
// used: 8x8-pixel cells, 8 luma bins; a 32x32 low-res pair gives a 4x4x8
// grid and the full-res image is 8 times larger, as in the paper-sized case.
#include "appsB_bgu_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

// Full-res at least 256x256: the Mullapudi2016 CPU schedule tiles the output by up to 256.
constexpr int kLowW = 32, kLowH = 32, kFullW = 256, kFullH = 256;

// An arbitrary colour transform with cross-channel terms and offsets.
const float kM[3][4] = {{0.8f, 0.1f, -0.2f, 0.05f}, {-0.1f, 0.6f, 0.3f, 0.1f}, {0.2f, -0.3f, 0.9f, -0.05f}};

Buffer<float, 3> apply_affine(const Buffer<float, 3> &in) {
    Buffer<float, 3> out(in.width(), in.height(), 3);
    out.for_each_element([&](int x, int y, int k) {
        out(x, y, k) = kM[k][0] * in(x, y, 0) + kM[k][1] * in(x, y, 1) + kM[k][2] * in(x, y, 2) + kM[k][3];
    });
    return out;
}

double max_abs_diff(const Buffer<float, 3> &a, const Buffer<float, 3> &b) {
    double m = 0;
    a.for_each_element(
        [&](int x, int y, int c) { m = std::max(m, (double)std::abs(a(x, y, c) - b(x, y, c))); });
    return m;
}

// Sorted absolute differences, for percentiles.
std::vector<double> sorted_abs_diffs(const Buffer<float, 3> &a, const Buffer<float, 3> &b) {
    std::vector<double> d;
    a.for_each_element([&](int x, int y, int c) { d.push_back(std::abs(a(x, y, c) - b(x, y, c))); });
    std::sort(d.begin(), d.end());
    return d;
}

} // namespace

TEST_CASE("bgu reproduces an affine colour transform", "[apps_groupB][bgu]") {
    Buffer<float, 3> low_in(kLowW, kLowH, 3), full_in(kFullW, kFullH, 3);
    appsB::fill_uniform(low_in, 51, 0.0f, 1.0f);
    appsB::fill_uniform(full_in, 52, 0.0f, 1.0f);
    Buffer<float, 3> low_out = apply_affine(low_in);
    Buffer<float, 3> out(kFullW, kFullH, 3);
    REQUIRE(appsB_bgu_cpu(low_in, low_out, full_in, out) == 0);
    // Pixels whose luma falls in a bin that saw few low-res pixels (extreme
    // luma) are partly pulled towards the identity by the ridge term, so
    // the bound on the worst pixel is looser than on the bulk.
    const std::vector<double> d = sorted_abs_diffs(out, apply_affine(full_in));
    const double p99 = d[d.size() * 99 / 100], worst = d.back();
    double mean = 0;
    for (double v : d) {
        mean += v / d.size();
    }
    INFO("abs error: mean " << mean << ", 99th percentile " << p99 << ", max " << worst);
    CHECK(mean < 1e-3);
    CHECK(p99 < 5e-3);
    CHECK(worst < 0.1);
}

TEST_CASE("bgu of the identity operator returns the full-res input", "[apps_groupB][bgu]") {
    Buffer<float, 3> low_in(kLowW, kLowH, 3), full_in(kFullW, kFullH, 3);
    appsB::fill_uniform(low_in, 53, 0.0f, 1.0f);
    appsB::fill_uniform(full_in, 54, 0.0f, 1.0f);
    Buffer<float, 3> out(kFullW, kFullH, 3);
    REQUIRE(appsB_bgu_cpu(low_in, low_in, full_in, out) == 0);
    const double err = max_abs_diff(out, full_in);
    INFO("max abs error " << err);
    CHECK(err < 1e-3);
}

TEST_CASE("bgu maps a constant image to the constant operator output", "[apps_groupB][bgu]") {
    Buffer<float, 3> low_in(kLowW, kLowH, 3), low_out(kLowW, kLowH, 3), full_in(kFullW, kFullH, 3);
    const float in_colour[3] = {0.3f, 0.5f, 0.2f}, out_colour[3] = {0.7f, 0.1f, 0.4f};
    low_in.for_each_element([&](int x, int y, int c) { low_in(x, y, c) = in_colour[c]; });
    full_in.for_each_element([&](int x, int y, int c) { full_in(x, y, c) = in_colour[c]; });
    low_out.for_each_element([&](int x, int y, int c) { low_out(x, y, c) = out_colour[c]; });
    Buffer<float, 3> out(kFullW, kFullH, 3);
    REQUIRE(appsB_bgu_cpu(low_in, low_out, full_in, out) == 0);
    out.for_each_element(
        [&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(out_colour[c]).margin(1e-3)); });
}
