#include "costmodel/ranking_metrics.h"

#include <algorithm>
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

} // namespace gpusched
