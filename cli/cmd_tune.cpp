// `gpusched tune`: Top 5 and Autotune, the modes that benchmark on a GPU.
// Both need a local GPU; this says so clearly where there is none. The
// benchmarking loop itself is not built yet (see docs/user-guide.md), and
// says that too rather than pretending.

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "tuner/cuda_device_query.h"

namespace gpusched::cli {

namespace {
struct TuneArgs {
    std::string generator_path, generator_name, mode = "top5", db_path;
    std::vector<std::string> params;
};
} // namespace

Action add_tune_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<TuneArgs>();
    CLI::App *cmd = app.add_subcommand("tune", "Top 5 / Autotune: compile and benchmark candidates on the local GPU");
    cmd->add_option("generator", args->generator_path, "Halide generator executable")->required();
    cmd->add_option("params", args->params, "Generator params, key=value");
    cmd->add_option("-g,--generator-name", args->generator_name, "Name of the generator")->required();
    cmd->add_option("--mode", args->mode, "top5 or autotune")->check(CLI::IsMember({"top5", "autotune"}))
        ->capture_default_str();
    cmd->add_option("--db", args->db_path, "Sample database");
    (void)global;
    return [args]() {
        LocalGpuQuery q = query_local_gpus();
        if (q.devices.empty()) {
            spdlog::error("tune --mode {} benchmarks on a GPU, and there is none here: {}. "
                          "Use `gpusched oneshot` (no GPU needed).",
                          args->mode, q.problem);
            return kExitUnavailable;
        }
        spdlog::error("tune --mode {}: benchmarking on the GPU is not built yet in this version; "
                      "use `gpusched oneshot` meanwhile",
                      args->mode);
        return kExitUnavailable;
    };
}

} // namespace gpusched::cli
