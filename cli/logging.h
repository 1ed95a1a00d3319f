#pragma once
// spdlog set-up for the CLI: diagnostics go to stderr (-v more, -q less) and,
// with --log-file, also to a file at debug level; stdout is kept for results.

#include <string>

namespace gpusched::cli {

// Throws std::runtime_error if the log file cannot be opened.
void setup_logging(int verbosity, bool quiet, const std::string &log_file);

// For jobs nobody watches (`gpusched nightly`): every sink's lines get a
// date and time, and `log_file` (if not empty) is appended to at debug
// level. Throws std::runtime_error if the file cannot be opened.
void add_timestamped_log_file(const std::string &log_file);

} // namespace gpusched::cli
