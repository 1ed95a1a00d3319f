#pragma once
// Rank correlations between a cost model's predictions and measured times,
// for `gpusched db stats`: Spearman's rho (Pearson correlation of the ranks,
// tied values sharing their average rank) and Kendall's tau-b (concordant
// minus discordant pairs, corrected for ties). Both lie in [-1, 1]; 1 means
// the predictions order the samples exactly as the measurements do.
// nullopt when fewer than two pairs, or when one side is constant (it orders
// nothing); std::invalid_argument when the two sides differ in length. The
// only implementation: the database's statistics and the cost model's
// training reports use these.

#include <optional>
#include <vector>

namespace gpusched::db {

std::optional<double> spearman_rho(const std::vector<double> &a, const std::vector<double> &b);
std::optional<double> kendall_tau_b(const std::vector<double> &a, const std::vector<double> &b);

} // namespace gpusched::db
