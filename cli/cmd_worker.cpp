// `gpusched worker`: run by a slurm executor's job array on its node
// (tuner/measure/executor/worker.h); not meant to be typed by hand, but harmless to.

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/value_checks.h"
#include "tuner/measure/executor/worker.h"

namespace gpusched::cli {

Action add_worker_command(CLI::App &app, const GlobalOptions &) {
    struct Args {
        std::string scope_dir;
        int64_t array = 0;
        int index = -1;
    };
    auto args = std::make_shared<Args>();
    CLI::App *cmd = app.add_subcommand(
        "worker", "Benchmark one element of a slurm executor's job array (run by sbatch on a node)");
    cmd->add_option("scope", args->scope_dir, "The round's folder in the shared work folder")->required();
    cmd->add_option("--array", args->array, "Which array of the folder (arrays/N.json)")
        ->check(whole_number_at_least(0))
        ->required();
    cmd->add_option("--index", args->index, "The element (default: $SLURM_ARRAY_TASK_ID)")
        ->check(whole_number_at_least(0));
    return [args]() {
        return run_worker(args->scope_dir, args->array,
                          args->index >= 0 ? std::optional<int>(args->index) : std::nullopt);
    };
}

} // namespace gpusched::cli
