// Histogram equalize: the CPU build must equal a plain integer C++ implementation bit for bit
// (luma histogram, cumulative sum, eq = round(255 cdf / count), channels shifted by eq(Y) - Y).
#include "app_test_util.h"
#include "histogram_equalize_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

Halide::Runtime::Buffer<uint8_t> reference(const Halide::Runtime::Buffer<uint8_t> &in) {
    const int W = in.width(), H = in.height();
    auto luma = [&](int x, int y) {
        return (77 * in(x, y, 0) + 150 * in(x, y, 1) + 29 * in(x, y, 2) + 128) >> 8;
    };
    std::vector<int64_t> hist(256, 0), cdf(256, 0);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            hist[luma(x, y)]++;
    int64_t run = 0;
    for (int b = 0; b < 256; b++)
        cdf[b] = (run += hist[b]);
    const int64_t count = (int64_t)W * H;
    Halide::Runtime::Buffer<uint8_t> out(W, H, 3);
    for (int c = 0; c < 3; c++) {
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                const int yv = luma(x, y);
                const int eq = (int)((cdf[yv] * 255 + count / 2) / count);
                out(x, y, c) = (uint8_t)std::clamp(in(x, y, c) + eq - yv, 0, 255);
            }
        }
    }
    return out;
}

} // namespace

TEST_CASE("histogram_equalize: matches an integer C++ reference exactly",
          "[apps_groupA][histogram_equalize]") {
    const int W = 53, H = 41;
    Halide::Runtime::Buffer<uint8_t> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(3);
    // A low-contrast image (values 90..140), which equalization must stretch.
    in.for_each_value([&](uint8_t &v) { v = (uint8_t)rng.uniform_int(90, 140); });
    REQUIRE(histogram_equalize_cpu(in, out) == 0);
    const auto ref = reference(in);
    int mismatches = 0;
    out.for_each_element([&](int x, int y, int c) { mismatches += out(x, y, c) != ref(x, y, c); });
    CHECK(mismatches == 0);

    // And it did stretch: the output luma spans far more than the input's 50 levels.
    int lo = 255, hi = 0;
    out.for_each_element([&](int x, int y, int c) {
        lo = std::min<int>(lo, out(x, y, c));
        hi = std::max<int>(hi, out(x, y, c));
    });
    CHECK(hi - lo > 150);
}
