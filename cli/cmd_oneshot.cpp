// `gpusched oneshot`: One Shot mode (tuner/modes/oneshot.h) and its report.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/sample_lines.h"
#include "cli/search_args.h"
#include "cli/value_checks.h"
#include "costmodel/default_weights.h"
#include "costmodel/weights_file.h"
#include "db/database.h"
#include "tuner/modes/oneshot.h"

namespace gpusched::cli {
namespace {

struct OneShotArgs {
    std::string generator_path;
    std::string generator_name;
    std::vector<std::string> params;
    std::string gpu = "h100";
    std::string target;
    std::string autoscheduler = "gpusched";
    std::string output_dir = "gpusched-out";
    std::string db_path;
    int samples = 80;
    int jobs = 2;
    SearchArgs search;
    bool no_validate = false;
};

std::string sample_kind(const OneShotSample &s) {
    if (!s.seed) return "single";
    return s.beam ? "beam" : "greedy";
}

std::string sample_status(const OneShotSample &s) {
    if (!s.generator.ok()) return s.generator.failure == GeneratorFailure::TimedOut ? "timeout" : "failed";
    if (s.ptxas.status == PtxasStatus::Failed) return "ptxas failed";
    if (s.ptxas.any_spills()) return "spills";
    return "ok";
}

int max_registers(const OneShotSample &s) {
    int m = 0;
    for (const auto &k : s.ptxas.kernels)
        m = std::max(m, k.registers);
    return m;
}

// The work-weighted GPU fill (docs/search.md, "GPU fill").
std::string weighted_fill(const OneShotSample &s) {
    return s.gpu_fill ? fill_percent(s.gpu_fill->weighted) : "-";
}

nlohmann::json sample_json(const OneShotSample &s) {
    nlohmann::json j = {
        {"index", s.index},
        {"kind", sample_kind(s)},
        {"status", sample_status(s)},
        {"ptxas",
         {{"status", to_string(s.ptxas.status)}, {"detail", s.ptxas.detail}, {"arch", s.ptxas.arch}}},
    };
    if (s.seed) j["seed"] = *s.seed;
    if (s.predicted_cost) j["predicted_cost"] = *s.predicted_cost;
    if (s.gpu_fill) {
        j["gpu_fill"] = {{"weighted", s.gpu_fill->weighted},
                         {"least", s.gpu_fill->least},
                         {"least_kernel", s.gpu_fill->least_kernel},
                         {"capacity_threads", s.gpu_fill->capacity_threads}};
    }
    if (!s.generator.ok()) j["error"] = s.generator.message;
    j["validation"] = {{"status", s.validation}, {"detail", s.validation_detail}};
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto &k : s.ptxas.kernels) {
        kernels.push_back({{"name", k.name},
                           {"registers", k.registers},
                           {"spill_store_bytes", k.spill_store_bytes},
                           {"spill_load_bytes", k.spill_load_bytes},
                           {"stack_frame_bytes", k.stack_frame_bytes},
                           {"static_shared_bytes", k.static_shared_bytes},
                           {"barriers", k.barriers}});
    }
    j["ptxas"]["kernels"] = kernels;
    if (s.generator.process.started) j["generator_seconds"] = s.generator.process.wall_seconds;
    return j;
}

// What weights were trained on, from the provenance our own tools write:
// `gpusched retrain` ("retrained by ... on N measured samples of P
// pipelines from DB (GPU profile ..."), gpusched_fit_default_weights
// ("network fitted by Adam (...) to the analytic GPU model's predictions for
// GPU profile ... on rows file ..."); else its first 200 characters.
std::string trained_on(const std::string &provenance) {
    if (provenance.rfind("retrained by ", 0) == 0) {
        const auto end = provenance.find("), starting from");
        if (end != std::string::npos) return provenance.substr(0, end + 1);
    }
    const auto to = provenance.find(" to the analytic GPU model's predictions");
    if (to != std::string::npos) {
        const auto end = provenance.find(" on rows file", to);
        return "fitted" + provenance.substr(to, end == std::string::npos ? std::string::npos : end - to) +
               ", never to a measured runtime";
    }
    if (provenance.size() <= 200) return provenance;
    return provenance.substr(0, provenance.find_last_of(' ', 200)) + " ...";
}

// Which cost model ranked the samples, and what its weights were trained on
// (their provenance's first clause): a pick is only as good as that.
nlohmann::json cost_model_used(const OneShotOptions &opt) {
    auto key = [&](const char *name) {
        return opt.search_config.is_object() ? opt.search_config.value(name, std::string()) : std::string();
    };
    if (key("cost_model") == "analytic")
        return {{"model", "analytic"},
                {"weights", nullptr},
                {"trained_on", "the analytic GPU model, no weights"},
                {"provenance", "the analytic GPU model, no weights"}};
    const std::string path = key("weights_path");
    const std::string provenance =
        path.empty() ? std::string(default_weights_provenance()) : read_weights_file(path).provenance;
    return {{"model", "network"},
            {"weights", path.empty() ? nlohmann::json("embedded defaults") : nlohmann::json(path)},
            {"trained_on", trained_on(provenance)},
            {"provenance", provenance}};
}

void print_report(const OneShotOptions &opt, const OneShotResult &r) {
    const OneShotSample &best = r.samples[*r.best];
    if (best.predicted_cost) { // the samples were ranked by a cost model
        const nlohmann::json model = cost_model_used(opt);
        std::cout << fmt::format(
            "\nCost model: {}{}: {}\n", model["model"].get<std::string>(),
            model["weights"].is_null() ? "" : ", weights " + model["weights"].get<std::string>(),
            model["trained_on"].get<std::string>());
    }
    std::cout << fmt::format("\nRanking ({} of {} samples usable, best predicted first):\n", r.ranking.size(),
                             r.samples.size());
    std::cout << fmt::format("  {:>4}  {:>6}  {:<7}  {:>12}  {:>8}  {:>7}  {:>8}  {:>11}  {}\n", "rank",
                             "sample", "kind", "predicted", "GPU fill", "kernels", "max regs", "spill bytes",
                             "status");
    // The top of the ranking; every sample is in the database.
    constexpr int kRowsShown = 10;
    int rank = 0;
    for (std::size_t i : r.ranking) {
        if (rank == kRowsShown) {
            std::cout << fmt::format("  ... {} more (gpusched db samples {})\n",
                                     r.ranking.size() - kRowsShown, r.run_id);
            break;
        }
        const auto &s = r.samples[i];
        std::string predicted = s.predicted_cost ? fmt::format("{:.4g}", *s.predicted_cost) : "-";
        std::cout << fmt::format("  {:>4}  {:>6}  {:<7}  {:>12}  {:>8}  {:>7}  {:>8}  {:>11}  {}{}\n", ++rank,
                                 s.index, sample_kind(s), predicted, weighted_fill(s), s.ptxas.kernels.size(),
                                 max_registers(s), s.ptxas.total_spill_bytes(), sample_status(s),
                                 i == *r.best ? "  <- chosen" : "");
    }
    for (const std::string &line : sample_failure_lines(r.samples))
        std::cout << "  " << line << "\n";
    std::cout << fmt::format("\nptxas -arch={} on the chosen sample: {}{}\n", best.ptxas.arch,
                             to_string(best.ptxas.status),
                             best.ptxas.detail.empty() ? "" : " (" + best.ptxas.detail + ")");
    if (!best.ptxas.kernels.empty()) {
        std::size_t w = 6;
        for (const auto &k : best.ptxas.kernels)
            w = std::max(w, k.name.size());
        std::cout << fmt::format("  {:<{}}  {:>9}  {:>11}  {:>11}  {:>11}  {:>10}  {:>8}\n", "kernel", w,
                                 "registers", "spill store", "spill load", "stack frame", "static smem",
                                 "barriers");
        for (const auto &k : best.ptxas.kernels) {
            std::cout << fmt::format("  {:<{}}  {:>9}  {:>11}  {:>11}  {:>11}  {:>10}  {:>8}\n", k.name, w,
                                     k.registers, k.spill_store_bytes, k.spill_load_bytes,
                                     k.stack_frame_bytes, k.static_shared_bytes, k.barriers);
        }
    }
    if (best.gpu_fill) {
        // Visible without a GPU: a schedule that leaves most of the GPU idle
        // (a reduction in one thread) says so here.
        const GpuFillSummary &f = *best.gpu_fill;
        std::cout << fmt::format(
            "\nGPU fill of the chosen sample: {} weighted by work (threads launched against "
            "the {} that {} holds at once); least {}{}\n",
            fill_percent(f.weighted), static_cast<long long>(f.capacity_threads), opt.gpu.name,
            fill_percent(f.least), f.least_kernel.empty() ? "" : " (kernel " + f.least_kernel + ")");
    }
    if (best.record.is_object() && best.record.contains("device_bytes")) {
        const double bytes = best.record["device_bytes"].get<double>();
        std::cout << fmt::format(
            "\nDevice memory of the chosen sample: {:.1f} MiB of intermediates (Funcs at "
            "root and split partials, beside the inputs and outputs)\n",
            bytes / (1024.0 * 1024.0));
    }
    if (best.record.is_object() && best.record.contains("roofline")) {
        const nlohmann::json &b = best.record["roofline"];
        if (b["bound_ms"].get<double>() > 0)
            std::cout << fmt::format(
                "\nRoofline on {} (no schedule runs faster): {:.4g} ms; {:.1f} MB read and written once at "
                "{:.0f} GB/s take {:.4g} ms, {:.3g} G operations at {:.3g} TFLOP/s {:.4g} ms\n",
                opt.gpu.name, b["bound_ms"].get<double>(), b["bytes"].get<double>() / 1e6,
                opt.gpu.memory_bandwidth_gb_per_s, b["memory_ms"].get<double>(),
                b["operations"].get<double>() / 1e9, opt.gpu.fp32_tflops, b["compute_ms"].get<double>());
    }
    std::cout << fmt::format("\nOutput validation (OpenCL build on POCL vs a CPU build): {}{}\n",
                             best.validation,
                             best.validation_detail.empty() ? "" : " (" + best.validation_detail + ")");
    std::cout << "\nSchedule and library of the chosen sample:\n";
    for (const auto &f : r.best_files)
        std::cout << "  " << f << "\n";
    std::cout << fmt::format("\nStored as run {} in {} ({:.1f} s)\n", r.run_id, r.db_path, r.wall_seconds);
}

} // namespace

