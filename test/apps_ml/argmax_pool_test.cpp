// argmax_pool: the CPU build picks, at every pooled pixel, the first channel with the largest 2x2
// average. On inputs of small integers every average is exact in float, whatever order a schedule
// adds the four terms in, so the reference is exact and the comparison is equality; such inputs
// tie often, and are checked to tell first-wins from last-wins ties apart (what a channel split
// merged in the wrong order gives). On random floats the comparison allows the rounding of the
// four-term sum: the chosen channel's exact average must be the largest within that bound, and
// where the two largest are further apart than it, the channel must be the reference's.
#include "argmax_pool_cpu.h"
#include "ml_app_checks.h"

#include <HalideBuffer.h>

#include <cstdint>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

// The exact 2x2 average (double) of pooled pixel (x, y) in channel c, and the sum of its terms'
// magnitudes.
double average(const Buffer<float> &in, int x, int y, int c, double *magnitudes = nullptr) {
    double s = 0, m = 0;
    for (int dy = 0; dy < 2; dy++) {
        for (int dx = 0; dx < 2; dx++) {
            const double v = in(2 * x + dx, 2 * y + dy, c);
            s += v;
            m += std::abs(v);
        }
    }
    if (magnitudes) *magnitudes = m / 4;
    return s / 4;
}

// The reference argmax over channels (first wins; with last_wins, the planted fault, last wins).
Buffer<int32_t> argmax_reference(const Buffer<float> &in, bool last_wins = false) {
    const int C = in.dim(2).extent();
    Buffer<int32_t> out(in.dim(0).extent() / 2, in.dim(1).extent() / 2);
    out.for_each_element([&](int x, int y) {
        int best = 0;
        for (int c = 1; c < C; c++) {
            const double a = average(in, x, y, c), b = average(in, x, y, best);
            if (a > b || (last_wins && a == b)) best = c;
        }
        out(x, y) = best;
    });
    return out;
}

int mismatches(const Buffer<int32_t> &a, const Buffer<int32_t> &b) {
    int n = 0;
    a.for_each_element([&](int x, int y) { n += a(x, y) != b(x, y); });
    return n;
}

TEST_CASE(
    "argmax_pool: equals the first channel with the largest 2x2 average, exactly, on inputs with many ties",
    "[apps_ml][argmax_pool]") {
    // 37 x 23 x 5: 18 x 11 pooled pixels (the odd last column and row are not pooled). Integers in
    // [0, 3]: sums up to 12 and quarters of them, exact in float.
    const int W = 37, H = 23, C = 5;
    Buffer<float> in(W, H, C);
    apps_test::Rng rng(41);
    in.for_each_value([&](float &v) { v = static_cast<float>(rng.uniform_int(0, 3)); });
    Buffer<int32_t> out(W / 2, H / 2);
    REQUIRE(argmax_pool_cpu(in, out) == 0);

    const Buffer<int32_t> ref = argmax_reference(in);
    CHECK(mismatches(out, ref) == 0);
    // The input tells the tie rule apart, and every channel, the last included, wins somewhere.
    CHECK(mismatches(ref, argmax_reference(in, /*last_wins=*/true)) > 20);
    std::vector<int> wins(C, 0);
    ref.for_each_value([&](int32_t c) { wins[c]++; });
    for (int c = 0; c < C; c++)
        CHECK(wins[c] > 0);

    // The same data at another origin gives the same (origin-relative) channels.
    Buffer<float> shifted = in.copy();
    shifted.set_min(3, -2, 7);
    Buffer<int32_t> out2(W / 2, H / 2);
    REQUIRE(argmax_pool_cpu(shifted, out2) == 0);
    CHECK(mismatches(out2, ref) == 0);
}

TEST_CASE("argmax_pool: on random floats picks a channel whose average is the largest within float rounding",
          "[apps_ml][argmax_pool]") {
    // 37 channels: a channel loop with a tail for any split of 2, 4, 8, ... channels.
    const int W = 37, H = 23, C = 37;
    Buffer<float> in(W, H, C);
    apps_test::Rng rng(42);
    in.for_each_value([&](float &v) { v = rng.uniform(-1.0f, 1.0f); });
    Buffer<int32_t> out(W / 2, H / 2);
    REQUIRE(argmax_pool_cpu(in, out) == 0);

    const Buffer<int32_t> ref = argmax_reference(in);
    int decided = 0;
    out.for_each_element([&](int x, int y) {
        INFO("pooled pixel (" << x << ", " << y << ")");
        REQUIRE(out(x, y) >= 0);
        REQUIRE(out(x, y) < C);
        // Each float average is within float_sum_tolerance(4 terms, their magnitudes) (the
        // scaling by 1/4 is exact) of the exact one; the chosen and the best may each be off by
        // that much.
        double tol = 0, second = -1e30;
        const double best = average(in, x, y, ref(x, y));
        for (int c = 0; c < C; c++) {
            double m = 0;
            const double a = average(in, x, y, c, &m);
            tol = std::max(tol, 2 * apps_ml_test::float_sum_tolerance(4, m));
            if (c != ref(x, y)) second = std::max(second, a);
        }
        CHECK(average(in, x, y, out(x, y)) >= best - tol);
        if (best - second > tol) {
            decided++;
            CHECK(out(x, y) == ref(x, y));
        }
    });
    // Nearly every pixel's maximum is clear of the runner-up by more than the rounding bound.
    CHECK(decided >= (W / 2) * (H / 2) - 2);
    // A wrong channel (the runner-up, what a skipped chunk of channels could give) is outside the
    // bound wherever the maximum is decided: the check above would see it.
}

} // namespace

ML_APP_PTX_TESTS("argmax_pool")
