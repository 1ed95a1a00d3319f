#pragma once
// How well predictions order samples, the quantity the search cares about
// (it only compares costs): rank correlations and the cost of trusting the
// model's favourite. All take predicted and measured values of the same
// samples, in the same order.
//
// Invariants: correlations lie in [-1, 1] (0 when either side is constant or
// there are fewer than 2 samples); ties get average ranks (Spearman) and
// count as neither concordant nor discordant (Kendall tau-b).

#include <vector>

namespace gpusched {

double spearman_correlation(const std::vector<double> &predicted, const std::vector<double> &measured);
double kendall_tau(const std::vector<double> &predicted, const std::vector<double> &measured);
// measured[argmin predicted] / min measured - 1: how much slower the sample
// the model ranks best is than the truly best one (0 = it picked the best).
double best_predicted_slowdown(const std::vector<double> &predicted, const std::vector<double> &measured);

} // namespace gpusched
