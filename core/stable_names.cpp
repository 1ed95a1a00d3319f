#include "core/stable_names.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>

namespace gpusched {

namespace {

constexpr const char *kIntermediateSuffix = "_intm";

// For "out_intm$7": the Func ("out") and its order (8); "out_intm" (Halide
// gives the first name of a kind without a counter) comes first, with 0;
// false for any other name.
bool parse_intermediate(const std::string &name, std::string &func, uint64_t &counter) {
    const size_t suffix = std::char_traits<char>::length(kIntermediateSuffix);
    if (name.size() > suffix && name.compare(name.size() - suffix, suffix, kIntermediateSuffix) == 0) {
        func = name.substr(0, name.size() - suffix);
        counter = 0;
        return true;
    }
    const size_t dollar = name.rfind('$');
    if (dollar == std::string::npos || dollar + 1 == name.size() || dollar < suffix ||
        name.compare(dollar - suffix, suffix, kIntermediateSuffix) != 0)
        return false;
    for (size_t i = dollar + 1; i < name.size(); i++)
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    func = name.substr(0, dollar - suffix);
    counter = std::stoull(name.substr(dollar + 1)) + 1;
    return true;
}

} // namespace

std::map<std::string, std::string> stable_func_names(const std::vector<std::string> &halide_names) {
    std::map<std::string, std::string> stable;
    std::vector<std::pair<std::string, std::pair<uint64_t, std::string>>> parsed; // Func, {order, name}
    for (const std::string &name : halide_names) {
        std::string func;
        uint64_t counter = 0;
        if (parse_intermediate(name, func, counter))
            parsed.push_back({func, {counter, name}});
        else
            stable[name] = name;
    }
    // Halide writes a name it has given before with every '$' as '_'
    // before its counter: the second intermediate of "sum$1" is
    // "sum_1_intm$4". Such a prefix names the Func that has it with '_' in
    // place of '$' where exactly one does and none is called the prefix.
    std::map<std::string, std::vector<std::string>> by_underscored;
    for (const auto &entry : stable) {
        if (entry.first.find('$') == std::string::npos) continue;
        std::string underscored = entry.first;
        std::replace(underscored.begin(), underscored.end(), '$', '_');
        by_underscored[underscored].push_back(entry.first);
    }
    std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> intermediates; // by Func
    for (auto &[func, order] : parsed) {
        auto written = by_underscored.find(func);
        const bool renamed =
            !stable.count(func) && written != by_underscored.end() && written->second.size() == 1;
        intermediates[renamed ? written->second[0] : func].push_back(order);
    }
    std::map<std::string, int> uses;
    for (const auto &[name, s] : stable)
        uses[s]++;
    for (auto &[func, list] : intermediates) {
        std::sort(list.begin(), list.end());
        std::vector<std::string> names;
        for (size_t k = 0; k < list.size(); k++)
            names.push_back(func + kIntermediateSuffix + (k == 0 ? "" : std::to_string(k + 1)));
        // A user's own Func may already be called "out_intm2": then these
        // keep Halide's names, unique if not stable.
        const bool clash =
            std::any_of(names.begin(), names.end(), [&](const std::string &n) { return uses.count(n); });
        for (size_t k = 0; k < list.size(); k++) {
            stable[list[k].second] = clash ? list[k].second : names[k];
            uses[stable[list[k].second]]++;
        }
    }
    return stable;
}

} // namespace gpusched
