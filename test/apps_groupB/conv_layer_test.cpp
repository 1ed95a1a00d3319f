// Conv layer (benchmarks/apps/conv_layer): the AOT CPU build against a
// direct C++ loop nest for a 3x3 valid convolution + bias + ReLU on small
// NCHW-style tensors, with odd sizes so no tile size divides them.
#include "appsB_conv_layer_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>

using Halide::Runtime::Buffer;

TEST_CASE("conv_layer matches the C++ reference", "[apps_groupB][conv_layer]") {
    constexpr int kW = 7, kH = 5, kCI = 5, kCO = 6, kN = 2;
    Buffer<float, 4> input(kW + 2, kH + 2, kCI, kN);
    Buffer<float, 4> filter(3, 3, kCI, kCO);
    Buffer<float, 1> bias(kCO);
    appsB::fill_uniform(input, 21, -1.0f, 1.0f);
    appsB::fill_uniform(filter, 22, -0.5f, 0.5f);
    appsB::fill_uniform(bias, 23, -0.5f, 0.5f);
    Buffer<float, 4> out(kW, kH, kCO, kN);
    REQUIRE(appsB_conv_layer_cpu(input, filter, bias, out) == 0);

    int negatives_clamped = 0;
    for (int n = 0; n < kN; n++) {
        for (int co = 0; co < kCO; co++) {
            for (int y = 0; y < kH; y++) {
                for (int x = 0; x < kW; x++) {
                    double sum = bias(co);
                    for (int ci = 0; ci < kCI; ci++) {
                        for (int ky = 0; ky < 3; ky++) {
                            for (int kx = 0; kx < 3; kx++) {
                                sum += (double)filter(kx, ky, ci, co) * input(x + kx, y + ky, ci, n);
                            }
                        }
                    }
                    negatives_clamped += sum < 0;
                    CHECK(out(x, y, co, n) == Approx(std::max(0.0, sum)).margin(1e-4));
                }
            }
        }
    }
    // The inputs are symmetric around 0, so ReLU really was exercised.
    CHECK(negatives_clamped > 0);
}
