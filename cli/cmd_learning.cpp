// `gpusched learning`: does retraining learn? Hold-one-out models and the
// learning curve from measured Autotune batches
// (tuner/modes/learning.h), as Markdown tables or JSON.

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/value_checks.h"
#include "costmodel/weights_file.h"
#include "tuner/modes/learning.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {

namespace {
struct LearningArgs {
    std::vector<std::string> db_paths;
    std::string device, gpu = "h100", weights;
    std::vector<int> curve = {1, 2, 4, 8};
    int epochs = 100, jobs = 0;
    double learning_rate = 1e-3, anchor = 0;
    uint64_t seed = 1;
};

nlohmann::json figures_json(const ModelFigures &f) {
    return {{"kendall", f.kendall},
            {"pairwise_accuracy", f.pairwise},
            {"pick_over_best", f.pick_ratio},
            {"top1", f.top1},
            {"top5", f.top5}};
}

nlohmann::json report_json(const LearningReport &r) {
    nlohmann::json pipelines = nlohmann::json::array();
    for (const auto &p : r.pipelines) {
        nlohmann::json curve = nlohmann::json::array();
        for (const auto &c : p.curve)
            curve.push_back(c ? figures_json(*c) : nlohmann::json());
        pipelines.push_back(
            {{"pipeline", p.name},
             {"samples", p.samples},
             {"batches", p.batches},
             {"average_sample_over_best", p.average_sample_ratio},
             {"held_out_trained_on", p.trained_on},
             {"start", figures_json(p.start)},
             {"held_out", figures_json(p.held_out)},
             {"curve", curve},
             {"in_run_batches", p.in_run_batches},
             {"in_run_start", p.in_run_start ? figures_json(*p.in_run_start) : nlohmann::json()},
             {"in_run", p.in_run ? figures_json(*p.in_run) : nlohmann::json()},
             {"in_run_pick_slower", p.in_run_pick_slower},
             {"in_run_pick_faster", p.in_run_pick_faster},
             {"in_run_if_better", p.in_run_if_better ? figures_json(*p.in_run_if_better) : nlohmann::json()},
             {"if_better_kept", p.if_better_kept},
             {"if_better_pick_slower", p.if_better_pick_slower},
             {"if_better_pick_faster", p.if_better_pick_faster}});
    }
    nlohmann::json curve = nlohmann::json::array();
    for (const auto &c : r.curve)
        curve.push_back({{"batches", c.batches},
                         {"all_batches", c.all_batches},
                         {"pipelines", c.pipelines},
                         {"trained_on", c.trained_on},
                         {"mean", figures_json(c.mean)}});
    return {
        {"device", r.device},
        {"pipelines", pipelines},
        {"mean_start", figures_json(r.mean_start)},
        {"mean_held_out", figures_json(r.mean_held_out)},
        {"mean_in_run_start", r.mean_in_run_start ? figures_json(*r.mean_in_run_start) : nlohmann::json()},
        {"mean_in_run", r.mean_in_run ? figures_json(*r.mean_in_run) : nlohmann::json()},
        {"mean_in_run_if_better",
         r.mean_in_run_if_better ? figures_json(*r.mean_in_run_if_better) : nlohmann::json()},
        {"curve", curve},
        {"batches_to_kendall_0_6",
         r.batches_to_kendall_0_6 ? nlohmann::json(*r.batches_to_kendall_0_6) : nlohmann::json()},
        {"seconds", r.seconds}};
}

// "start -> held-out" of one figure.
std::string pair(double a, double b, const char *format) {
    return fmt::format(fmt::runtime(format), a) + " → " + fmt::format(fmt::runtime(format), b);
}

// Per pipeline, the start against the hold-one-out model.
void print_held_out(const LearningReport &r) {
    std::cout
        << "Hold-one-out: each pipeline judged by the starting weights → by them retrained on the other "
           "pipelines' samples (means over its batches, and over pipelines: geometric for the pick; pick: "
           "the model's favourite over the batch's "
           "best, the paper's figure 8; top-k: TenSet's score, 1 = the best is among the model's k "
           "favourites).\n\n";
    std::cout
        << "| pipeline | samples | batches | average sample / best | Kendall | pairwise accuracy | pick / "
           "best | top-1 | top-5 |\n|---|---|---|---|---|---|---|---|---|\n";
    int better_tau = 0, better_pick = 0, worse_pick = 0;
    for (const auto &p : r.pipelines) {
        std::cout << fmt::format(
            "| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |\n", p.name, p.samples, p.batches,
            p.average_sample_ratio, pair(p.start.kendall, p.held_out.kendall, "{:.2f}"),
            pair(p.start.pairwise, p.held_out.pairwise, "{:.2f}"),
            pair(p.start.pick_ratio, p.held_out.pick_ratio, "{:.2f}"),
            pair(p.start.top1, p.held_out.top1, "{:.2f}"), pair(p.start.top5, p.held_out.top5, "{:.2f}"));
        better_tau += p.held_out.kendall > p.start.kendall;
        // Within 1%: the same pick, or one as fast.
        better_pick += p.held_out.pick_ratio < p.start.pick_ratio * 0.99;
        worse_pick += p.held_out.pick_ratio > p.start.pick_ratio * 1.01;
    }
    const auto &s = r.mean_start, &h = r.mean_held_out;
    std::cout << fmt::format("| mean | | | | {} | {} | {} | {} | {} |\n\n",
                             pair(s.kendall, h.kendall, "{:.2f}"), pair(s.pairwise, h.pairwise, "{:.2f}"),
                             pair(s.pick_ratio, h.pick_ratio, "{:.2f}"), pair(s.top1, h.top1, "{:.2f}"),
                             pair(s.top5, h.top5, "{:.2f}"));
    const std::size_t n = r.pipelines.size();
    std::cout << fmt::format(
        "Held-out Kendall above the starting weights' on {} of {} pipelines; the held-out "
        "model's pick faster on {}, slower on {}, within 1% on {}.\n\n",
        better_tau, n, better_pick, worse_pick, n - better_pick - worse_pick);
}

// The learning curve, the start first.
void print_curve(const LearningReport &r) {
    std::cout
        << "Learning curve (one device, not a transfer between devices): hold-one-out models trained on only "
           "the first k batches of each other "
           "pipeline (k = 0: the starting weights), means over pipelines.\n\n"
           "| batches per pipeline | pipelines | training samples per model | Kendall | pairwise accuracy | "
           "pick / best | top-1 | top-5 |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto &c : r.curve) {
        const std::string k =
            c.all_batches ? fmt::format("all (up to {})", c.batches) : std::to_string(c.batches);
        std::cout << fmt::format("| {} | {} | {:.0f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", k,
                                 c.pipelines, c.pipelines ? double(c.trained_on) / c.pipelines : 0.0,
                                 c.mean.kendall, c.mean.pairwise, c.mean.pick_ratio, c.mean.top1,
                                 c.mean.top5);
    }
}

