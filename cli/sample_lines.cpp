#include "cli/sample_lines.h"

#include <fmt/format.h>

namespace gpusched {

std::string sample_progress(const OneShotSample &s) {
    if (s.generator.ok())
        return s.predicted_cost ? fmt::format("predicted {:.4g}", *s.predicted_cost)
                                : std::string("compiled");
    return s.generator.failure == GeneratorFailure::TimedOut ? "timed out (why: at the end)"
                                                             : "failed (why: at the end)";
}

std::vector<std::string> sample_failure_lines(const std::vector<OneShotSample> &samples) {
    std::vector<std::pair<std::string, std::vector<int>>> by_message; // in first-seen order
    for (const OneShotSample &s : samples) {
        if (s.generator.ok()) continue;
        auto it = by_message.begin();
        while (it != by_message.end() && it->first != s.generator.message)
            ++it;
        if (it == by_message.end()) it = by_message.insert(it, {s.generator.message, {}});
        it->second.push_back(s.index);
    }
    std::vector<std::string> lines;
    for (const auto &[message, indices] : by_message) {
        std::string which;
        for (int i : indices)
            which += (which.empty() ? "" : ", ") + std::to_string(i);
        lines.push_back(
            fmt::format("{} {} failed: {}", indices.size() == 1 ? "sample" : "samples", which, message));
    }
    return lines;
}

} // namespace gpusched
