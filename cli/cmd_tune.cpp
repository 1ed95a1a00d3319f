// `gpusched tune`: the modes that benchmark. Top 5 (tuner/modes/top5.h) measures
// the 5 best predicted samples of a batch on a device - a GPU (--device
// cuda) or POCL (--device opencl, for machines without one) - and keeps the
// fastest. Autotune (tuner/modes/autotune.h) measures every sample of its batches
// and retrains the model between them; it prints a live line on a terminal,
// timestamped lines elsewhere, and exits 0 finished, 3 stopped by a budget,
// 130 interrupted, 1 failed (docs/user-guide.md).

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <fstream>
#include <iostream>

#include <memory>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/optional_json.h"
#include "cli/sample_lines.h"
#include "cli/search_args.h"
#include "cli/top5_output.h"
#include "cli/value_checks.h"
#include "db/database.h"
#include "tuner/cuda_device_query.h"
#include "tuner/duration.h"
#include "tuner/modes/autotune.h"
#include "tuner/modes/top5.h"

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
    SearchArgs search;
    int top = 5;
    std::string baselines;
    int benchmark_timeout_s = 60;
    double min_time_s = 0.1;
    int min_reps = 3;
    int max_reps = 1000;
    double precision = TimingOptions{}.precision;
    bool no_flush = false;
    bool host_clock = false;
    // Autotune.
    int iterations = 20;
    int batch = 0; // 0: --samples
    bool from_scratch = false;
    std::string train_on = "run";
    std::string retrain = "always";
    int epochs = 100;
    double learning_rate = 1e-3;
    int64_t resume = 0;
    std::string time_budget;
    int64_t max_samples = 0;
    // Where benchmarks run (tuner/measure/executor/executor.h).
    std::string executor = "local";
    SlurmOptions slurm;
    // The options one mode has and the other lacks: given to the other, they
    // are refused, not ignored (a --time-budget a Top 5 ignored would run on).
    std::vector<const CLI::Option *> top5_only, autotune_only;
    // What a run is (its search, batches, training and timing): stored with
    // it, so `--resume` refuses them rather than ignore a different value.
    std::vector<const CLI::Option *> fixed_by_run;
};

// Refuses the options of the mode not chosen, naming the first one given.
void refuse_other_modes_options(const TuneArgs &a) {
    const bool autotune = a.mode == "autotune";
    for (const CLI::Option *o : autotune ? a.top5_only : a.autotune_only)
        if (o->count() > 0)
            throw UserError(o->get_name() + " is " + (autotune ? "Top 5's" : "Autotune's") + " (--mode " +
                            (autotune ? "top5" : "autotune") + "), not " +
                            (autotune ? "Autotune's" : "Top 5's"));
}

// A resume continues the run as it was started: an option that would change
// it, given again, is refused, naming it and the run.
void refuse_options_a_resume_keeps(const TuneArgs &a) {
    if (a.resume == 0) return;
    for (const CLI::Option *o : a.fixed_by_run)
        if (o->count() > 0)
            throw UserError(
                o->get_name() + ": a resumed run keeps the options it started with (run " +
                std::to_string(a.resume) +
                "); a resume takes --time-budget, --max-samples, --baselines, -j and the executor's "
                "options");
}

// The executor the arguments name; the mode fills in device and timing.
ExecutorOptions executor_args(const TuneArgs &a) {
    ExecutorOptions e;
    e.kind = a.executor;
    e.slurm = a.slurm;
    const bool slurm_flags = !a.slurm.partition.empty() || !a.slurm.account.empty() ||
                             !a.slurm.gres.empty() || !a.slurm.time_limit.empty() ||
                             !a.slurm.work_dir.empty() || !a.slurm.worker_command.empty();
    if (a.executor != "slurm" && slurm_flags)
        throw UserError("--partition, --account, --gres, --time-limit, --work-dir and --worker-command are "
                        "options of --executor slurm");
    if (a.executor == "slurm" && a.slurm.work_dir.empty())
        throw UserError("--executor slurm needs --work-dir, a folder the driver and every node share");
    return e;
}

// Exit codes of autotune, documented in docs/user-guide.md.
constexpr int kExitStoppedByBudget = 3;

