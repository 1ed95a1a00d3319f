#include "tuner/duration.h"

#include <regex>

namespace gpusched {

std::optional<double> parse_duration(const std::string &text) {
    static const std::regex whole(R"(^\s*((\d+(\.\d+)?)\s*(ms|h|m|s)?\s*)+$)");
    static const std::regex part(R"((\d+(?:\.\d+)?)\s*(ms|h|m|s)?)");
    if (!std::regex_match(text, whole)) return std::nullopt;
    double total = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), part); it != std::sregex_iterator(); ++it) {
        const double v = std::stod((*it)[1]);
        const std::string unit = (*it)[2];
        total += unit == "h" ? v * 3600 : unit == "m" ? v * 60 : unit == "ms" ? v / 1000 : v;
    }
    return total;
}

} // namespace gpusched
