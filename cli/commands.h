#pragma once
// The subcommands of `gpusched`. Each registers its options on the CLI11 app
// and returns the function that runs it; cli/ only parses and dispatches,
// the work happens in tuner/, db/ and costmodel/.

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace gpusched::cli {

// Options every subcommand shares.
struct GlobalOptions {
    int verbosity = 0;
    bool quiet = false;
    bool json = false;
    std::string log_file;
};

// A subcommand's action: returns the process exit code.
using Action = std::function<int()>;

// Exit codes, documented in docs/user-guide.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;       // bad input, failed generator, bad DB, ...
inline constexpr int kExitUnavailable = 2; // needs a GPU / feature not available here
inline constexpr int kExitUsage = 2;       // the command line is wrong (an unknown option, a bad value)
// Stopped by SIGINT or SIGTERM: 128 + SIGINT, as shells report it.
inline constexpr int kExitInterrupted = 130;

Action add_oneshot_command(CLI::App &app, const GlobalOptions &global);
Action add_tune_command(CLI::App &app, const GlobalOptions &global);
Action add_db_command(CLI::App &app, const GlobalOptions &global);
Action add_retrain_command(CLI::App &app, const GlobalOptions &global);
Action add_learning_command(CLI::App &app, const GlobalOptions &global);
Action add_nightly_command(CLI::App &app, const GlobalOptions &global);
Action add_gpus_command(CLI::App &app, const GlobalOptions &global);
Action add_report_command(CLI::App &app, const GlobalOptions &global);
// Records the command line for the report it writes.
Action add_bench_command(CLI::App &app, const GlobalOptions &global, int argc, char **argv);
Action add_fuzz_command(CLI::App &app, const GlobalOptions &global, int argc, char **argv);
// Run by the slurm executor's jobs on their nodes (tuner/measure/executor/worker.h).
Action add_worker_command(CLI::App &app, const GlobalOptions &global);

// The version banner (`gpusched --version`).
std::string version_text();
std::string version_string();

} // namespace gpusched::cli
