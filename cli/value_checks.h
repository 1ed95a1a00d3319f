#pragma once
// Checks on option values, shared by every subcommand: the numbers CLI11's
// own conversion lets through (a negative seed wrapped to 2^64 - 3, NaN past
// CLI::Range, a timeout of 0) refused at parse time with one line naming the
// option, exit 2 like every usage error (docs/user-guide.md, "Exit status";
// test/driver/test_bad_input_table.cpp tries each option's wrong values).

#include <string>

#include <CLI/CLI.hpp>

namespace gpusched::cli {

// A whole number at least `min` (counts: 1; indices: 0).
CLI::Validator whole_number_at_least(long long min);

// A whole number from 0 to 2^64 - 1, as seeds are.
CLI::Validator unsigned_whole_number();

// A finite number at least `min`, or above it when `exclusive`.
CLI::Validator finite_number_at_least(double min, bool exclusive);

// A finite number in [min, max].
CLI::Validator finite_number_in(double min, double max);

// Refuses an empty value given to any option or positional of the parsed
// command (`--gpu ""`, a generator path of ""), naming it. Call after
// CLI::App::parse; throws CLI::ValidationError.
void refuse_empty_values(const CLI::App &app);

} // namespace gpusched::cli
