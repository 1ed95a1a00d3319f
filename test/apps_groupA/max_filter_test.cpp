// Max filter: the CPU build (vertical power-of-two maxima, two windows per column) must equal the
// brute-force maximum over the disc dx^2 + dy^2 <= 26^2 of the edge-clamped input, exactly.
#include "app_test_util.h"
#include "max_filter_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>

TEST_CASE("max_filter: equals the brute-force disc maximum of radius 26", "[apps_groupA][max_filter]") {
    const int W = 37, H = 31, R = 26;
    Halide::Runtime::Buffer<float> in(W, H, 3), out(W, H, 3);
    apps_test::Rng rng(11);
    in.for_each_value([&](float &v) { v = rng.uniform(0.0f, 1.0f); });
    REQUIRE(max_filter_cpu(in, out) == 0);
    int mismatches = 0;
    for (int c = 0; c < 3; c++) {
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                float m = -1.0f;
                for (int dy = -R; dy <= R; dy++) {
                    for (int dx = -R; dx <= R; dx++) {
                        if (dx * dx + dy * dy > R * R) continue;
                        m = std::max(m, in(std::clamp(x + dx, 0, W - 1), std::clamp(y + dy, 0, H - 1), c));
                    }
                }
                if (out(x, y, c) != m) mismatches++;
            }
        }
    }
    CHECK(mismatches == 0);
}

TEST_CASE("max_filter: a single bright pixel becomes a disc of radius 26", "[apps_groupA][max_filter]") {
    const int W = 64, H = 64, R = 26;
    Halide::Runtime::Buffer<float> in(W, H, 3), out(W, H, 3);
    in.fill(0.0f);
    in(32, 30, 1) = 1.0f;
    REQUIRE(max_filter_cpu(in, out) == 0);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            const bool inside = (x - 32) * (x - 32) + (y - 30) * (y - 30) <= R * R;
            CHECK(out(x, y, 1) == (inside ? 1.0f : 0.0f));
            CHECK(out(x, y, 0) == 0.0f);
        }
    }
}
