// softmax: the CPU build equals the double-precision row softmax within a float bound built from
// the float summation bound (ml_app_checks.h), on logits around 0 and on logits around 200 (where
// exp without the row max would overflow), over columns that start at a nonzero index; a planted
// fault (each row's last column missed by the sum, what a wrong tail gives) is outside it.
#include "ml_app_checks.h"
#include "softmax_cpu.h"

#include <HalideBuffer.h>

#include <cmath>
#include <vector>

namespace {

// The relative error bound of one output, out = e / s with e = exp(in - max) and s the row's sum
// of e over n columns, whose values span `range` (max - min):
//  - in - max is one float subtraction, off by at most u * range (u = 2^-24); exp turns an
//    absolute error of its argument into the same relative error of its result, and exp itself
//    (libm's expf on the host, libdevice on CUDA) is within 4 ulp, 8 u relative: each e within
//    eps_e = (range + 8) u;
//  - s adds n such terms: eps_e relative, plus the float summation bound of the n additions;
//  - the division rounds once more, u.
// The errors of e and of s add: 2 eps_e + sum bound / s + u (products of two of them are below a
// millionth of these, and a 1% margin covers them).
double softmax_relative_bound(int n, double range, double row_sum) {
    const double u = std::ldexp(1.0, -24);
    const double eps_e = (range + 8.0) * u;
    return 1.01 * (2.0 * eps_e + apps_ml_test::float_sum_tolerance(n, row_sum) / row_sum + u);
}

struct RowReference {
    std::vector<double> out; // the exact softmax of the row's float values
    double sum = 0;          // sum of exp(in - max)
    double range = 0;        // max - min
    double last_term = 0;    // exp(in - max) of the row's last column
};

RowReference reference_row(const Halide::Runtime::Buffer<float> &in, int y) {
    const int x0 = in.dim(0).min(), x1 = in.dim(0).max();
    double mx = in(x0, y), mn = in(x0, y);
    for (int x = x0; x <= x1; x++) {
        mx = std::max(mx, static_cast<double>(in(x, y)));
        mn = std::min(mn, static_cast<double>(in(x, y)));
    }
    RowReference r;
    r.range = mx - mn;
    for (int x = x0; x <= x1; x++)
        r.sum += std::exp(static_cast<double>(in(x, y)) - mx);
    for (int x = x0; x <= x1; x++)
        r.out.push_back(std::exp(static_cast<double>(in(x, y)) - mx) / r.sum);
    r.last_term = std::exp(static_cast<double>(in(x1, y)) - mx);
    return r;
}

// Runs the CPU build on W x H logits, uniform in [offset - 4, offset + 4), with columns starting
// at x0 and rows at y0; checks every output against the bound, and that missing the last column
// of a row's sum (every output of the row then off by last_term / (sum - last_term) relative)
// would be outside it in every row.
void check_softmax(int W, int H, int x0, int y0, float offset, uint64_t seed) {
    Halide::Runtime::Buffer<float> in(W, H), out(W, H);
    in.set_min({x0, y0});
    out.set_min({x0, y0});
    apps_test::Rng rng(seed);
    in.for_each_value([&](float &v) { v = offset + rng.uniform(-4.0f, 4.0f); });
    REQUIRE(softmax_cpu(in, out) == 0);

    int outside = 0, faults_caught = 0;
    for (int y = y0; y < y0 + H; y++) {
        const RowReference ref = reference_row(in, y);
        const double rel = softmax_relative_bound(W, ref.range, ref.sum);
        double row_total = 0;
        for (int i = 0; i < W; i++) {
            const float got = out(x0 + i, y);
            row_total += got;
            if (!(std::abs(got - ref.out[i]) <= rel * ref.out[i])) {
                if (outside++ < 5) {
                    UNSCOPED_INFO("out(" << x0 + i << ", " << y << ") = " << got << ", exact " << ref.out[i]
                                         << ", relative bound " << rel);
                }
            }
        }
        // Each row sums to 1, within the sum of its outputs' bounds (rel times the exact sum, 1).
        CHECK(std::abs(row_total - 1.0) <= rel);
        if (ref.last_term / (ref.sum - ref.last_term) > rel) faults_caught++;
    }
    CHECK(outside == 0);
    CHECK(faults_caught == H);
}

TEST_CASE("softmax: each row equals the double-precision softmax within the float bound",
          "[apps_ml][softmax]") {
    check_softmax(37, 11, 0, 0, 0.0f, 21);
}

TEST_CASE("softmax: logits near 200, whose exp overflows float, give the same softmax (the row max "
          "is subtracted first)",
          "[apps_ml][softmax]") {
    // exp(88.8) is above the largest float: without the max, every output would be NaN or 0.
    check_softmax(37, 11, 0, 0, 200.0f, 22);
}

TEST_CASE("softmax: a row whose columns start at a nonzero index is reduced over exactly its own columns",
          "[apps_ml][softmax]") {
    check_softmax(29, 5, -7, 13, 1.5f, 23);
}

TEST_CASE("softmax: a one-column row is 1", "[apps_ml][softmax]") {
    Halide::Runtime::Buffer<float> in(1, 3), out(1, 3);
    in(0, 0) = -3.0f;
    in(0, 1) = 0.0f;
    in(0, 2) = 150.0f;
    REQUIRE(softmax_cpu(in, out) == 0);
    for (int y = 0; y < 3; y++)
        CHECK(out(0, y) == 1.0f);
}

} // namespace

ML_APP_PTX_TESTS("softmax")
