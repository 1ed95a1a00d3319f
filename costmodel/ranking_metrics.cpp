#include "costmodel/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpusched {
namespace {

void check_sizes(const std::vector<double> &a, const std::vector<double> &b) {
    if (a.size() != b.size()) throw std::invalid_argument("ranking metrics: predicted and measured differ in length");
}

std::vector<double> average_ranks(const std::vector<double> &v) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> ranks(v.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
        const double r = 0.5 * static_cast<double>(i + j);
        for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = r;
        i = j + 1;
    }
    return ranks;
}

double pearson(const std::vector<double> &a, const std::vector<double> &b) {
    const double n = static_cast<double>(a.size());
    const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
    const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    if (saa <= 0 || sbb <= 0) return 0.0;
    return sab / std::sqrt(saa * sbb);
}

} // namespace

double spearman_correlation(const std::vector<double> &predicted, const std::vector<double> &measured) {
    check_sizes(predicted, measured);
    if (predicted.size() < 2) return 0.0;
    return pearson(average_ranks(predicted), average_ranks(measured));
}

double kendall_tau(const std::vector<double> &predicted, const std::vector<double> &measured) {
    check_sizes(predicted, measured);
    const std::size_t n = predicted.size();
    double concordant = 0, discordant = 0, ties_p = 0, ties_m = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const double dp = predicted[i] - predicted[j];
            const double dm = measured[i] - measured[j];
            if (dp == 0 && dm == 0) continue;
            if (dp == 0) { ties_p += 1; continue; }
            if (dm == 0) { ties_m += 1; continue; }
            if ((dp > 0) == (dm > 0)) concordant += 1; else discordant += 1;
        }
    }
    const double denom = std::sqrt((concordant + discordant + ties_p) * (concordant + discordant + ties_m));
    return denom > 0 ? (concordant - discordant) / denom : 0.0;
}

double best_predicted_slowdown(const std::vector<double> &predicted, const std::vector<double> &measured) {
    check_sizes(predicted, measured);
    if (predicted.empty()) return 0.0;
    const auto best_pred = std::min_element(predicted.begin(), predicted.end()) - predicted.begin();
    const double best = *std::min_element(measured.begin(), measured.end());
    return best > 0 ? measured[static_cast<std::size_t>(best_pred)] / best - 1.0 : 0.0;
}

} // namespace gpusched
