// Stencil chain: the CPU build must equal a plain C++ evaluation of 32 chained 5x5 binomial
// stencils over the edge-clamped input (only the input is clamped; intermediate stages are
// evaluated on ever larger margins, exactly as the Halide definition implies).
#include "app_test_util.h"
#include "stencil_chain_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

std::vector<float> reference(const Halide::Runtime::Buffer<float> &in, int stages) {
    const int W = in.width(), H = in.height(), M = 2 * stages;
    int w = W + 2 * M, h = H + 2 * M;
    std::vector<float> cur(w * h);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            cur[y * w + x] = in(std::clamp(x - M, 0, W - 1), std::clamp(y - M, 0, H - 1));
        }
    }
    static const int kTaps[5] = {1, 4, 6, 4, 1};
    for (int s = 0; s < stages; s++) {
        int nw = w - 4, nh = h - 4;
        std::vector<float> next(nw * nh);
        for (int y = 0; y < nh; y++) {
            for (int x = 0; x < nw; x++) {
                float acc = 0.0f;
                for (int dy = 0; dy < 5; dy++) {
                    for (int dx = 0; dx < 5; dx++) {
                        acc += (kTaps[dx] * kTaps[dy] / 256.0f) * cur[(y + dy) * w + (x + dx)];
                    }
                }
                next[y * nw + x] = acc;
            }
        }
        cur.swap(next);
        w = nw;
        h = nh;
    }
    return cur; // W x H
}

} // namespace

TEST_CASE("stencil_chain: 32 chained 5x5 stencils match a plain C++ evaluation",
          "[apps_groupA][stencil_chain]") {
    const int W = 29, H = 23;
    Halide::Runtime::Buffer<float> in(W, H), out(W, H);
    apps_test::Rng rng(7);
    in.for_each_value([&](float &v) { v = rng.uniform(0.0f, 1.0f); });
    REQUIRE(stencil_chain_cpu(in, out) == 0);
    const auto ref = reference(in, 32);
    float max_err = 0.0f;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++)
            max_err = std::max(max_err, std::abs(out(x, y) - ref[y * W + x]));
    }
    CHECK(max_err < 1e-5f);
}

TEST_CASE("stencil_chain: a constant image stays constant", "[apps_groupA][stencil_chain]") {
    Halide::Runtime::Buffer<float> in(17, 13), out(17, 13);
    in.fill(0.625f);
    REQUIRE(stencil_chain_cpu(in, out) == 0);
    out.for_each_value([](float v) { CHECK(v == Approx(0.625f).margin(1e-5)); });
}
