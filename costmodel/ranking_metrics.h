#pragma once
// The cost of trusting the model's favourite: how much slower the sample the
// model ranks best is than the truly best one. (Rank correlations, the
// other half of how well predictions order samples, are db/rank_correlation.h:
// one implementation for the database's statistics and training alike.)

#include <cstddef>
#include <optional>
#include <vector>

namespace gpusched {

// measured[argmin predicted] / min measured - 1: how much slower the sample
// the model ranks best is than the truly best one (0 = it picked the best).
double best_predicted_slowdown(const std::vector<double> &predicted, const std::vector<double> &measured);

// Of the pairs of samples whose measured times differ, the share the
// predictions order the same way (a tie in the prediction counts half).
// Empty when no pair's times differ.
std::optional<double> pairwise_accuracy(const std::vector<double> &predicted,
                                        const std::vector<double> &measured);

// TenSet's top-k score: the best measured time over the best measured time
// among the k samples predicted fastest, in (0, 1]; 1 when the true best is
// among them. k larger than the set takes the whole set.
double top_k_score(const std::vector<double> &predicted, const std::vector<double> &measured, std::size_t k);

} // namespace gpusched
