// `gpusched tune`: the modes that benchmark. Top 5 (tuner/top5.h) measures
// the 5 best predicted samples of a batch on a device - a GPU (--device
// cuda) or POCL (--device opencl, for machines without one) - and keeps the
// fastest. Autotune is not built yet and says so.

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "db/database.h"
#include "tuner/cuda_device_query.h"
#include "tuner/top5.h"

namespace gpusched::cli {

namespace {

struct TuneArgs {
    std::string generator_path, generator_name, mode = "top5", db_path;
    std::vector<std::string> params;
    std::string gpu = "auto";
    std::string device;
    std::string output_dir = "gpusched-out";
    int samples = 80;
    int jobs = 0;
    int beam_size = 32;
    int passes = 5;
    uint64_t seed = 0;
    int timeout_s = 600;
    double dropout = 0.2;
    std::string search_config_file;
    int top = 5;
    std::string baselines;
    int benchmark_timeout_s = 60;
    double min_time_s = 0.1;
    int min_reps = 3;
    int max_reps = 1000;
};

std::string ms(const std::optional<double> &v) {
    return v ? fmt::format("{:.4g}", *v) : "-";
}

// What happened to an entry, in a word or two (the error follows the table).
std::string entry_status(const Top5Entry &e) {
    return e.measured() ? "ok" : to_string(e.measurement.outcome);
}

std::string validation_text(const Top5Entry &e) {
    return e.measurement.validation;
}

nlohmann::json entry_json(const Top5Entry &e) {
    nlohmann::json j = {{"label", e.label},
                        {"source", e.source},
                        {"run_id", e.run_id},
                        {"sample_id", e.sample_id},
                        {"ptxas", e.ptxas_status},
                        {"spill_bytes", e.spill_bytes},
                        {"measurement", e.measurement.to_json()},
                        {"build_seconds", e.build.seconds}};
    j["predicted_rank"] = e.predicted_rank ? nlohmann::json(e.predicted_rank) : nlohmann::json(nullptr);
    j["predicted_cost"] = e.predicted_cost ? nlohmann::json(*e.predicted_cost) : nlohmann::json(nullptr);
    if (!e.build.ok) j["build_error"] = e.build.error;
    return j;
}

std::optional<double> speedup(const Top5Result &r, const Top5Entry &baseline) {
    if (!r.best || !baseline.measured()) return std::nullopt;
    return *baseline.measurement.median_ms / *r.benchmarked[*r.best].measurement.median_ms;
}

void print_table(const Top5Result &r) {
    std::cout << fmt::format("\nBenchmarked on {} ({}); spill check: {}\n", r.device, r.benchmark_target,
                             r.spill_check);
    std::cout << fmt::format("  {:>4}  {:<10}  {:>10}  {:>10}  {:>10}  {:>5}  {:<10}  {:>6}  {}\n", "rank",
                             "schedule", "predicted", "min ms", "median ms", "reps", "validation", "spills",
                             "status");
    auto row = [&](const Top5Entry &e, const std::string &rank, bool chosen) {
        std::cout << fmt::format(
            "  {:>4}  {:<10}  {:>10}  {:>10}  {:>10}  {:>5}  {:<10}  {:>6}  {}{}\n", rank, e.label,
            e.predicted_cost ? fmt::format("{:.4g}", *e.predicted_cost) : "-", ms(e.measurement.min_ms),
            ms(e.measurement.median_ms), e.measured() ? std::to_string(e.measurement.reps) : "-",
            validation_text(e), e.ptxas_status == "checked" ? std::to_string(e.spill_bytes) : "-",
            entry_status(e), chosen ? "  <- chosen" : "");
    };
    for (std::size_t i = 0; i < r.benchmarked.size(); ++i)
        row(r.benchmarked[i], std::to_string(r.benchmarked[i].predicted_rank), r.best && *r.best == i);
    for (const auto &b : r.baselines)
        row(b, "-", false);
    for (const auto &e : r.benchmarked)
        if (!e.measured())
            std::cout << fmt::format("  {} {}: {}\n", e.label, to_string(e.measurement.outcome),
                                     e.measurement.error);
    for (const auto &e : r.baselines)
        if (!e.measured())
            std::cout << fmt::format("  {} {}: {}\n", e.label, to_string(e.measurement.outcome),
                                     e.measurement.error);
    if (!r.baselines.empty()) {
        std::cout << "\nMeasured speedup of the chosen sample (median over median, same device):\n";
        for (const auto &b : r.baselines) {
            auto s = speedup(r, b);
            std::cout << fmt::format("  over {:<8} {}\n", b.label,
                                     s ? fmt::format("{:.2f}x", *s) : "- (not measured)");
        }
    }
    std::cout << "\nSchedule and library of the chosen sample:\n";
    for (const auto &f : r.best_files)
        std::cout << "  " << f << "\n";
    std::cout << fmt::format("\nStored as run {} in {} ({:.1f} s)\n", r.run_id, r.db_path, r.wall_seconds);
}

std::vector<std::string> split_list(const std::string &text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

} // namespace

Action add_tune_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<TuneArgs>();
    CLI::App *cmd =
        app.add_subcommand("tune", "Top 5 / Autotune: compile and benchmark candidates on a device");
    cmd->add_option("generator", args->generator_path, "Halide generator executable")->required();
    cmd->add_option("params", args->params, "Generator params, key=value");
    cmd->add_option("-g,--generator-name", args->generator_name, "Name of the generator")->required();
    cmd->add_option("--mode", args->mode, "top5 or autotune")
        ->check(CLI::IsMember({"top5", "autotune"}))
        ->capture_default_str();
    cmd->add_option("--device", args->device,
                    "cuda (the local GPUs; default when one is visible) or opencl (POCL, the CPU's OpenCL)")
        ->check(CLI::IsMember({"cuda", "opencl"}));
    cmd->add_option("--gpu", args->gpu, "GPU profile to search for (h100, h200, a100, v100) or auto")
        ->capture_default_str();
    cmd->add_option("-o,--output", args->output_dir, "Output directory")->capture_default_str();
    cmd->add_option("--db", args->db_path,
                    "Sample database (default: $XDG_DATA_HOME/gpusched/samples.sqlite)");
    cmd->add_option("--samples", args->samples, "Samples: 1 beam search + N-1 greedy")->capture_default_str();
    cmd->add_option("-j,--jobs", args->jobs, "Parallel compile jobs (default: every core)");
    cmd->add_option("--beam-size", args->beam_size, "Beam size of the beam-search sample")
        ->capture_default_str();
    cmd->add_option("--passes", args->passes, "Passes of the beam-search sample")->capture_default_str();
    cmd->add_option("--seed", args->seed, "Base seed; greedy sample i uses seed+i")->capture_default_str();
    cmd->add_option("--timeout", args->timeout_s, "Seconds allowed per generator run")->capture_default_str();
    cmd->add_option("--dropout", args->dropout, "Greedy samples: probability of dropping each ranked choice")
        ->check(CLI::Range(0.0, 0.99))
        ->capture_default_str();
    cmd->add_option("--search-config", args->search_config_file, "JSON file of extra plugin config keys");
    cmd->add_option("--top", args->top, "How many of the best predicted samples to benchmark")
        ->capture_default_str();
    cmd->add_option("--baselines", args->baselines,
                    "Comma-separated schedule sources to build and time the same way: li2018,naive,manual");
    cmd->add_option("--benchmark-timeout", args->benchmark_timeout_s, "Seconds allowed per benchmark process")
        ->capture_default_str();
    cmd->add_option("--min-time", args->min_time_s, "Seconds of timed repetitions per benchmark, at least")
        ->capture_default_str();
    cmd->add_option("--min-reps", args->min_reps, "Timed repetitions per benchmark, at least")
        ->capture_default_str();
    cmd->add_option("--max-reps", args->max_reps, "Timed repetitions per benchmark, at most")
        ->capture_default_str();

