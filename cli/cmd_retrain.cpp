// `gpusched retrain`: trains the cost model from the samples in the database.
// Registered now so the command line is stable; training from measured
// samples needs benchmarked runtimes, which only Top 5 / Autotune on a GPU
// produce, and the loop that reads them is not built yet.

#include <memory>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"

namespace gpusched::cli {

namespace {
struct RetrainArgs {
    std::string db_path, pipeline, output;
    bool all = false;
    int epochs = 100;
};
} // namespace

Action add_retrain_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<RetrainArgs>();
    CLI::App *cmd = app.add_subcommand("retrain", "Train the cost model from measured samples in the database");
    cmd->add_option("--db", args->db_path, "Sample database")->required();
    cmd->add_option("--pipeline", args->pipeline, "Only this generator's samples");
    cmd->add_flag("--all", args->all, "All pipelines' samples");
    cmd->add_option("--epochs", args->epochs, "Training epochs")->capture_default_str();
    cmd->add_option("-o,--output", args->output, "Weights file to write")->required();
    (void)global;
    return [args]() {
        spdlog::error("retrain: training from the sample database is not built yet in this version");
        return kExitUnavailable;
    };
}

} // namespace gpusched::cli
