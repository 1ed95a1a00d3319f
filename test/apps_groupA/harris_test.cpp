// Harris: the CPU build must match a plain C++ evaluation (luma, Sobel/12, 3x3 box sums of the
// structure tensor, det - 0.04 trace^2, input clamped at the edges), and behave as a corner
// detector: a straight step edge gives no positive response, a corner gives its strongest
// positive response next to the corner.
#include "app_test_util.h"
#include "harris_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

std::vector<float> reference(const Halide::Runtime::Buffer<float> &in) {
    const int W = in.width(), H = in.height();
    auto gray = [&](int x, int y) {
        x = std::clamp(x, 0, W - 1);
        y = std::clamp(y, 0, H - 1);
        return 0.299f * in(x, y, 0) + 0.587f * in(x, y, 1) + 0.114f * in(x, y, 2);
    };
    auto iy = [&](int x, int y) {
        return (gray(x - 1, y + 1) + 2 * gray(x, y + 1) + gray(x + 1, y + 1) - gray(x - 1, y - 1) -
                2 * gray(x, y - 1) - gray(x + 1, y - 1)) /
               12.0f;
    };
    auto ix = [&](int x, int y) {
        return (gray(x + 1, y - 1) + 2 * gray(x + 1, y) + gray(x + 1, y + 1) - gray(x - 1, y - 1) -
                2 * gray(x - 1, y) - gray(x - 1, y + 1)) /
               12.0f;
    };
    std::vector<float> out(W * H);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            float sxx = 0, syy = 0, sxy = 0;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    const float gx = ix(x + dx, y + dy), gy = iy(x + dx, y + dy);
                    sxx += gx * gx;
                    syy += gy * gy;
                    sxy += gx * gy;
                }
            }
            const float det = sxx * syy - sxy * sxy, tr = sxx + syy;
            out[y * W + x] = det - 0.04f * tr * tr;
        }
    }
    return out;
}

} // namespace

TEST_CASE("harris: matches a plain C++ evaluation", "[apps_groupA][harris]") {
    const int W = 31, H = 27;
    Halide::Runtime::Buffer<float> in(W, H, 3), out(W, H);
    apps_test::Rng rng(5);
    in.for_each_value([&](float &v) { v = rng.uniform(0.0f, 1.0f); });
    REQUIRE(harris_cpu(in, out) == 0);
    const auto ref = reference(in);
    float max_err = 0.0f, max_abs = 0.0f;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            max_err = std::max(max_err, std::abs(out(x, y) - ref[y * W + x]));
            max_abs = std::max(max_abs, std::abs(ref[y * W + x]));
        }
    }
    REQUIRE(max_abs > 0.0f);
    CHECK(max_err <= 1e-5f * max_abs);
}

TEST_CASE("harris: a straight edge is not a corner, a corner is", "[apps_groupA][harris]") {
    const int W = 32, H = 32;
    Halide::Runtime::Buffer<float> edge(W, H, 3), corner(W, H, 3), out(W, H);
    edge.for_each_element([&](int x, int y, int c) { edge(x, y, c) = x < 16 ? 0.1f : 0.9f; });
    REQUIRE(harris_cpu(edge, out) == 0);
    float edge_max = -1.0f;
    out.for_each_value([&](float v) { edge_max = std::max(edge_max, v); });
    CHECK(edge_max <= 1e-7f); // det = 0 along a straight edge: only the -k trace^2 term remains

    corner.for_each_element(
        [&](int x, int y, int c) { corner(x, y, c) = (x >= 16 && y >= 16) ? 0.9f : 0.1f; });
    REQUIRE(harris_cpu(corner, out) == 0);
    int best_x = 0, best_y = 0;
    out.for_each_element([&](int x, int y) {
        if (out(x, y) > out(best_x, best_y)) {
            best_x = x;
            best_y = y;
        }
    });
    CHECK(out(best_x, best_y) > 1e-4f);
    CHECK(std::abs(best_x - 15.5) <= 2.0);
    CHECK(std::abs(best_y - 15.5) <= 2.0);
}
