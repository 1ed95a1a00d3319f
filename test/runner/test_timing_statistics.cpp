// The benchmark harness's stopping rule and the median's confidence
// interval (tuner/measure/runner/timing_statistics.h, issue 56), on times
// made here: no GPU and no process needed.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "test/catch2_compat.h"

#include "tuner/measure/runner/timing_statistics.h"

using namespace gpusched::timing;

TEST_CASE("the median's 95% interval takes the sign test's order statistics", "[timing]") {
    // Binomial(n, 1/2) tables (Conover, table A3): lower rank of the 95%
    // interval for the median.
    CHECK(median_interval_rank(5) == 0); // [min, max] covers 1 - 2^-4 = 93.75%
    CHECK(median_interval_rank(6) == 1);
    CHECK(median_interval_rank(10) == 2);
    CHECK(median_interval_rank(20) == 6);
    CHECK(median_interval_rank(100) == 40);
    std::vector<double> sorted(20);
    for (int i = 0; i < 20; i++)
        sorted[i] = i + 1;
    const MedianInterval m = median_interval(sorted);
    REQUIRE(m.exists);
    CHECK(m.low == 6);
    CHECK(m.high == 15);
    CHECK(median_of_sorted(sorted) == 10.5);
    CHECK_FALSE(median_interval(std::vector<double>{1, 2, 3, 4, 5}).exists);
}

TEST_CASE("the interval covers the true median 95% of the time on skewed times", "[timing]") {
    // Exponential call times (a slow tail), median ln 2; 4000 trials of 30.
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> time(1.0);
    int covered = 0;
    const int trials = 4000;
    for (int t = 0; t < trials; t++) {
        std::vector<double> x(30);
        for (double &v : x)
            v = time(rng);
        std::sort(x.begin(), x.end());
        const MedianInterval m = median_interval(x);
        covered += m.low <= std::log(2.0) && std::log(2.0) <= m.high;
    }
    // n = 30: the interval's exact coverage is 95.7%; three standard errors.
    CHECK(covered / double(trials) == Approx(0.957).margin(0.01));
}

TEST_CASE("timing stops once the median is precise, runs to the cap when it is not, and never before the "
          "minimum reps and time",
          "[timing]") {
    const StoppingRule rule{/*min_time_ms=*/1.0, /*min_reps=*/3, /*max_reps=*/200, /*precision=*/0.02};
    auto run = [&](auto next_time) {
        std::vector<double> times, sorted;
        double total = 0;
        for (;;) {
            times.push_back(next_time());
            total += times.back();
            const StopReason r = should_stop(rule, static_cast<long>(times.size()), total,
                                             [&]() -> const std::vector<double> & {
                                                 sorted = times;
                                                 std::sort(sorted.begin(), sorted.end());
                                                 return sorted;
                                             });
            if (r != StopReason::NotYet) return std::make_pair(r, times.size());
        }
    };
    // Steady 0.05 ms calls: 3 reps are not enough (no interval below 6), nor
    // 1 ms of time before 20 calls; then precise at once.
    auto steady = run([] { return 0.05; });
    CHECK(steady.first == StopReason::Precise);
    CHECK(steady.second == 20);
    // +-30% noise: the interval narrows only with many calls; the cap stops it.
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> noisy(0.7, 1.3);
    auto rough = run([&] { return noisy(rng); });
    CHECK(rough.first == StopReason::Cap);
    CHECK(rough.second == 200);
    // Without a precision asked for, the minimums are enough.
    const StoppingRule plain{1.0, 3, 200, 0};
    std::vector<double> none;
    CHECK(should_stop(plain, 3, 1.0, [&]() -> const std::vector<double> & { return none; }) ==
          StopReason::Enough);
    CHECK(should_stop(plain, 2, 5.0, [&]() -> const std::vector<double> & { return none; }) ==
          StopReason::NotYet);
}
