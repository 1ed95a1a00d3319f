// Depthwise-separable conv (benchmarks/apps/depthwise_separable_conv): the
// AOT CPU build against a C++ loop nest: per-channel 3x3 convolution with
// zero padding, 1x1 channel mix + bias, ReLU. Sizes are odd and the border
// pixels are checked too, so wrong padding would show.
#include "appsB_depthwise_separable_conv_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>

using Halide::Runtime::Buffer;

TEST_CASE("depthwise_separable_conv matches the C++ reference", "[apps_groupB][depthwise_separable_conv]") {
    constexpr int kW = 9, kH = 6, kCI = 3, kCO = 4, kN = 2;
    Buffer<float, 4> input(kW, kH, kCI, kN);
    Buffer<float, 3> dw(3, 3, kCI);
    Buffer<float, 2> pw(kCI, kCO);
    Buffer<float, 1> bias(kCO);
    appsB::fill_uniform(input, 61, -1.0f, 1.0f);
    appsB::fill_uniform(dw, 62, -0.5f, 0.5f);
    appsB::fill_uniform(pw, 63, -1.0f, 1.0f);
    appsB::fill_uniform(bias, 64, -0.2f, 0.2f);
    Buffer<float, 4> out(kW, kH, kCO, kN);
    REQUIRE(appsB_depthwise_separable_conv_cpu(input, dw, pw, bias, out) == 0);

    auto in_at = [&](int x, int y, int c, int n) {
        return (x < 0 || y < 0 || x >= kW || y >= kH) ? 0.0 : (double)input(x, y, c, n);
    };
    int negatives_clamped = 0;
    for (int n = 0; n < kN; n++) {
        for (int y = 0; y < kH; y++) {
            for (int x = 0; x < kW; x++) {
                double depthwise[kCI];
                for (int ci = 0; ci < kCI; ci++) {
                    depthwise[ci] = 0;
                    for (int ky = 0; ky < 3; ky++) {
                        for (int kx = 0; kx < 3; kx++) {
                            depthwise[ci] += dw(kx, ky, ci) * in_at(x + kx - 1, y + ky - 1, ci, n);
                        }
                    }
                }
                for (int co = 0; co < kCO; co++) {
                    double sum = bias(co);
                    for (int ci = 0; ci < kCI; ci++) {
                        sum += pw(ci, co) * depthwise[ci];
                    }
                    negatives_clamped += sum < 0;
                    CHECK(out(x, y, co, n) == Approx(std::max(0.0, sum)).margin(1e-5));
                }
            }
        }
    }
    CHECK(negatives_clamped > 0);
}
