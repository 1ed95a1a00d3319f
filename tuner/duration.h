#pragma once
// Durations as people write them on a command line or in a config file:
// "90", "90s", "15m", "2h", "1h30m", "500ms". One parser for `tune
// --time-budget` and the nightly config's budget.

#include <optional>
#include <string>

namespace gpusched {

// Seconds, or none when the text is not a duration (a bare number is seconds).
std::optional<double> parse_duration(const std::string &text);

} // namespace gpusched