// Autotune's loop, each retraining adopted.
void print_autotune_loop(const LearningReport &r) {
    std::cout
        << "\nAutotune's own loop: each batch after a run's first, judged by the starting weights → by "
           "them retrained on that run's earlier batches (--train-on run, always adopted).\n\n"
           "| pipeline | batches judged | Kendall | pairwise accuracy | pick / best | top-1 | top-5 | pick "
           "slower / faster than the start's |\n|---|---|---|---|---|---|---|---|\n";
    int slower = 0, faster = 0, judged = 0;
    for (const auto &p : r.pipelines) {
        if (!p.in_run) continue;
        const ModelFigures &b = *p.in_run_start, &f = *p.in_run;
        std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} / {} |\n", p.name, p.in_run_batches,
                                 pair(b.kendall, f.kendall, "{:.2f}"), pair(b.pairwise, f.pairwise, "{:.2f}"),
                                 pair(b.pick_ratio, f.pick_ratio, "{:.2f}"), pair(b.top1, f.top1, "{:.2f}"),
                                 pair(b.top5, f.top5, "{:.2f}"), p.in_run_pick_slower, p.in_run_pick_faster);
        slower += p.in_run_pick_slower;
        faster += p.in_run_pick_faster;
        judged += p.in_run_batches;
    }
    if (r.mean_in_run) {
        const ModelFigures &b = *r.mean_in_run_start, &f = *r.mean_in_run;
        std::cout << fmt::format("| mean | {} | {} | {} | {} | {} | {} | {} / {} |\n", judged,
                                 pair(b.kendall, f.kendall, "{:.2f}"), pair(b.pairwise, f.pairwise, "{:.2f}"),
                                 pair(b.pick_ratio, f.pick_ratio, "{:.2f}"), pair(b.top1, f.top1, "{:.2f}"),
                                 pair(b.top5, f.top5, "{:.2f}"), slower, faster);
    } else {
        std::cout << "| (no run with two or more batches) | | | | | | | |\n";
    }
}

