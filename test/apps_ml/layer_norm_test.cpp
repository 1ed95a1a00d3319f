// layer_norm: the CPU build equals the double-precision layer norm within a float bound built from
// the float summation bound (ml_app_checks.h), on activations around 0 and around 1000 (where
// the variance must be taken around the mean); planted faults (each token's last feature missed by
// both sums, what a wrong tail gives; a one-pass float variance) are outside it.
#include "layer_norm_cpu.h"
#include "ml_app_checks.h"

#include <HalideBuffer.h>

#include <cmath>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

const double kU = std::ldexp(1.0, -24);
const double kEps = static_cast<double>(1e-5f); // the app's eps is the float nearest 1e-5

// One token's exact statistics over the features [x0, x0 + n) (by default all of them).
struct TokenStats {
    double mean = 0, var = 0, inv_std = 0, sum_abs = 0;
};

TokenStats exact_stats(const Buffer<float> &in, int y, int count, int n) {
    const int x0 = in.dim(0).min();
    TokenStats t;
    double sum = 0;
    for (int x = x0; x < x0 + count; x++) {
        sum += in(x, y);
        t.sum_abs += std::abs(static_cast<double>(in(x, y)));
    }
    t.mean = sum / n;
    double sq = 0;
    for (int x = x0; x < x0 + count; x++)
        sq += (in(x, y) - t.mean) * (in(x, y) - t.mean);
    t.var = sq / n;
    t.inv_std = 1.0 / std::sqrt(t.var + kEps);
    return t;
}

// The absolute error bound of out(x, y) = d * s * g + b, d = in - mean, s = 1 / sqrt(var + eps),
// computed in float as the app does (u = 2^-24; products of two error terms are below a
// millionth of the terms, and a 1% margin covers them):
//  - the mean: the float summation bound of the n inputs, T1 / n, then the division's rounding:
//    delta = T1 / n + u (|mean| + T1 / n);
//  - each deviation: in - mean_float is off by delta, then rounded: delta + u (|d| + delta);
//  - the variance: the squared computed deviations sum to n (var + delta_m^2) exactly, whatever
//    delta_m (the first-order term 2 delta_m sum(d) vanishes, since the exact deviations sum to
//    zero); the deviation's and the square's roundings add 3u of that, the summation its bound T2,
//    the division u: dvar = delta^2 + 4u (var + delta^2) + T2 / n;
//  - s: var + eps off by dvar / (var + eps) + u relative, halved by the square root, which with
//    the reciprocal adds 2u: eps_s = (dvar / (var + eps) + u) / 2 + 2u;
//  - z = d * s: s (delta + u (|d| + delta)) + |z| (eps_s + u); then out = z * g + b rounds twice:
//    |g| dz + u |z g| + u |out|.
double output_bound(const TokenStats &t, int n, double d, double g, double out) {
    const double t1 = apps_ml_test::float_sum_tolerance(n, t.sum_abs);
    const double delta = t1 / n + kU * (std::abs(t.mean) + t1 / n);
    const double t2 = apps_ml_test::float_sum_tolerance(n, n * (t.var + delta * delta) * (1 + 3 * kU));
    const double dvar = delta * delta + 4 * kU * (t.var + delta * delta) + t2 / n;
    const double eps_s = (dvar / (t.var + kEps) + kU) / 2 + 2 * kU;
    const double z = d * t.inv_std;
    const double dz = t.inv_std * (delta + kU * (std::abs(d) + delta)) + std::abs(z) * (eps_s + kU);
    return 1.01 * (std::abs(g) * dz + kU * std::abs(z * g) + kU * std::abs(out));
}

struct Inputs {
    Buffer<float> in, gamma, beta;
};

// W features x H tokens, activations uniform in [offset - 1, offset + 1), features starting at x0
// and tokens at y0; gamma in [0.5, 2), beta in [-1, 1).
Inputs make_inputs(int W, int H, int x0, int y0, float offset, uint64_t seed) {
    Inputs s{Buffer<float>(W, H), Buffer<float>(W), Buffer<float>(W)};
    s.in.set_min({x0, y0});
    s.gamma.set_min({x0});
    s.beta.set_min({x0});
    apps_test::Rng rng(seed);
    s.in.for_each_value([&](float &v) { v = offset + rng.uniform(-1.0f, 1.0f); });
    s.gamma.for_each_value([&](float &v) { v = rng.uniform(0.5f, 2.0f); });
    s.beta.for_each_value([&](float &v) { v = rng.uniform(-1.0f, 1.0f); });
    return s;
}

