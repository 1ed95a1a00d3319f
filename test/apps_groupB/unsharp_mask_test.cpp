// Unsharp mask (benchmarks/apps/unsharp_mask): the AOT CPU build against a
// direct C++ transcription of the algorithm, and constant images staying
// constant (a sharpening filter must not invent detail).
#include "appsB_unsharp_mask_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

// Same definition as the generator: Gaussian sigma 1.5, radius 3, edges
// repeat, Rec.601 luma, ratio guarded by max(gray, 1e-6).
Buffer<float, 3> reference(const Buffer<float, 3> &in) {
    const int w = in.width(), h = in.height();
    const int radius = 3;
    std::vector<float> k(2 * radius + 1);
    float sum = 0;
    for (int i = -radius; i <= radius; i++) {
        k[i + radius] = std::exp(-(i * i) / (2.0f * 1.5f * 1.5f));
        sum += k[i + radius];
    }
    for (float &v : k) {
        v /= sum;
    }
    auto px = [&](int x, int y, int c) { return in(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1), c); };
    auto gray = [&](int x, int y) {
        return 0.299f * px(x, y, 0) + 0.587f * px(x, y, 1) + 0.114f * px(x, y, 2);
    };
    auto blur_y = [&](int x, int y) {
        float s = 0;
        for (int i = -radius; i <= radius; i++) {
            s += k[i + radius] * gray(x, y + i);
        }
        return s;
    };
    Buffer<float, 3> out(w, h, 3);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            float bx = 0;
            for (int i = -radius; i <= radius; i++) {
                bx += k[i + radius] * blur_y(x + i, y);
            }
            const float g = gray(x, y);
            const float ratio = (2 * g - bx) / std::max(g, 1e-6f);
            for (int c = 0; c < 3; c++) {
                out(x, y, c) = ratio * in(x, y, c);
            }
        }
    }
    return out;
}

} // namespace

TEST_CASE("unsharp_mask matches the C++ reference on a random image", "[apps_groupB][unsharp_mask]") {
    Buffer<float, 3> in(37, 29, 3);
    appsB::fill_uniform(in, 7, 0.05f, 1.0f);
    Buffer<float, 3> out(37, 29, 3);
    REQUIRE(appsB_unsharp_mask_cpu(in, out) == 0);
    Buffer<float, 3> ref = reference(in);
    double max_err = 0;
    out.for_each_element([&](int x, int y, int c) {
        max_err = std::max(max_err, (double)std::abs(out(x, y, c) - ref(x, y, c)));
    });
    CHECK(max_err < 1e-4);
}

TEST_CASE("unsharp_mask leaves a constant image unchanged", "[apps_groupB][unsharp_mask]") {
    Buffer<float, 3> in(20, 16, 3);
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = 0.2f + 0.3f * c; });
    Buffer<float, 3> out(20, 16, 3);
    REQUIRE(appsB_unsharp_mask_cpu(in, out) == 0);
    out.for_each_element(
        [&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(in(x, y, c)).margin(1e-5)); });
}
