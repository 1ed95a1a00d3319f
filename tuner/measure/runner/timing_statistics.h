#pragma once
// How many timed calls are enough (issue 56): the median of a sample's call
// times and a distribution-free confidence interval for it, from order
// statistics. GPU call times are skewed (a slow tail of clock ramps, other
// work on the bus), so no normal approximation of the mean is assumed: the
// interval is [x_(k), x_(n+1-k)] of the sorted times, with k the largest rank
// at which a Binomial(n, 1/2) count falls below k with probability at most
// (1 - confidence) / 2 (the sign test's interval; Conover, Practical
// Nonparametric Statistics, sec. 3.2). Below 6 times no 95% interval
// exists (even [min, max] covers the median with probability 1 - 2^(1-n)).
//
// The harness (benchmark_main.cpp) times until the interval's half-width
// is within `precision` of the median, or a cap; header-only, so the
// prebuilt harness and the tests use the same arithmetic.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace gpusched::timing {

inline double median_of_sorted(const std::vector<double> &sorted) {
    const std::size_t n = sorted.size();
    if (n == 0) return 0;
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

// The 1-based rank k of the interval's lower end, or 0 when n times cannot
// give one at this confidence.
inline std::size_t median_interval_rank(std::size_t n, double confidence = 0.95) {
    const double tail = (1.0 - confidence) / 2.0;
    const double log_half_n = static_cast<double>(n) * std::log(0.5);
    const double log_n_fact = std::lgamma(static_cast<double>(n) + 1.0);
    // P(X <= i) for X ~ Binomial(n, 1/2), summed upward while it stays at or
    // below the tail: the lower end is x_(i+1) for the last such i.
    double cumulative = 0;
    std::size_t rank = 0;
    for (std::size_t i = 0; i <= n / 2; i++) {
        const double log_pmf = log_n_fact - std::lgamma(static_cast<double>(i) + 1.0) -
                               std::lgamma(static_cast<double>(n - i) + 1.0) + log_half_n;
        cumulative += std::exp(log_pmf);
        if (cumulative > tail) break;
        rank = i + 1;
    }
    return rank;
}

struct MedianInterval {
    bool exists = false; // false: too few times for the confidence asked
    double low = 0, high = 0;
};

inline MedianInterval median_interval(const std::vector<double> &sorted, double confidence = 0.95) {
    MedianInterval m;
    const std::size_t k = median_interval_rank(sorted.size(), confidence);
    if (k == 0) return m;
    m.exists = true;
    m.low = sorted[k - 1];
    m.high = sorted[sorted.size() - k];
    return m;
}

// The 95% interval exists and reaches no further from the median than
// `precision` times the median on either side.
inline bool median_precise(const std::vector<double> &sorted, double precision) {
    const MedianInterval m = median_interval(sorted);
    const double median = median_of_sorted(sorted);
    return m.exists && median - m.low <= precision * median && m.high - median <= precision * median;
}

// When to stop timing: at max_reps; otherwise once min_reps calls and
// min_time_ms of timed calls are reached and, with a precision asked for
// (> 0), the median is that precise. `sorted_times` is only read when the
// other conditions hold, so a caller may sort lazily.
struct StoppingRule {
    double min_time_ms = 100;
    long min_reps = 3, max_reps = 1000;
    double precision = 0.02; // 0: no precision asked
};

enum class StopReason { NotYet, Enough, Precise, Cap };

template <typename SortedTimes>
StopReason should_stop(const StoppingRule &rule, long reps, double timed_ms,
                       const SortedTimes &sorted_times) {
    if (reps >= rule.max_reps) return StopReason::Cap;
    if (reps < rule.min_reps || timed_ms < rule.min_time_ms) return StopReason::NotYet;
    if (rule.precision <= 0) return StopReason::Enough;
    return median_precise(sorted_times(), rule.precision) ? StopReason::Precise : StopReason::NotYet;
}

} // namespace gpusched::timing
