// Running a program from the group B app tests, through gpusched's own
// run_process (tuner/subprocess.h: argv, no shell, its own process group, a
// timeout that kills the group). What the tests read is stdout and stderr
// together, which is also kept in a log file beside the test's outputs.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tuner/subprocess.h"

namespace appsB {

struct ProcessResult {
    int exit_code = -1; // -1 when it did not start, was killed by a signal or timed out
    bool timed_out = false;
    std::string output; // stdout, then stderr
};

inline std::string read_file(const std::filesystem::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline ProcessResult run_process(const std::vector<std::string> &argv, const std::filesystem::path &log,
                                 int timeout_s) {
    gpusched::ProcessSpec spec;
    spec.argv = argv;
    spec.timeout = std::chrono::seconds(timeout_s);
    const gpusched::ProcessResult r = gpusched::run_process(spec);
    ProcessResult result;
    result.timed_out = r.timed_out;
    if (r.started && !r.timed_out && r.term_signal == 0) result.exit_code = r.exit_code;
    result.output = r.started ? r.out + r.err : r.start_error;
    if (!r.ok()) result.output += "\n(" + r.describe_failure() + ")";
    std::ofstream(log, std::ios::binary) << result.output;
    return result;
}

} // namespace appsB
