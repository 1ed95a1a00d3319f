#include "db/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpusched::db {
namespace {

// 1-based ranks, ties sharing the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double> &v) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
    std::vector<double> rank(v.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
            ++j;
        const double r = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
        for (std::size_t k = i; k <= j; ++k)
            rank[order[k]] = r;
        i = j + 1;
    }
    return rank;
}

void check_paired(const std::vector<double> &a, const std::vector<double> &b) {
    if (a.size() != b.size()) throw std::invalid_argument("rank correlation: the two sides differ in length");
}

} // namespace

std::optional<double> spearman_rho(const std::vector<double> &a, const std::vector<double> &b) {
    check_paired(a, b);
    const std::size_t n = a.size();
    if (n < 2) return std::nullopt;
    const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
    const double mean = (static_cast<double>(n) + 1.0) / 2.0;
    double cov = 0, va = 0, vb = 0;
    for (std::size_t i = 0; i < n; ++i) {
        cov += (ra[i] - mean) * (rb[i] - mean);
        va += (ra[i] - mean) * (ra[i] - mean);
        vb += (rb[i] - mean) * (rb[i] - mean);
    }
    if (va == 0 || vb == 0) return std::nullopt;
    return cov / std::sqrt(va * vb);
}

std::optional<double> kendall_tau_b(const std::vector<double> &a, const std::vector<double> &b) {
    check_paired(a, b);
    const std::size_t n = a.size();
    if (n < 2) return std::nullopt;
    // O(n^2): a run has at most a few hundred measured samples.
    double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const double da = a[i] - a[j], db = b[i] - b[j];
            if (da == 0 && db == 0) continue;
            if (da == 0)
                ++ties_a;
            else if (db == 0)
                ++ties_b;
            else if ((da > 0) == (db > 0))
                ++concordant;
            else
                ++discordant;
        }
    }
    const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
    if (denom == 0) return std::nullopt;
    return (concordant - discordant) / denom;
}

} // namespace gpusched::db
