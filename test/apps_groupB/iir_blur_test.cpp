// IIR blur (benchmarks/apps/iir_blur): the AOT CPU build against the same
// recurrences written as plain C++ loops (columns down and up, transpose,
// again), on a non-square image so a mixed-up transpose would show; and a
// constant image staying constant.
#include "appsB_iir_blur_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <vector>

namespace {

using Halide::Runtime::Buffer;

// Filters the columns of img (w x h, per channel) down then up, in place.
void blur_columns(std::vector<float> &img, int w, int h, float a) {
    for (int x = 0; x < w; x++) {
        for (int y = 1; y < h; y++) {
            img[y * w + x] = (1 - a) * img[(y - 1) * w + x] + a * img[y * w + x];
        }
        for (int y = h - 2; y >= 0; y--) {
            img[y * w + x] = (1 - a) * img[(y + 1) * w + x] + a * img[y * w + x];
        }
    }
}

std::vector<float> transpose(const std::vector<float> &img, int w, int h) {
    std::vector<float> t(img.size());
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            t[x * h + y] = img[y * w + x];
        }
    }
    return t;
}

// The CPU build is scheduled by Mullapudi2016, which splits by the target's
// natural vector width with ShiftInwards: a dimension shorter than one vector
// makes the last vector start before 0 and Halide refuses the input (16 float
// lanes with AVX-512: 13 rows were read from -3). The images are wider and
// taller than the widest x86 vector, and not multiples of it, so the tails
// are exercised on every CPU.
constexpr int kWidestVectorFloats = 16;

} // namespace

TEST_CASE("iir_blur matches the C++ reference", "[apps_groupB][iir_blur]") {
    constexpr int kW = 2 * kWidestVectorFloats + 3, kH = kWidestVectorFloats + 5;
    const float alpha = 0.3f;
    Buffer<float, 3> in(kW, kH, 3);
    appsB::fill_uniform(in, 41, 0.0f, 1.0f);
    Buffer<float, 3> out(kW, kH, 3);
    REQUIRE(appsB_iir_blur_cpu(in, alpha, out) == 0);
    for (int c = 0; c < 3; c++) {
        std::vector<float> img(kW * kH);
        for (int y = 0; y < kH; y++) {
            for (int x = 0; x < kW; x++) {
                img[y * kW + x] = in(x, y, c);
            }
        }
        blur_columns(img, kW, kH, alpha);
        img = transpose(img, kW, kH); // now kH wide, kW tall
        blur_columns(img, kH, kW, alpha);
        img = transpose(img, kH, kW);
        for (int y = 0; y < kH; y++) {
            for (int x = 0; x < kW; x++) {
                CHECK(out(x, y, c) == Approx(img[y * kW + x]).margin(1e-5));
            }
        }
    }
}

TEST_CASE("iir_blur leaves a constant image unchanged", "[apps_groupB][iir_blur]") {
    Buffer<float, 3> in(kWidestVectorFloats + 9, kWidestVectorFloats + 1, 3);
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = 0.1f + 0.4f * c; });
    Buffer<float, 3> out(in.width(), in.height(), 3);
    REQUIRE(appsB_iir_blur_cpu(in, 0.2f, out) == 0);
    out.for_each_element(
        [&](int x, int y, int c) { CHECK(out(x, y, c) == Approx(in(x, y, c)).margin(1e-5)); });
}