// Autotune's loop under --retrain if-better.
void print_if_better(const LearningReport &r) {
    std::cout
        << "\nThe same under --retrain if-better (the start kept where 2-fold cross-validation on the "
           "earlier batches says the retraining ranks and picks worse).\n\n"
           "| pipeline | batches judged | start kept | Kendall | pick / best | top-1 | pick slower / faster "
           "than the start's |\n|---|---|---|---|---|---|---|\n";
    int kept = 0, slower = 0, faster = 0, judged = 0;
    for (const auto &p : r.pipelines) {
        if (!p.in_run_if_better) continue;
        const ModelFigures &b = *p.in_run_start, &f = *p.in_run_if_better;
        std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} / {} |\n", p.name, p.in_run_batches,
                                 p.if_better_kept, pair(b.kendall, f.kendall, "{:.2f}"),
                                 pair(b.pick_ratio, f.pick_ratio, "{:.2f}"), pair(b.top1, f.top1, "{:.2f}"),
                                 p.if_better_pick_slower, p.if_better_pick_faster);
        kept += p.if_better_kept;
        judged += p.in_run_batches;
        slower += p.if_better_pick_slower;
        faster += p.if_better_pick_faster;
    }
    if (r.mean_in_run_if_better) {
        const ModelFigures &b = *r.mean_in_run_start, &f = *r.mean_in_run_if_better;
        std::cout << fmt::format("| mean | {} | {} | {} | {} | {} | {} / {} |\n", judged, kept,
                                 pair(b.kendall, f.kendall, "{:.2f}"),
                                 pair(b.pick_ratio, f.pick_ratio, "{:.2f}"), pair(b.top1, f.top1, "{:.2f}"),
                                 slower, faster);
    }
}

void print_markdown(const LearningReport &r, const LearningArgs &a) {
    int samples = 0, batches = 0;
    for (const auto &p : r.pipelines) {
        samples += p.samples;
        batches += p.batches;
    }
    std::cout << fmt::format(
        "Learning on {}: {} pipelines, {} measured samples in {} batches; models trained "
        "from {} for {} epochs (GPU profile {}); {:.0f} s.\n\n",
        r.device, r.pipelines.size(), samples, batches, a.weights.empty() ? "the default weights" : a.weights,
        a.epochs, a.gpu, r.seconds);
    print_held_out(r);
    print_curve(r);
    print_autotune_loop(r);
    print_if_better(r);
    if (r.batches_to_kendall_0_6)
        std::cout << fmt::format("\nMean Kendall reaches 0.6 at {} batches per pipeline.\n",
                                 *r.batches_to_kendall_0_6);
    else
        std::cout << "\nMean Kendall stays below 0.6 at every point of the curve.\n";
}
} // namespace

Action add_learning_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<LearningArgs>();
    CLI::App *cmd = app.add_subcommand(
        "learning", "Does retraining learn? Hold-one-out models and the learning curve from measured "
                    "Autotune batches");
    cmd->add_option("--db", args->db_paths, "Sample database (repeat for several)")->required();
    cmd->add_option("--device", args->device,
                    "Only samples measured on this device; needed when the databases hold several");
    cmd->add_option("--gpu", args->gpu, "GPU profile the samples were measured on")->capture_default_str();
    cmd->add_option("--weights", args->weights,
                    "Start from this weights file (default: the embedded weights)");
    cmd->add_option("--curve", args->curve,
                    "Batch counts of the learning curve (other pipelines' first k batches, same device)")
        ->delimiter(',')
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--epochs", args->epochs, "Training epochs per model")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--learning-rate", args->learning_rate, "Adam learning rate")
        ->check(finite_number_at_least(0, true))
        ->capture_default_str();
    cmd->add_option("--anchor", args->anchor,
                    "Weight of the squared distance to the starting weights added to the training loss")
        ->check(finite_number_at_least(0, false))
        ->capture_default_str();
    cmd->add_option("--seed", args->seed, "Seed of each training's validation split and batches")
        ->check(unsigned_whole_number())
        ->capture_default_str();
    cmd->add_option("-j,--jobs", args->jobs, "Models trained at once (0, the default: every core)")
        ->check(CLI::Range(0, 4096));
    return [args, &global]() {
        for (const auto &p : args->db_paths)
            check_input_file(p, "--db");
        if (!args->weights.empty()) {
            check_input_file(args->weights, "--weights");
            read_weights_file(args->weights);
        }
        LearningOptions opt;
        opt.db_paths = args->db_paths;
        opt.device = args->device;
        opt.gpu = resolve_gpu(args->gpu);
        opt.initial_weights = args->weights;
        opt.curve = args->curve;
        opt.epochs = args->epochs;
        opt.learning_rate = args->learning_rate;
        opt.anchor_weight = args->anchor;
        opt.seed = args->seed;
        opt.jobs = args->jobs;
        const LearningReport r = evaluate_learning(opt);
        if (global.json)
            std::cout << report_json(r).dump(2) << "\n";
        else
            print_markdown(r, *args);
        return kExitOk;
    };
}

} // namespace gpusched::cli