Buffer<float> run_cpu(Inputs &s) {
    Buffer<float> out(s.in.dim(0).extent(), s.in.dim(1).extent());
    out.set_min({s.in.dim(0).min(), s.in.dim(1).min()});
    REQUIRE(layer_norm_cpu(s.in, s.gamma, s.beta, out) == 0);
    return out;
}

// How many outputs are outside their bound, and in how many tokens `fault` (outputs computed some
// wrong way) puts at least one output outside it.
struct Verdict {
    int outside = 0, tokens_with_fault_caught = 0;
};

template <typename Fault> Verdict check(const Inputs &s, const Buffer<float> &out, Fault fault) {
    const int n = s.in.dim(0).extent();
    Verdict v;
    for (int y = s.in.dim(1).min(); y <= s.in.dim(1).max(); y++) {
        const TokenStats t = exact_stats(s.in, y, n, n);
        const std::vector<double> wrong = fault(y);
        bool caught = false;
        for (int i = 0; i < n; i++) {
            const int x = s.in.dim(0).min() + i;
            const double d = s.in(x, y) - t.mean;
            const double exact = d * t.inv_std * s.gamma(x) + s.beta(x);
            const double bound = output_bound(t, n, d, s.gamma(x), exact);
            if (!(std::abs(out(x, y) - exact) <= bound) && v.outside++ < 5) {
                UNSCOPED_INFO("out(" << x << ", " << y << ") = " << out(x, y) << ", exact " << exact
                                     << ", bound " << bound);
            }
            if (!(std::abs(wrong[i] - exact) <= bound)) caught = true; // NaN counts as caught
        }
        if (caught) v.tokens_with_fault_caught++;
    }
    return v;
}

TEST_CASE("layer_norm: each token equals the double-precision layer norm within the float bound",
          "[apps_ml][layer_norm]") {
    const int W = 37, H = 11;
    Inputs s = make_inputs(W, H, 0, 0, 0.0f, 31);
    const Buffer<float> out = run_cpu(s);
    // Planted fault: the last feature missed by both sums (a wrong tail), still divided by n.
    const Verdict v = check(s, out, [&](int y) {
        const TokenStats t = exact_stats(s.in, y, W - 1, W);
        std::vector<double> o;
        for (int x = 0; x < W; x++)
            o.push_back((s.in(x, y) - t.mean) * t.inv_std * s.gamma(x) + s.beta(x));
        return o;
    });
    CHECK(v.outside == 0);
    CHECK(v.tokens_with_fault_caught == H);
}

TEST_CASE("layer_norm: tokens around 1000 with unit spread normalize within the bound (variance taken "
          "around the mean)",
          "[apps_ml][layer_norm]") {
    const int W = 37, H = 11, x0 = -4, y0 = 9; // and features and tokens not starting at 0
    Inputs s = make_inputs(W, H, x0, y0, 1000.0f, 32);
    const Buffer<float> out = run_cpu(s);
    // Planted fault: the one-pass variance, sum(x^2) / n - mean^2, in float (serial sums).
    const Verdict v = check(s, out, [&](int y) {
        float sum = 0.0f, sum_sq = 0.0f;
        for (int x = x0; x < x0 + W; x++) {
            sum += s.in(x, y);
            sum_sq += s.in(x, y) * s.in(x, y);
        }
        const float mean = sum / W;
        const float var = sum_sq / W - mean * mean;
        const float inv_std = 1.0f / std::sqrt(var + 1e-5f);
        std::vector<double> o;
        for (int x = x0; x < x0 + W; x++)
            o.push_back((s.in(x, y) - mean) * inv_std * s.gamma(x) + s.beta(x));
        return o;
    });
    CHECK(v.outside == 0);
    CHECK(v.tokens_with_fault_caught == H);
}

TEST_CASE("layer_norm: a constant token normalizes to beta exactly (zero variance, eps keeps it finite)",
          "[apps_ml][layer_norm]") {
    Inputs s = make_inputs(37, 3, 0, 0, 0.0f, 33);
    s.in.for_each_value([](float &v) { v = 3.25f; }); // every partial sum of 3.25s is exact
    const Buffer<float> out = run_cpu(s);
    out.for_each_element([&](int x, int y) { CHECK(out(x, y) == s.beta(x)); });
}

} // namespace

ML_APP_PTX_TESTS("layer_norm")
