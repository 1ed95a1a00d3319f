#pragma once
// What `gpusched tune --mode top5` prints: the table of the benchmarked
// samples and baselines (with each median over the roofline where the times
// are a GPU's), and the --json report.

#include <optional>
#include <string>

#include "tuner/modes/top5.h"

namespace gpusched::cli {

// Milliseconds to four significant digits, "-" for none.
std::string format_ms(const std::optional<double> &v);

void print_top5_table(const Top5Result &r);
void print_top5_json(const Top5Options &opt, const Top5Result &r);

} // namespace gpusched::cli