    return [args, &global]() {
        if (args->mode == "autotune") {
            spdlog::error("tune --mode autotune (the loop that benchmarks on a GPU and retrains) is not "
                          "built yet in this version; "
                          "use --mode top5");
            return kExitUnavailable;
        }
        Top5Options opt;
        if (args->device.empty()) {
            if (!default_device_kind()) {
                spdlog::error(
                    "tune benchmarks on a GPU and none is visible here ({}); add --device opencl to "
                    "benchmark on POCL, the CPU's OpenCL, instead",
                    query_local_gpus().problem);
                return kExitUnavailable;
            }
            opt.device = DeviceKind::Cuda;
        } else {
            opt.device = *parse_device_kind(args->device);
        }
        OneShotOptions &b = opt.batch;
        b.generator_path = args->generator_path;
        b.generator_name = args->generator_name;
        b.generator_params = parse_generator_params(args->params);
        b.gpu = resolve_gpu(args->gpu);
        b.output_dir = args->output_dir;
        b.db_path = args->db_path.empty() ? db::default_database_path() : args->db_path;
        b.samples = args->samples;
        b.jobs = args->jobs > 0 ? args->jobs : std::max(1u, std::thread::hardware_concurrency());
        b.beam_size = args->beam_size;
        b.passes = args->passes;
        b.seed = args->seed;
        b.greedy_dropout = args->dropout;
        b.validate = false;
        b.timeout = std::chrono::seconds(args->timeout_s);
        b.gpusched_version = version_string();
        if (!args->search_config_file.empty()) {
            std::ifstream f(args->search_config_file);
            if (!f) throw UserError("cannot read search config '" + args->search_config_file + "'");
            b.search_config = nlohmann::json::parse(f, nullptr, false);
            if (b.search_config.is_discarded() || !b.search_config.is_object())
                throw UserError("search config '" + args->search_config_file + "' is not a JSON object");
        }
        if (args->timeout_s < 1) throw UserError("--timeout must be at least 1 second");
        if (args->benchmark_timeout_s < 1) throw UserError("--benchmark-timeout must be at least 1 second");
        if (args->min_reps < 1 || args->max_reps < args->min_reps || !(args->min_time_s >= 0))
            throw UserError("need 1 <= --min-reps <= --max-reps and --min-time >= 0");
        opt.top = args->top;
        opt.baselines = split_list(args->baselines);
        opt.timing.timeout = std::chrono::seconds(args->benchmark_timeout_s);
        opt.timing.min_time_s = args->min_time_s;
        opt.timing.min_reps = args->min_reps;
        opt.timing.max_reps = args->max_reps;

        if (!global.json) {
            std::cout << fmt::format("gpusched tune --mode top5: {} ({}) for {} [{}], device {}\n",
                                     b.generator_name, b.generator_path, b.gpu.name, b.gpu.description,
                                     to_string(opt.device));
        }
        Top5Progress progress;
        progress.sample = [](const OneShotSample &s, int done, int total) {
            spdlog::info("sample {}/{}: {}", done, total,
                         s.generator.ok()
                             ? (s.predicted_cost ? fmt::format("predicted {:.4g}", *s.predicted_cost)
                                                 : std::string("compiled"))
                             : s.generator.message);
        };
        progress.measured = [](const Top5Entry &e) {
            if (e.measured())
                spdlog::info("{}: median {:.4g} ms over {} reps on {} (output {})", e.label,
                             *e.measurement.median_ms, e.measurement.reps, e.measurement.device,
                             e.measurement.validation);
            else
                spdlog::warn("{}: {}: {}", e.label, to_string(e.measurement.outcome), e.measurement.error);
        };
        Top5Result r;
        try {
            r = run_top5(opt, progress);
        } catch (const UnavailableError &e) {
            spdlog::error("{}", e.what());
            return kExitUnavailable;
        }
        if (global.json) {
            nlohmann::json j = {{"generator", b.generator_path},
                                {"generator_name", b.generator_name},
                                {"gpu", b.gpu.name},
                                {"target", r.target},
                                {"benchmark_target", r.benchmark_target},
                                {"device_kind", to_string(opt.device)},
                                {"device", r.device},
                                {"run_id", r.run_id},
                                {"db", r.db_path},
                                {"files", r.best_files},
                                {"seconds", r.wall_seconds},
                                {"batch_seconds", r.batch_seconds},
                                {"benchmark_seconds", r.benchmark_seconds},
                                {"spill_check", r.spill_check},
                                {"samples", r.samples.size()},
                                {"usable", r.ranking.size()},
                                {"spillers_dropped", r.spillers.size()}};
            j["benchmarked"] = nlohmann::json::array();
            for (const auto &e : r.benchmarked)
                j["benchmarked"].push_back(entry_json(e));
            j["baselines"] = nlohmann::json::array();
            for (const auto &e : r.baselines) {
                nlohmann::json bj = entry_json(e);
                auto s = speedup(r, e);
                bj["speedup"] = s ? nlohmann::json(*s) : nlohmann::json(nullptr);
                j["baselines"].push_back(bj);
            }
            j["chosen"] = r.best ? nlohmann::json(r.benchmarked[*r.best].label) : nlohmann::json(nullptr);
            std::cout << j.dump(2) << "\n";
        } else {
            print_table(r);
        }
        return kExitOk;
    };
}

} // namespace gpusched::cli
