// per_channel_mean: the CPU build equals the double-precision mean of each channel over x, y and
// the batch within the float summation bound (ml_app_checks.h) plus the division's rounding, on
// odd sizes and on coordinates that do not start at 0; a planted fault (the batch's last image
// missed, what a wrong tail gives) is outside it.
#include "ml_app_checks.h"
#include "per_channel_mean_cpu.h"

#include <HalideBuffer.h>

#include <cmath>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

// X x Y x C x N input starting at `mins`, values uniform in [c - 1, c + 1) for channel index
// c - mins[2] (so a channel read in place of another is off by at least 1); checks every channel's
// mean, and that missing the last image of the batch would be outside the bound in every channel.
void check_means(int X, int Y, int C, int N, const std::vector<int> &mins, uint64_t seed) {
    Buffer<float> in(X, Y, C, N);
    in.set_min(mins);
    apps_test::Rng rng(seed);
    in.for_each_element([&](int x, int y, int c, int n) {
        in(x, y, c, n) = static_cast<float>(c - mins[2]) + rng.uniform(-1.0f, 1.0f);
    });
    Buffer<float> out(C);
    out.set_min({mins[2]});
    REQUIRE(per_channel_mean_cpu(in, out) == 0);

    const int64_t terms = int64_t(X) * Y * N;
    int faults_caught = 0;
    for (int c = mins[2]; c < mins[2] + C; c++) {
        double sum = 0, magnitudes = 0, last_image = 0;
        for (int n = mins[3]; n < mins[3] + N; n++) {
            for (int y = mins[1]; y < mins[1] + Y; y++) {
                for (int x = mins[0]; x < mins[0] + X; x++) {
                    sum += in(x, y, c, n);
                    magnitudes += std::abs(static_cast<double>(in(x, y, c, n)));
                    if (n == mins[3] + N - 1) last_image += in(x, y, c, n);
                }
            }
        }
        const double mean = sum / static_cast<double>(terms);
        // The sum's bound, divided by the number of terms (exact as a float below 2^24), and the
        // division's own rounding, u |mean| (u = 2^-24), with a 1% margin for second-order terms.
        const double tol =
            1.01 * (apps_ml_test::float_sum_tolerance(terms, magnitudes) / static_cast<double>(terms) +
                    std::ldexp(std::abs(mean), -24));
        INFO("channel " << c << ": got " << out(c) << ", exact " << mean << ", bound " << tol);
        CHECK(std::abs(out(c) - mean) <= tol);
        if (std::abs(last_image) / static_cast<double>(terms) > tol) faults_caught++;
    }
    CHECK(faults_caught == C);
}

TEST_CASE("per_channel_mean: each channel equals the double-precision mean over x, y and the batch "
          "within the float summation bound",
          "[apps_ml][per_channel_mean]") {
    check_means(13, 11, 5, 3, {0, 0, 0, 0}, 41);
}

TEST_CASE("per_channel_mean: reduces over exactly the input's own x, y and batch ranges when they do not "
          "start at 0",
          "[apps_ml][per_channel_mean]") {
    check_means(9, 7, 3, 5, {-3, 4, 2, -1}, 42);
}

TEST_CASE("per_channel_mean: a single-image batch of one pixel is that pixel",
          "[apps_ml][per_channel_mean]") {
    Buffer<float> in(1, 1, 4, 1), out(4);
    for (int c = 0; c < 4; c++)
        in(0, 0, c, 0) = 0.5f * c - 1.25f;
    REQUIRE(per_channel_mean_cpu(in, out) == 0);
    for (int c = 0; c < 4; c++)
        CHECK(out(c) == 0.5f * c - 1.25f);
}

} // namespace

ML_APP_PTX_TESTS("per_channel_mean")
