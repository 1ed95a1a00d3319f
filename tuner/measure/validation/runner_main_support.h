#pragma once
// What both runner programs (the validation runner, output_runner_main.cpp,
// and the benchmark harness, runner/benchmark_main.cpp) need around Halide's
// RunGen.h: the hook by which the compiled pipeline's registration file hands
// over its entry point and metadata, and RunGen's logging. Include it once,
// after RunGen.h, in the file that defines main().

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpusched::runner_main {

struct RegisteredFilter {
    int (*argv_call)(void **) = nullptr;
    const halide_filter_metadata_t *metadata = nullptr;
};
inline RegisteredFilter registered;

// Exit status when RunGen itself cannot run the pipeline.
constexpr int kExitPipelineFailed = 3;

inline void log_to_stderr(const std::string &s) {
    std::fputs(s.c_str(), stderr);
}
inline void log_nothing(const std::string &) {}
[[noreturn]] inline void log_and_exit(const std::string &s) {
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
    std::_Exit(kExitPipelineFailed);
}

} // namespace gpusched::runner_main

namespace Halide::RunGen {
// RunGen.h leaves its logging to the client: warnings and failures to
// stderr (a failure ends the process), progress chatter nowhere.
Logger log() {
    using namespace gpusched::runner_main;
    return {log_nothing, log_nothing, log_to_stderr, log_and_exit};
}
} // namespace Halide::RunGen

extern "C" void halide_register_argv_and_metadata(int (*filter_argv_call)(void **),
                                                  const halide_filter_metadata_t *filter_metadata,
                                                  const char *const *extra_key_value_pairs) {
    (void)extra_key_value_pairs;
    gpusched::runner_main::registered.argv_call = filter_argv_call;
    gpusched::runner_main::registered.metadata = filter_metadata;
}
