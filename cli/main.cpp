// gpusched: finds fast CUDA schedules for Halide pipelines. This file only
// parses the command line and dispatches to a subcommand (cli/commands.h).

#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/value_checks.h"

int main(int argc, char **argv) {
    using namespace gpusched::cli;
    CLI::App app{"gpusched: finds fast CUDA schedules for Halide pipelines (Anderson et al. 2021, on Halide "
                 "19, 14 or 21)"};
    app.require_subcommand(1);
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast); // later flags win
    app.fallthrough(); // global flags (--json, -v) may follow the subcommand
    // A usage error is one line, like every other error (CLI11's default adds
    // a second, "Run with --help for more information.").
    app.failure_message([](const CLI::App *, const CLI::Error &e) {
        return "error: " + std::string(e.what()) + " (see --help)\n";
    });
    GlobalOptions global;
    app.set_version_flag("--version", version_text());
    app.add_flag("-v,--verbose", global.verbosity, "More diagnostics on stderr (repeat for more)");
    app.add_flag("-q,--quiet", global.quiet, "Only errors on stderr");
    app.add_option("--log-file", global.log_file, "Also write a debug log to this file");
    app.add_flag("--json", global.json, "Machine-readable JSON on stdout");

    std::vector<std::pair<CLI::App *, Action>> actions;
    Action oneshot = add_oneshot_command(app, global);
    Action tune = add_tune_command(app, global);
    Action db = add_db_command(app, global);
    Action retrain = add_retrain_command(app, global);
    Action learning = add_learning_command(app, global);
    Action nightly = add_nightly_command(app, global);
    Action gpus = add_gpus_command(app, global);
    Action report = add_report_command(app, global);
    Action bench = add_bench_command(app, global, argc, argv);
    Action fuzz = add_fuzz_command(app, global, argc, argv);
    Action worker = add_worker_command(app, global);

    try {
        app.parse(argc, argv);
        refuse_empty_values(app);
    } catch (const CLI::ParseError &e) {
        // CLI11 prints the message; its own codes (105 for a bad value, 106
        // for a missing option, ...) are not documented ones: every usage
        // error exits 2, --help and --version 0 (docs/user-guide.md).
        return app.exit(e) == 0 ? kExitOk : kExitUsage;
    }
    try {
        setup_logging(global.verbosity, global.quiet, global.log_file);
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
        return kExitError;
    }
    for (const char *name : {"oneshot", "tune", "db", "retrain", "learning", "nightly", "gpus", "report",
                             "bench", "fuzz", "worker"}) {
        if (!app.got_subcommand(name)) continue;
        const std::string n = name;
        try {
            if (n == "oneshot") return oneshot();
            if (n == "tune") return tune();
            if (n == "db") return db();
            if (n == "retrain") return retrain();
            if (n == "learning") return learning();
            if (n == "nightly") return nightly();
            if (n == "gpus") return gpus();
            if (n == "report") return report();
            if (n == "bench") return bench();
            if (n == "fuzz") return fuzz();
            if (n == "worker") return worker();
        } catch (const std::exception &e) {
            spdlog::error("{}", e.what());
            return kExitError;
        }
    }
    return kExitError;
}
