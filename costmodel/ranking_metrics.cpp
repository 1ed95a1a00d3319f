#include "costmodel/ranking_metrics.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gpusched {
namespace {

void check_sizes(const std::vector<double> &a, const std::vector<double> &b) {
    if (a.size() != b.size())
        throw std::invalid_argument("ranking metrics: predicted and measured differ in length");
}

} // namespace

double best_predicted_slowdown(const std::vector<double> &predicted, const std::vector<double> &measured) {
    check_sizes(predicted, measured);
    if (predicted.empty()) return 0.0;
    const auto best_pred = std::min_element(predicted.begin(), predicted.end()) - predicted.begin();
    const double best = *std::min_element(measured.begin(), measured.end());
    return best > 0 ? measured[static_cast<std::size_t>(best_pred)] / best - 1.0 : 0.0;
}

std::optional<double> pairwise_accuracy(const std::vector<double> &predicted,
                                        const std::vector<double> &measured) {
    check_sizes(predicted, measured);
    double agree = 0;
    long pairs = 0;
    for (std::size_t i = 0; i < measured.size(); ++i)
        for (std::size_t j = i + 1; j < measured.size(); ++j) {
            if (measured[i] == measured[j]) continue;
            ++pairs;
            if (predicted[i] == predicted[j])
                agree += 0.5;
            else if ((predicted[i] < predicted[j]) == (measured[i] < measured[j]))
                agree += 1;
        }
    if (pairs == 0) return std::nullopt;
    return agree / static_cast<double>(pairs);
}

double top_k_score(const std::vector<double> &predicted, const std::vector<double> &measured, std::size_t k) {
    check_sizes(predicted, measured);
    if (measured.empty() || k == 0) throw std::invalid_argument("top_k_score: needs samples and k >= 1");
    std::vector<std::size_t> order(predicted.size());
    std::iota(order.begin(), order.end(), 0);
    // Stable: of equal predictions, the earlier sample first (deterministic).
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return predicted[a] < predicted[b]; });
    double best_of_top = measured[order[0]];
    for (std::size_t i = 1; i < std::min(k, order.size()); ++i)
        best_of_top = std::min(best_of_top, measured[order[i]]);
    const double best = *std::min_element(measured.begin(), measured.end());
    return best_of_top > 0 ? best / best_of_top : 1.0;
}

} // namespace gpusched
