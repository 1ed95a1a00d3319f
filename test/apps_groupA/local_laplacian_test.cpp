// Local Laplacian: with alpha = 0 and beta = 1 the remapping is the identity and the collapsed
// pyramid must reproduce the input (to 16-bit rounding) at any size - this exercises every
// downsampling, upsampling and the per-level interpolation. With alpha > 0 a constant image stays
// spatially constant, and fine, low-amplitude texture gets more contrast.
#include "app_test_util.h"
#include "local_laplacian_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace {

double stddev_channel(const Halide::Runtime::Buffer<uint16_t> &b, int c, int margin) {
    double s = 0, s2 = 0;
    long n = 0;
    for (int y = margin; y < b.height() - margin; y++) {
        for (int x = margin; x < b.width() - margin; x++) {
            s += b(x, y, c);
            s2 += (double)b(x, y, c) * b(x, y, c);
            n++;
        }
    }
    return std::sqrt(s2 / n - (s / n) * (s / n));
}

} // namespace

TEST_CASE("local_laplacian: alpha = 0, beta = 1 reconstructs the input", "[apps_groupA][local_laplacian]") {
    const int W = 45, H = 37;
    Halide::Runtime::Buffer<uint16_t> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(8);
    in.for_each_value([&](uint16_t &v) { v = (uint16_t)rng.uniform_int(12000, 52000); });
    REQUIRE(local_laplacian_cpu(in, 0.0f, 1.0f, out) == 0);
    int max_err = 0;
    out.for_each_element(
        [&](int x, int y, int c) { max_err = std::max(max_err, std::abs(out(x, y, c) - in(x, y, c))); });
    CHECK(max_err <= 3);
}

TEST_CASE("local_laplacian: a constant image stays spatially constant", "[apps_groupA][local_laplacian]") {
    const int W = 33, H = 29;
    Halide::Runtime::Buffer<uint16_t> in(W, H, 3), out(W, H, 3);
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = (uint16_t)(20000 + 5000 * c); });
    REQUIRE(local_laplacian_cpu(in, 1.0f / 7.0f, 1.0f, out) == 0);
    out.for_each_element([&](int x, int y, int c) { CHECK(std::abs(out(x, y, c) - out(0, 0, c)) <= 1); });
}

TEST_CASE("local_laplacian: alpha > 0 boosts fine detail", "[apps_groupA][local_laplacian]") {
    const int W = 48, H = 40;
    Halide::Runtime::Buffer<uint16_t> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(9);
    // Grey texture of +-1000 around mid-grey: well below one intensity step (65535/7).
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            const uint16_t v = (uint16_t)(32768 + rng.uniform_int(-1000, 1000));
            for (int c = 0; c < 3; c++)
                in(x, y, c) = v;
        }
    }
    REQUIRE(local_laplacian_cpu(in, 1.0f, 1.0f, out) == 0);
    CHECK(stddev_channel(out, 1, 4) > 1.5 * stddev_channel(in, 1, 4));
}