std::atomic<bool> g_stop{false};
extern "C" void request_stop(int) {
    g_stop.store(true);
}

// SIGINT/SIGTERM set g_stop: the modes start no new work and a slurm round
// scancels its jobs; the command exits 130.
void install_stop_handler() {
    struct sigaction sa {};
    sa.sa_handler = request_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

std::string utc_stamp() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string duration_text(double s) {
    if (s < 60) return fmt::format("{:.0f}s", s);
    if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
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

// The live line on a terminal, timestamped lines elsewhere.
class AutotuneDisplay {
public:
    explicit AutotuneDisplay(bool quiet) : quiet_(quiet) {
        tty_ = isatty(STDERR_FILENO) == 1;
        const char *nc = std::getenv("NO_COLOR");
        const char *term = std::getenv("TERM");
        color_ = tty_ && !(nc && *nc) && !(term && std::string(term) == "dumb");
    }
    void operator()(const AutotuneStatus &st) {
        if (quiet_) return;
        std::string best = st.best_ms ? fmt::format("{:.4g} ms", *st.best_ms) : "-";
        if (st.best_ms && st.first_batch_best_ms && st.batch > 0)
            best += fmt::format(" ({:.2f}x over batch 0)", *st.first_batch_best_ms / *st.best_ms);
        const std::string line =
            fmt::format("batch {}/{}: {}/{} compiled, {} benchmarked, {} failed; best {}; ETA {}",
                        st.batch + 1, st.iterations, st.compiled, st.batch_size, st.benchmarked, st.failed,
                        best, st.eta_s ? duration_text(*st.eta_s) : "-");
        if (tty_) {
            if (st.event == AutotuneStatus::Event::BatchDone ||
                st.event == AutotuneStatus::Event::Retrained) {
                std::cerr << "\r\033[K" << st.message << "\n";
            }
            std::cerr << "\r\033[K" << (color_ ? "\033[1m" : "") << line << (color_ ? "\033[0m" : "")
                      << std::flush;
            dirty_ = true;
        } else {
            std::cerr << utc_stamp() << " " << st.message << " | " << line << "\n" << std::flush;
        }
    }
    void finish() {
        if (tty_ && dirty_) std::cerr << "\n";
        dirty_ = false;
    }

private:
    bool quiet_ = false, tty_ = false, color_ = false, dirty_ = false;
};

// The device benchmarks run on: --device, or a visible GPU. Empty (after
// saying why) when none is named and no GPU is visible.
std::optional<DeviceKind> benchmark_device(const TuneArgs &a) {
    if (!a.device.empty()) return *parse_device_kind(a.device);
    if (a.executor == "slurm") return DeviceKind::Cuda; // the nodes have the GPUs, not the driver
    if (const auto visible = default_device_kind()) return *visible;
    spdlog::error("tune benchmarks on a GPU and none is visible here ({}); add --device opencl to "
                  "benchmark on POCL, the CPU's OpenCL, instead",
                  query_local_gpus().problem);
    return std::nullopt;
}

// The batch both modes search (its size is the mode's to set).
OneShotOptions batch_options(const TuneArgs &a) {
    OneShotOptions b;
    b.generator_path = a.generator_path;
    b.generator_name = a.generator_name;
    b.generator_params = parse_generator_params(a.params);
    b.output_dir = a.output_dir;
    b.db_path = a.db_path.empty() ? db::default_database_path() : a.db_path;
    b.samples = a.samples;
    b.jobs = a.jobs > 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
    b.validate = false;
    b.gpusched_version = version_string();
    apply_search_args(a.search, b);
    return b;
}

// How each benchmark is timed, checked.
TimingOptions timing_options(const TuneArgs &a) {
    if (a.benchmark_timeout_s < 1) throw UserError("--benchmark-timeout must be at least 1 second");
    if (a.min_reps < 1 || a.max_reps < a.min_reps || !(a.min_time_s >= 0))
        throw UserError("need 1 <= --min-reps <= --max-reps and --min-time >= 0");
    if (!(a.precision >= 0 && a.precision < 1)) throw UserError("--precision must be in [0, 1)");
    TimingOptions t;
    t.timeout = std::chrono::seconds(a.benchmark_timeout_s);
    t.min_time_s = a.min_time_s;
    t.min_reps = a.min_reps;
    t.max_reps = a.max_reps;
    t.precision = a.precision;
    if (a.no_flush) t.flush_bytes = 0; // otherwise the device's rule (runner.h)
    t.host_clock = a.host_clock;
    return t;
}

AutotuneOptions autotune_options(const TuneArgs &a, DeviceKind device) {
    if (a.resume == 0 && (a.generator_path.empty() || a.generator_name.empty()))
        throw UserError("tune --mode autotune needs the generator executable and -g NAME (or --resume RUN)");
    AutotuneOptions o;
    o.device = device;
    o.batch = batch_options(a);
    if (a.resume == 0) o.batch.gpu = resolve_gpu(a.gpu); // a resumed run's profile is its own
    if (a.batch > 0) o.batch.samples = a.batch;
    // Autotune's --weights are its first batch's: it records them as that
    // batch's weights and retrains from them (tuner/modes/autotune.h).
    if (!a.search.weights.empty()) o.batch.search_config.erase("weights_path");
    o.timing = timing_options(a);
    o.iterations = a.iterations;
    o.from_scratch = a.from_scratch;
    o.initial_weights = a.search.weights;
    o.train_on = *parse_train_on(a.train_on);
    o.retrain_if_better = a.retrain == "if-better";
    o.epochs = a.epochs;
    o.learning_rate = a.learning_rate;
    if (a.resume != 0) o.resume_run = a.resume;
    if (!a.time_budget.empty()) {
        auto d = parse_duration(a.time_budget);
        if (!d || *d <= 0)
            throw UserError("--time-budget '" + a.time_budget + "' is not a duration (90s, 15m, 2h, 1h30m)");
        o.time_budget = std::chrono::duration<double>(*d);
    }
    if (a.max_samples != 0) o.max_samples = a.max_samples;
    o.baselines = split_list(a.baselines);
    return o;
}

void print_autotune_json(const AutotuneResult &r, int code) {
    nlohmann::json batches = nlohmann::json::array();
    for (const auto &row : r.batches) {
        batches.push_back({{"batch", row.batch},
                           {"status", row.status},
                           {"weights_id", opt_json(row.weights_id)},
                           {"weights", row.weights_path},
                           {"samples", row.samples},
                           {"measured", row.measured},
                           {"failed", row.failed},
                           {"spilled", row.spilled},
                           {"best_ms", opt_json(row.best_ms)},
                           {"spearman", opt_json(row.spearman)},
                           {"kendall", opt_json(row.kendall)},
                           {"regret", opt_json(row.regret)},
                           {"retrain_s", opt_json(row.retrain_s)}});
    }
    nlohmann::json j = {
        {"run_id", r.run_id},
        {"resumed", r.resumed},
        {"db", r.db_path},
        {"device", r.device},
        {"target", r.target},
        {"benchmark_target", r.benchmark_target},
        {"end", code == kExitOk                ? "finished"
                : code == kExitStoppedByBudget ? "budget"
                                               : "interrupted"},
        {"stopped_by", r.stopped_by},
        {"exit_code", code},
        {"samples", r.samples},
        {"samples_this_invocation", r.samples_this_invocation},
        {"measured", r.measured},
        {"failed", r.failed},
        {"spilled", r.spilled},
        {"best_sample_id", opt_json(r.best_sample_id)},
        {"best_batch", r.best_batch},
        {"best_idx", r.best_idx},
        {"best_ms", opt_json(r.best_ms)},
        {"kept_baseline", r.kept_baseline.empty() ? nlohmann::json() : nlohmann::json(r.kept_baseline)},
        {"files", r.best_files},
        {"seconds", r.wall_seconds},
        {"setup_seconds", r.setup_seconds},
        {"retrain_seconds", r.retrain_seconds},
        {"batches", batches}};
    nlohmann::json baselines = nlohmann::json::array();
    for (const auto &bl : r.baselines)
        baselines.push_back(
            {{"source", bl.source},
             {"run_id", bl.run_id},
             {"sample_id", bl.sample_id},
             {"median_ms", opt_json(bl.median_ms)},
             {"speedup", bl.median_ms && r.best_ms ? nlohmann::json(*bl.median_ms / *r.best_ms)
                                                   : nlohmann::json(nullptr)},
             {"problem", bl.problem},
             {"measured_now", bl.measured_now}});
    j["baselines"] = baselines;
    std::cout << j.dump(2) << "\n";
}

void print_tuning_curve(const AutotuneResult &r, int code) {
    // The first batch's best, the reference of the speedup column (0 when
    // none was measured; a plain double keeps GCC's optional analysis quiet).
    const double first = r.batches.empty() ? 0.0 : r.batches.front().best_ms.value_or(0.0);
    std::cout << fmt::format(
        "\nTuning curve of run {} on {} (times: median ms; correlation of the batch's "
        "predictions with its times, before retraining; regret: the model's pick over the "
        "batch's best)\n",
        r.run_id, r.device);
    std::cout << fmt::format(
        "  {:>5}  {:>7}  {:>8}  {:>6}  {:>7}  {:>10}  {:>10}  {:>7}  {:>8}  {:>7}  {:>6}  {:>9}\n", "batch",
        "samples", "measured", "failed", "spilled", "best ms", "best so far", "speedup", "Spearman",
        "Kendall", "regret", "retrain s");
    std::optional<double> so_far;
    for (const auto &row : r.batches) {
        if (row.best_ms && (!so_far || *row.best_ms < *so_far)) so_far = row.best_ms;
        std::cout << fmt::format(
            "  {:>5}  {:>7}  {:>8}  {:>6}  {:>7}  {:>10}  {:>10}  {:>7}  {:>8}  {:>7}  {:>6}  {:>9}{}\n",
            row.batch, row.samples, row.measured, row.failed, row.spilled, format_ms(row.best_ms),
            format_ms(so_far), so_far && first > 0 ? fmt::format("{:.2f}x", first / *so_far) : "-",
            row.spearman ? fmt::format("{:.3f}", *row.spearman) : "-",
            row.kendall ? fmt::format("{:.3f}", *row.kendall) : "-",
            row.regret ? fmt::format("{:.2f}", *row.regret) : "-",
            row.retrain_s ? fmt::format("{:.1f}", *row.retrain_s) : "-",
            row.status == "finished" ? "" : "  (not finished)");
    }
    std::cout << fmt::format("\n{} samples ({} this time), {} measured, {} failed, {} spilled registers.\n",
                             r.samples, r.samples_this_invocation, r.measured, r.failed, r.spilled);
    if (r.best_ms)
        std::cout << fmt::format("Best: batch {} sample {} (sample id {}), median {:.4g} ms.\n", r.best_batch,
                                 r.best_idx, *r.best_sample_id, *r.best_ms);
    if (!r.kept_baseline.empty())
        std::cout << fmt::format("Kept the {} baseline: measured faster than every sample of the run (the "
                                 "run's kept_source in the database says so).\n",
                                 r.kept_baseline);
    if (!r.baselines.empty()) {
        std::cout
            << "Baselines, timed by the same runner (speedup: the baseline's median over the run's best):\n";
        for (const auto &bl : r.baselines) {
            const std::string when = bl.measured_now ? "" : "  (measured earlier in this run)";
            if (bl.median_ms)
                std::cout << fmt::format("  {:<8}  {:>10} ms  {:>7}{}\n", bl.source, format_ms(bl.median_ms),
                                         r.best_ms ? fmt::format("{:.2f}x", *bl.median_ms / *r.best_ms) : "-",
                                         when);
            else
                std::cout << fmt::format("  {:<8}  not measured: {}{}\n", bl.source, bl.problem, when);
        }
    }
    if (!r.best_files.empty()) {
        std::cout << "Schedule and library of the best sample:\n";
        for (const auto &f : r.best_files)
            std::cout << "  " << f << "\n";
    }
    if (code == kExitStoppedByBudget) {
        std::cout << fmt::format("Stopped by the {} (exit 3); continue with --resume {}.\n", r.stopped_by,
                                 r.run_id);
        if (r.stopped_by == "time budget" && r.samples_this_invocation == 0)
            std::cout << fmt::format("The budget ran out before the first sample: the CPU reference and the "
                                     "baselines took {:.1f} s of it; give the run more time.\n",
                                     r.setup_seconds);
    }
    if (code == kExitInterrupted)
        std::cout << fmt::format("Interrupted (exit 130); continue with --resume {}.\n", r.run_id);
    std::cout << fmt::format("Stored as run {} in {} ({:.1f} s, retraining {:.1f} s)\n", r.run_id, r.db_path,
                             r.wall_seconds, r.retrain_seconds);
}

int run_autotune_command(const TuneArgs &a, const GlobalOptions &global) {
    const ExecutorOptions executor = executor_args(a);
    const std::optional<DeviceKind> device = benchmark_device(a);
    if (!device) return kExitUnavailable;
    AutotuneOptions o = autotune_options(a, *device);
    o.executor = executor;
    const OneShotOptions &b = o.batch;

    // SIGINT/SIGTERM: start no new work, keep what is stored (samples compiled
    // but not yet timed are measured by --resume), mark the run interrupted,
    // exit 130 (test: "autotune stopped by SIGTERM ...").
    install_stop_handler();
    o.stop = &g_stop;

    if (!global.json && !global.quiet) {
        std::cout << (a.resume
                          ? fmt::format("gpusched tune --mode autotune: resuming run {} from {}\n", a.resume,
                                        b.db_path)
                          : fmt::format("gpusched tune --mode autotune: {} ({}) for {}, device {}, {} x {} "
                                        "samples\n",
                                        b.generator_name, b.generator_path, b.gpu.name, to_string(o.device),
                                        o.iterations, b.samples))
                  << std::flush;
    }
    AutotuneDisplay display(global.quiet || global.json);
    AutotuneResult r;
    try {
        r = run_autotune(o, [&](const AutotuneStatus &st) { display(st); });
    } catch (const UnavailableError &e) {
        display.finish();
        spdlog::error("{}", e.what());
        return kExitUnavailable;
    } catch (...) {
        display.finish();
        throw;
    }
    display.finish();
    const int code = r.end == AutotuneEnd::Finished          ? kExitOk
                     : r.end == AutotuneEnd::StoppedByBudget ? kExitStoppedByBudget
                                                             : kExitInterrupted;
    if (global.json)
        print_autotune_json(r, code);
    else
        print_tuning_curve(r, code);
    return code;
}

// Log lines as samples finish and benchmarks come back.
Top5Progress top5_log_lines() {
    Top5Progress progress;
    progress.sample = [](const OneShotSample &s, int done, int total) {
        spdlog::info("sample {}/{}: {}", done, total, sample_progress(s));
    };
    progress.measured = [](const Top5Entry &e) {
        if (e.measured())
            spdlog::info("{}: median {:.4g} ms over {} reps on {} (output {})", e.label,
                         *e.measurement.median_ms, e.measurement.reps, e.measurement.device,
                         e.measurement.validation);
        else
            spdlog::warn("{}: {}: {}", e.label, to_string(e.measurement.outcome), e.measurement.error);
    };
    return progress;
}

int run_top5_command(const TuneArgs &a, const GlobalOptions &global) {
    if (a.generator_path.empty() || a.generator_name.empty())
        throw UserError("tune needs the generator executable and -g NAME");
    Top5Options opt;
    opt.executor = executor_args(a);
    const std::optional<DeviceKind> device = benchmark_device(a);
    if (!device) return kExitUnavailable;
    opt.device = *device;
    opt.batch = batch_options(a);
    opt.batch.gpu = resolve_gpu(a.gpu);
    opt.timing = timing_options(a);
    opt.top = a.top;
    opt.baselines = split_list(a.baselines);
    if (!global.json) {
        std::cout << fmt::format("gpusched tune --mode top5: {} ({}) for {} [{}], device {}\n",
                                 opt.batch.generator_name, opt.batch.generator_path, opt.batch.gpu.name,
                                 opt.batch.gpu.description, to_string(opt.device))
                  << std::flush;
    }
    if (a.executor == "slurm") {
        // Interrupted, the driver takes its jobs back (scancel) before it exits.
        install_stop_handler();
        opt.executor.stop = &g_stop;
    }
    Top5Result r;
    try {
        r = run_top5(opt, top5_log_lines());
    } catch (const UnavailableError &e) {
        spdlog::error("{}", e.what());
        return kExitUnavailable;
    } catch (const InterruptedError &e) {
        spdlog::error("{}", e.what());
        return kExitInterrupted;
    }
    if (global.json)
        print_top5_json(opt, r);
    else
        print_top5_table(r);
    return kExitOk;
}

// The options both modes share: the pipeline, the batch, the device and timing.
void add_shared_options(CLI::App *cmd, TuneArgs &args) {
    cmd->add_option("generator", args.generator_path,
                    "Halide generator executable (autotune --resume: the run's own unless given)");
    cmd->add_option("params", args.params, "Generator params, key=value");
    cmd->add_option("-g,--generator-name", args.generator_name, "Name of the generator");
    cmd->add_option("--mode", args.mode, "top5 or autotune")
        ->check(CLI::IsMember({"top5", "autotune"}))
        ->capture_default_str();
    cmd->add_option("--device", args.device,
                    "cuda (the local GPUs; default when one is visible) or opencl (POCL, the CPU's OpenCL)")
        ->check(CLI::IsMember({"cuda", "opencl"}));
    cmd->add_option("--gpu", args.gpu, "GPU profile to search for (h100, h200, a100, v100) or auto")
        ->capture_default_str();
    cmd->add_option("-o,--output", args.output_dir, "Output directory")->capture_default_str();
    cmd->add_option("--db", args.db_path,
                    "Sample database (default: $XDG_DATA_HOME/gpusched/samples.sqlite)");
    cmd->add_option("--samples", args.samples, "Samples: 1 beam search + N-1 greedy")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("-j,--jobs", args.jobs, "Parallel compile jobs (0, the default: every core)")
        ->check(CLI::Range(0, 4096));
    add_search_options(cmd, args.search);
    cmd->add_option("--baselines", args.baselines,
                    "Comma-separated schedule sources to build and time the same way: li2018,naive,manual");
    cmd->add_option("--benchmark-timeout", args.benchmark_timeout_s, "Seconds allowed per benchmark process")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--min-time", args.min_time_s, "Seconds of timed repetitions per benchmark, at least")
        ->check(finite_number_at_least(0, false))
        ->capture_default_str();
    cmd->add_option("--min-reps", args.min_reps, "Timed repetitions per benchmark, at least")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--max-reps", args.max_reps, "Timed repetitions per benchmark, at most")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--precision", args.precision,
                    "Time until the median's 95% confidence interval is within this fraction of it (0: no "
                    "such rule), --max-reps at most")
        ->check(finite_number_in(0.0, 0.99))
        ->capture_default_str();
    cmd->add_flag("--no-flush", args.no_flush,
                  "Time calls without first writing twice the device's last-level cache (the GPU's L2, "
                  "POCL's CPU cache), so a call may find the data the one before left in cache");
    cmd->add_flag("--host-clock", args.host_clock,
                  "Read each call with the host's clock even where CUDA events can be had; with --no-flush "
                  "and --precision 0, the timing before issue 56, to compare the two on the same samples");
}

// Autotune's own options (given with --mode top5, they are refused).
void add_autotune_options(CLI::App *cmd, TuneArgs &args) {
    auto autotune_only = [&](CLI::Option *o) { args.autotune_only.push_back(o); };
    autotune_only(cmd->add_option("--iterations", args.iterations, "Autotune: batches (paper: 20)")
                      ->check(whole_number_at_least(1))
                      ->capture_default_str());
    autotune_only(
        cmd->add_option("--batch", args.batch, "Autotune: samples per batch (paper: 80; default --samples)")
            ->check(whole_number_at_least(1)));
    autotune_only(cmd->add_flag("--from-scratch", args.from_scratch,
                                "Autotune: the first batch searches with random weights"));
    autotune_only(
        cmd->add_option("--train-on", args.train_on,
                        "Autotune: retrain on the run's samples, the pipeline's or the device's (all on "
                        "this device)")
            ->check(CLI::IsMember({"run", "pipeline", "device"}))
            ->capture_default_str());
    autotune_only(
        cmd->add_option("--retrain", args.retrain,
                        "Autotune: between batches, adopt every retraining (always), or only if 2-fold "
                        "cross-validation says it ranks or picks held-out samples at least as well "
                        "(if-better)")
            ->check(CLI::IsMember({"always", "if-better"}))
            ->capture_default_str());
    autotune_only(cmd->add_option("--epochs", args.epochs, "Autotune: training epochs per retraining")
                      ->check(whole_number_at_least(1))
                      ->capture_default_str());
    autotune_only(cmd->add_option("--learning-rate", args.learning_rate, "Autotune: Adam learning rate")
                      ->check(finite_number_at_least(0, true))
                      ->capture_default_str());
    autotune_only(
        cmd->add_option("--resume", args.resume, "Autotune: continue this interrupted run from the database")
            ->check(whole_number_at_least(1)));
    autotune_only(
        cmd->add_option("--time-budget", args.time_budget,
                        "Autotune: stop starting samples after this long (90s, 15m, 2h, 1h30m) and write "
                        "the best"));
    autotune_only(
        cmd->add_option("--max-samples", args.max_samples,
                        "Autotune: stop when the run has this many samples (all attempts) and write the "
                        "best")
            ->check(whole_number_at_least(1)));
}

// Where benchmarks run: this machine, or Slurm job arrays.
void add_executor_options(CLI::App *cmd, TuneArgs &args) {
    cmd->add_option(
           "--executor", args.executor,
           "Where benchmarks run: local (this machine) or slurm (sbatch job arrays; docs/cluster.md)")
        ->check(CLI::IsMember({"local", "slurm"}))
        ->capture_default_str();
    cmd->add_option("--partition", args.slurm.partition, "Slurm: the partition of the benchmark jobs");
    cmd->add_option("--account", args.slurm.account, "Slurm: the account the jobs are charged to");
    cmd->add_option("--gres", args.slurm.gres, "Slurm: generic resources per job (gpu:1 for --device cuda)");
    cmd->add_option("--time-limit", args.slurm.time_limit,
                    "Slurm: each job's time limit (sbatch --time: 10, 1:00:00)");
    cmd->add_option("--work-dir", args.slurm.work_dir,
                    "Slurm: a folder shared by the driver and every node (tasks, results, logs)");
    cmd->add_option("--max-attempts", args.slurm.max_attempts,
                    "Slurm: attempts per benchmark job, the first included, before it counts as failed")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option(
        "--worker-command", args.slurm.worker_command,
        "Slurm: the gpusched the jobs run on the nodes (default: this one, or the bundle's bin/gpusched "
        "that started it, which chooses the C library again on each node)");
}

} // namespace

Action add_tune_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<TuneArgs>();
    CLI::App *cmd =
        app.add_subcommand("tune", "Top 5 / Autotune: compile and benchmark candidates on a device");
    add_shared_options(cmd, *args);
    args->top5_only.push_back(
        cmd->add_option("--top", args->top, "Top 5: how many of the best predicted samples to benchmark")
            ->check(whole_number_at_least(1))
            ->capture_default_str());
    add_autotune_options(cmd, *args);
    add_executor_options(cmd, *args);
    for (const char *name :
         {"--iterations", "--batch",         "--samples",   "--from-scratch", "--train-on",  "--retrain",
          "--epochs",     "--learning-rate", "--gpu",       "--seed",         "--beam-size", "--passes",
          "--dropout",    "--search-config", "--weights",   "--min-time",     "--min-reps",  "--max-reps",
          "--precision",  "--no-flush",      "--host-clock"})
        args->fixed_by_run.push_back(cmd->get_option(name));
    return [args, &global]() {
        refuse_other_modes_options(*args);
        refuse_options_a_resume_keeps(*args);
        return args->mode == "autotune" ? run_autotune_command(*args, global)
                                        : run_top5_command(*args, global);
    };
}

} // namespace gpusched::cli
