// `gpusched nightly CONFIG`: a night of tuning from cron (tuner/modes/nightly/
// nightly.h, docs/cron.md). Logs go to stderr and to the config's log file,
// every line with a timestamp and no terminal control; the summary goes to
// stdout (text, or one JSON object with --json). Exit codes (docs/cron.md,
// docs/user-guide.md): 0 every pipeline tuned, 1 a bad config or nothing
// tuned, 2 no pipeline's device is usable here, 4 some pipelines failed,
// 75 another instance holds the lock, 130 interrupted.

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/optional_json.h"
#include "tuner/modes/nightly/nightly.h"
#include "tuner/modes/nightly/run_lock.h"
#include "tuner/report/html_report.h"

namespace gpusched::cli {

namespace {

constexpr int kExitSomeFailed = 4;
constexpr int kExitLocked = 75; // EX_TEMPFAIL (sysexits.h): try again later

std::atomic<bool> g_nightly_stop{false};
extern "C" void request_nightly_stop(int) {
    g_nightly_stop.store(true);
}

int exit_code(const NightlySummary &s) {
    if (s.interrupted) return kExitInterrupted;
    int tuned = 0, unavailable = 0, failed = 0;
    for (const auto &p : s.pipelines) {
        if (p.status == "tuned")
            ++tuned;
        else if (p.status == "unavailable")
            ++unavailable;
        else if (p.status == "failed")
            ++failed;
    }
    if (tuned == 0 && unavailable > 0 && failed == 0) return kExitUnavailable;
    if (tuned == 0 && (unavailable > 0 || failed > 0)) return kExitError;
    if (unavailable > 0 || failed > 0) return kExitSomeFailed;
    return kExitOk;
}

nlohmann::json summary_json(const NightlySummary &s, const std::string &report, int code) {
    nlohmann::json pipelines = nlohmann::json::array();
    for (const auto &p : s.pipelines) {
        pipelines.push_back(
            {{"name", p.name},
             {"mode", p.mode},
             {"status", p.status},
             {"device", p.device},
             {"budget_s", p.budget_s},
             {"seconds", p.seconds},
             {"run_id", p.run_id},
             {"resumed", p.resumed},
             {"samples", p.samples},
             {"samples_tonight", p.samples_tonight},
             {"best_sample_id", opt_json(p.best_sample_id)},
             {"best_ms", opt_json(p.best_ms)},
             {"best_min_ms", opt_json(p.best_min_ms)},
             {"best_reps", p.best_reps},
             {"stopped_by", p.stopped_by},
             {"files", p.files},
             {"kept_baseline", p.kept_baseline.empty() ? nlohmann::json() : nlohmann::json(p.kept_baseline)},
             {"promoted", p.promoted},
             {"promotion", p.promotion},
             {"error", p.error}});
    }
    nlohmann::json retrained = nlohmann::json::array();
    for (const auto &d : s.retrained) {
        for (const auto &m : d.models) {
            retrained.push_back({{"device", d.device},
                                 {"held_out", m.held_out},
                                 {"path", m.path},
                                 {"weights_id", opt_json(m.weights_id)},
                                 {"samples", m.samples},
                                 {"pipelines", m.pipelines},
                                 {"error", m.error}});
        }
    }
    return {{"config", s.config},
            {"database", s.database},
            {"schedules", s.schedules},
            {"started_at", s.started_at},
            {"budget_s", s.budget_s},
            {"seconds", s.seconds},
            {"interrupted", s.interrupted},
            {"exit_code", code},
            {"pipelines", pipelines},
            {"retrained", retrained},
            {"retrain_skipped", s.retrain_skipped},
            {"report", report}};
}

void print_summary(const NightlySummary &s, const std::string &report, int code) {
    std::cout << fmt::format("gpusched nightly {}: started {}, {:.0f} s of a {:.0f} s budget{}\n", s.config,
                             s.started_at, s.seconds, s.budget_s, s.interrupted ? ", interrupted" : "");
    std::cout << fmt::format("  {:<20} {:<8} {:<11} {:>5} {:>8} {:>9} {:>11}  {}\n", "pipeline", "mode",
                             "status", "run", "samples", "tonight", "best ms", "promoted");
    for (const auto &p : s.pipelines) {
        std::cout << fmt::format(
            "  {:<20} {:<8} {:<11} {:>5} {:>8} {:>9} {:>11}  {}\n", p.name, p.mode, p.status,
            p.run_id ? std::to_string(p.run_id) + (p.resumed ? "*" : "") : "-", p.samples, p.samples_tonight,
            p.best_ms ? fmt::format("{:.4g}", *p.best_ms) : "-", p.promoted ? "yes" : "no");
    }
    std::cout << "  (* continued from an earlier night)\n\n";
    for (const auto &p : s.pipelines) {
        std::cout << fmt::format("  {}: {}\n", p.name, p.promotion);
        if (!p.error.empty()) std::cout << fmt::format("    {}: {}\n", p.status, p.error);
        if (!p.stopped_by.empty())
            std::cout << fmt::format("    stopped by the {}; continued next night\n", p.stopped_by);
    }
    std::cout << "\nModels retrained (hold-one-out per pipeline):\n";
    if (s.retrained.empty()) std::cout << "  none: " << s.retrain_skipped << "\n";
    for (const auto &d : s.retrained) {
        for (const auto &m : d.models) {
            const std::string what = m.held_out.empty() ? "every pipeline" : "without " + m.held_out;
            if (m.weights_id)
                std::cout << fmt::format("  {} on {}: {} samples of {} pipelines, weights {} ({})\n", what,
                                         d.device, m.samples, m.pipelines, *m.weights_id, m.path);
            else
                std::cout << fmt::format("  {} on {}: not trained: {}\n", what, d.device, m.error);
        }
    }
    std::cout << fmt::format("\nReport: {}\nExit {}\n", report, code);
}

} // namespace

Action add_nightly_command(CLI::App &app, const GlobalOptions &global) {
    auto config_path = std::make_shared<std::string>();
    CLI::App *cmd = app.add_subcommand(
        "nightly",
        "Tune the pipelines of a config within a time budget, retrain, promote (for cron; docs/cron.md)");
    cmd->add_option("config", *config_path, "The nightly config (JSON; docs/cron.md)")->required();

    return [config_path, &global]() {
        const NightlyConfig config = load_nightly_config(*config_path);
        // Every line timestamped (cron mails and log files have no other
        // clock), and the config's log file appended to.
        add_timestamped_log_file(config.log);

        struct sigaction sa {};
        sa.sa_handler = request_nightly_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);

        NightlyOptions options;
        options.stop = &g_nightly_stop;
        options.gpusched_version = version_string();
        options.log = [](NightlyLogLevel level, const std::string &line) {
            if (level == NightlyLogLevel::Debug)
                spdlog::debug("{}", line);
            else if (level == NightlyLogLevel::Warn)
                spdlog::warn("{}", line);
            else
                spdlog::info("{}", line);
        };
        NightlySummary summary;
        try {
            summary = run_nightly(config, options);
        } catch (const LockHeldError &e) {
            spdlog::error("{}", e.what());
            return kExitLocked;
        }

        // The HTML report of the whole database: a run continued tonight
        // started on an earlier night, and the morning's reader wants each
        // pipeline's history, not only tonight's samples. A report that
        // cannot be written is said in the summary; the night's tuning and
        // promotions stand.
        std::string report = "none configured";
        if (!config.report.empty()) {
            try {
                const report::ReportWritten w =
                    report::write_report(config.database, report::ReportFilter{}, config.report,
                                         "gpusched " + version_string() + " nightly");
                report = config.report + " (" + std::to_string(w.runs) + " runs, " +
                         std::to_string(w.groups) + " pipeline x device sections)";
                spdlog::info("report written to {}", config.report);
            } catch (const std::exception &e) {
                report = "not written: " + std::string(e.what());
                spdlog::warn("report not written: {}", e.what());
            }
        }

        const int code = exit_code(summary);
        if (global.json)
            std::cout << summary_json(summary, report, code).dump(2) << "\n";
        else
            print_summary(summary, report, code);
        spdlog::info("nightly done, exit {}", code);
        return code;
    };
}

} // namespace gpusched::cli
