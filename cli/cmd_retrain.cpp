// `gpusched retrain`: trains the cost model from the benchmarked samples in
// the database (tuner/modes/retrain.h) and reports how ranking quality changed.

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/value_checks.h"
#include "costmodel/weights_file.h"
#include "tuner/modes/retrain.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {

namespace {
struct RetrainArgs {
    std::string db_path, pipeline, output, weights, gpu = "h100", device;
    bool all = false;
    int epochs = 100;
    double learning_rate = 1e-3;
    uint64_t seed = 1;
};

nlohmann::json quality_json(const RankingQuality &q) {
    return {{"loss", q.loss},           {"spearman", q.spearman},
            {"kendall", q.kendall},     {"best_predicted_slowdown", q.best_predicted_slowdown},
            {"pipelines", q.pipelines}, {"samples", q.samples}};
}
} // namespace

Action add_retrain_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<RetrainArgs>();
    CLI::App *cmd =
        app.add_subcommand("retrain", "Train the cost model from benchmarked samples in the database");
    cmd->add_option("--db", args->db_path, "Sample database")->required();
    auto *one = cmd->add_option("--pipeline", args->pipeline, "Only this generator's samples");
    auto *all = cmd->add_flag("--all", args->all, "All pipelines' samples");
    one->excludes(all);
    cmd->add_option("--weights", args->weights,
                    "Start from this weights file (default: the embedded weights)");
    cmd->add_option("--gpu", args->gpu, "GPU profile the samples were measured on")->capture_default_str();
    cmd->add_option("--device", args->device,
                    "Only samples measured on this device (as `gpusched db stats` names it); needed when the "
                    "database holds several");
    cmd->add_option("--epochs", args->epochs, "Training epochs")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--learning-rate", args->learning_rate, "Adam learning rate")
        ->check(finite_number_at_least(0, true))
        ->capture_default_str();
    cmd->add_option("--seed", args->seed, "Seed of the validation split and batches")
        ->check(unsigned_whole_number())
        ->capture_default_str();
    cmd->add_option("-o,--output", args->output, "Weights file to write")->required();
    return [args, &global, one, all]() {
        if (!*one && !*all) { // a usage error, as CLI11's own: exit 2
            spdlog::error("retrain: say --pipeline NAME or --all");
            return kExitUsage;
        }
        // The files first: a bad one is refused before the database is read.
        if (!args->weights.empty()) {
            check_input_file(args->weights, "--weights");
            read_weights_file(args->weights); // one that is not a weights file, too
        }
        check_output_file(args->output, "--output");
        RetrainOptions opt;
        opt.db_path = args->db_path;
        opt.generator_name = args->pipeline;
        opt.initial_weights = args->weights;
        opt.output_path = args->output;
        opt.gpu = resolve_gpu(args->gpu);
        opt.device = args->device;
        opt.epochs = args->epochs;
        opt.learning_rate = args->learning_rate;
        opt.seed = args->seed;
        RetrainResult r = retrain_from_database(opt);
        if (global.json) {
            nlohmann::json j = {{"weights", opt.output_path},
                                {"weights_id", r.weights_id},
                                {"pipelines", r.pipelines},
                                {"samples", r.samples},
                                {"train_before", quality_json(r.report.train_before)},
                                {"train_after", quality_json(r.report.train_after)},
                                {"validation_before", quality_json(r.report.validation_before)},
                                {"validation_after", quality_json(r.report.validation_after)}};
            std::cout << j.dump(2) << "\n";
            return kExitOk;
        }
        std::cout << fmt::format("Trained on {} samples of {} pipelines, {} epochs.\n", r.samples,
                                 r.pipelines, r.report.epochs);
        std::cout << fmt::format("  {:<18} {:>10} {:>9} {:>9} {:>22}\n", "", "loss", "Spearman", "Kendall",
                                 "predicted-best slowdown");
        auto row = [](const char *what, const RankingQuality &q) {
            std::cout << fmt::format("  {:<18} {:>10.4g} {:>9.3f} {:>9.3f} {:>21.1f}%\n", what, q.loss,
                                     q.spearman, q.kendall, 100 * q.best_predicted_slowdown);
        };
        row("train, before", r.report.train_before);
        row("train, after", r.report.train_after);
        row("validation, before", r.report.validation_before);
        row("validation, after", r.report.validation_after);
        std::cout << fmt::format("Wrote {} (weights version {} in the database).\n", opt.output_path,
                                 r.weights_id);
        return kExitOk;
    };
}

} // namespace gpusched::cli
