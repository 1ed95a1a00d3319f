#include "cli/value_checks.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace gpusched::cli {

namespace {

template <typename T> bool parse_whole(const std::string &text, T &value) {
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end;
}

bool parse_number(const std::string &text, double &value) {
    if (text.empty()) return false;
    char *end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size();
}

std::string shown(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

} // namespace

CLI::Validator whole_number_at_least(long long min) {
    return CLI::Validator(
        [min](std::string &text) -> std::string {
            long long v = 0;
            if (!parse_whole(text, v)) return "'" + text + "' is not a whole number";
            if (v < min) return "must be at least " + std::to_string(min) + ", not " + text;
            return "";
        },
        "INT >= " + std::to_string(min));
}

CLI::Validator unsigned_whole_number() {
    return CLI::Validator(
        [](std::string &text) -> std::string {
            std::uint64_t v = 0;
            if (!parse_whole(text, v))
                return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
            return "";
        },
        "");
}

CLI::Validator finite_number_at_least(double min, bool exclusive) {
    return CLI::Validator(
        [min, exclusive](std::string &text) -> std::string {
            double v = 0;
            if (!parse_number(text, v) || !std::isfinite(v)) return "'" + text + "' is not a finite number";
            if (exclusive ? v <= min : v < min)
                return std::string("must be ") + (exclusive ? "above " : "at least ") + shown(min) +
                       ", not " + text;
            return "";
        },
        std::string(exclusive ? "> " : ">= ") + shown(min));
}

CLI::Validator finite_number_in(double min, double max) {
    return CLI::Validator(
        [min, max](std::string &text) -> std::string {
            double v = 0;
            if (!parse_number(text, v) || !std::isfinite(v)) return "'" + text + "' is not a finite number";
            if (v < min || v > max) return "must be in [" + shown(min) + ", " + shown(max) + "], not " + text;
            return "";
        },
        "in [" + shown(min) + ", " + shown(max) + "]");
}

void refuse_empty_values(const CLI::App &app) {
    for (const CLI::Option *option : app.get_options()) {
        if (option->get_type_size() == 0 || option->count() == 0) continue; // flags, options not given
        for (const std::string &value : option->results())
            if (value.empty()) throw CLI::ValidationError(option->get_name(), "an empty value is not one");
    }
    for (const CLI::App *sub : app.get_subcommands())
        refuse_empty_values(*sub);
}

} // namespace gpusched::cli