Action add_oneshot_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<OneShotArgs>();
    CLI::App *cmd = app.add_subcommand(
        "oneshot",
        "One Shot: search N schedules, rank them with the cost model, drop register spillers, keep the "
        "best (no GPU needed)");
    cmd->add_option("generator", args->generator_path, "Halide generator executable (built with GenGen)")
        ->required();
    cmd->add_option("params", args->params, "Generator params, key=value");
    cmd->add_option("-g,--generator-name", args->generator_name,
                    "Name of the generator inside the executable")
        ->required();
    cmd->add_option("--gpu", args->gpu, "GPU profile (h100, h200, a100, v100) or auto")
        ->capture_default_str();
    cmd->add_option("--target", args->target, "Halide target (default: host-cuda-<profile's capability>)");
    cmd->add_option("--autoscheduler", args->autoscheduler,
                    "Schedule source: gpusched, li2018, naive, manual")
        ->capture_default_str();
    cmd->add_option("-o,--output", args->output_dir, "Output directory")->capture_default_str();
    cmd->add_option("--db", args->db_path,
                    "Sample database (default: $XDG_DATA_HOME/gpusched/samples.sqlite)");
    cmd->add_option("--samples", args->samples, "Samples: 1 beam search + N-1 greedy (gpusched only)")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("-j,--jobs", args->jobs, "Parallel generator processes")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    add_search_options(cmd, args->search);
    cmd->add_flag("--no-validate", args->no_validate,
                  "Skip running the chosen schedule on POCL against a CPU build of the pipeline");

    return [args, &global]() {
        OneShotOptions opt;
        opt.generator_path = args->generator_path;
        opt.generator_name = args->generator_name;
        opt.generator_params = parse_generator_params(args->params);
        opt.gpu = resolve_gpu(args->gpu);
        opt.target = args->target;
        opt.schedule_source = args->autoscheduler;
        opt.output_dir = args->output_dir;
        opt.db_path = args->db_path.empty() ? db::default_database_path() : args->db_path;
        opt.samples = args->samples;
        opt.jobs = args->jobs;
        opt.validate = !args->no_validate;
        opt.gpusched_version = version_string();
        apply_search_args(args->search, opt);

        if (!global.json) {
            // Flushed: the banner comes before every log line and error (stderr).
            std::cout << fmt::format("gpusched oneshot: {} ({}) for {} [{}], ptxas -arch={}\n",
                                     opt.generator_name, opt.generator_path, opt.gpu.name,
                                     opt.gpu.description, opt.gpu.ptxas_arch())
                      << std::flush;
        }
        auto progress = [&](const OneShotSample &s, int done, int total) {
            spdlog::info("sample {}/{} ({}): {}", done, total, sample_kind(s), sample_progress(s));
            // -v: the search's own statistics (states enumerated, featurized,
            // costed, memo hits, seconds per phase, peak memory).
            if (s.record.is_object() && s.record.contains("statistics")) {
                std::string stats;
                for (const auto &[k, v] : s.record["statistics"].items())
                    if (k != "steps") // per step: in the record file, too long for a log line
                        stats += (stats.empty() ? "" : ", ") + k + " " + v.dump();
                spdlog::debug("sample {} search statistics: {}", s.index, stats);
            }
        };
        auto on_validation = [](const OneShotSample &s, const ValidationReport &v) {
            if (v.status == ValidationStatus::Failed)
                spdlog::warn("sample {} changes the pipeline's output on POCL, choosing again: {}", s.index,
                             v.detail);
            else if (v.status == ValidationStatus::NotRun)
                spdlog::warn("output validation not run: {}", v.detail);
            else
                spdlog::info("sample {} validated on POCL in {:.1f} s", s.index, v.seconds);
        };
        OneShotResult r = run_oneshot(opt, progress, on_validation);
        if (global.json) {
            nlohmann::json j = {{"generator", opt.generator_path},
                                {"generator_name", opt.generator_name},
                                {"gpu", opt.gpu.name},
                                {"target", r.target},
                                {"autoscheduler", opt.schedule_source},
                                {"run_id", r.run_id},
                                {"db", r.db_path},
                                {"best_sample", *r.best},
                                {"files", r.best_files},
                                {"seconds", r.wall_seconds}};
            j["samples"] = nlohmann::json::array();
            for (const auto &s : r.samples)
                j["samples"].push_back(sample_json(s));
            j["ranking"] = r.ranking;
            if (r.samples[*r.best].predicted_cost) j["cost_model"] = cost_model_used(opt);
            const nlohmann::json &record = r.samples[*r.best].record;
            if (record.is_object() && record.contains("device_bytes"))
                j["device_bytes"] = record["device_bytes"];
            if (record.is_object() && record.contains("roofline")) j["roofline"] = record["roofline"];
            std::cout << j.dump(2) << "\n";
        } else {
            std::cout << "target " << r.target << ", schedule source " << opt.schedule_source << "\n";
            print_report(opt, r);
        }
        return kExitOk;
    };
}

} // namespace gpusched::cli
