#pragma once
// Which compiled sample One Shot keeps (Anderson et al. 2021, sec. 6.1):
// the best predicted among those ptxas reports as not spilling registers; if
// every one spills, the best predicted among those within 50% of the least
// spilling one. Samples ptxas could not check count as not spilling (the
// report says so), failed samples are never chosen.

#include <optional>
#include <vector>

namespace gpusched {

struct SelectionCandidate {
    bool usable = false;                  // compiled, and ptxas did not fail
    std::optional<double> predicted_cost; // lower is better; missing ranks last
    long spill_bytes = 0;                 // stores + loads over all kernels
};

// The paper's "within 50% of the least spilling".
inline constexpr double kSpillTolerance = 1.5;

// Index of the chosen candidate, or nullopt if none is usable. Ties go to the
// lower index (the beam search sample comes first).
std::optional<std::size_t> choose_sample(const std::vector<SelectionCandidate> &candidates);

// Candidate indices ordered best first by predicted cost (usable only).
std::vector<std::size_t> rank_by_prediction(const std::vector<SelectionCandidate> &candidates);

} // namespace gpusched
