#include "tuner/generate/sample_selection.h"

#include <algorithm>
#include <limits>

namespace gpusched {

std::vector<std::size_t> rank_by_prediction(const std::vector<SelectionCandidate> &c) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < c.size(); ++i)
        if (c[i].usable) order.push_back(i);
    auto key = [&](std::size_t i) {
        return c[i].predicted_cost.value_or(std::numeric_limits<double>::infinity());
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    return order;
}

std::optional<std::size_t> choose_sample(const std::vector<SelectionCandidate> &c) {
    const auto ranked = rank_by_prediction(c);
    if (ranked.empty()) return std::nullopt;
    for (std::size_t i : ranked)
        if (c[i].spill_bytes == 0) return i;
    long least = std::numeric_limits<long>::max();
    for (std::size_t i : ranked)
        least = std::min(least, c[i].spill_bytes);
    for (std::size_t i : ranked)
        if (static_cast<double>(c[i].spill_bytes) <= kSpillTolerance * static_cast<double>(least)) return i;
    return ranked.front();
}

} // namespace gpusched
