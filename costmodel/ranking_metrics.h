#pragma once
// The cost of trusting the model's favourite: how much slower the sample the
// model ranks best is than the truly best one. (Rank correlations, the
// other half of how well predictions order samples, are db/rank_correlation.h:
// one implementation for the database's statistics and training alike.)

#include <vector>

namespace gpusched {

// measured[argmin predicted] / min measured - 1: how much slower the sample
// the model ranks best is than the truly best one (0 = it picked the best).
double best_predicted_slowdown(const std::vector<double> &predicted, const std::vector<double> &measured);

} // namespace gpusched
