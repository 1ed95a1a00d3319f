// `gpusched db`: the questions a person asks after a night of tuning - what
// ran, what is best per pipeline and GPU, what a run's samples look like -
// and CSV/JSON export.

#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/optional_json.h"
#include "cli/value_checks.h"
#include "db/export.h"
#include "db/sample_store.h"

namespace gpusched::cli {
namespace {

struct DbArgs {
    std::string db_path;
    int limit = 50;
    int64_t run_id = 0;
    std::string format = "csv";
    std::string output;
    std::optional<int64_t> export_run;
};

std::string opt_num(const std::optional<double> &v, const char *fmtstr = "{:.4g}") {
    return v ? fmt::format(fmt::runtime(fmtstr), *v) : "-";
}

// `db runs`: the newest runs, one line (or object) each.
int print_runs(db::SampleStore &store, const DbArgs &args, bool json) {
    auto rows = store.list_runs(args.limit);
    if (json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto &r : rows) {
            j.push_back({{"id", r.id},
                         {"generator", r.generator_name},
                         {"params", r.params},
                         {"target", r.target},
                         {"gpu", r.gpu},
                         {"mode", r.mode},
                         {"autoscheduler", r.autoscheduler},
                         {"status", r.status},
                         {"started_at", r.started_at},
                         {"samples", r.samples},
                         {"failed_samples", r.failed_samples},
                         {"best_sample_id", opt_json(r.best_sample_id)},
                         {"best_predicted_cost", opt_json(r.best_predicted_cost)},
                         {"best_runtime_ms", opt_json(r.best_runtime_ms)},
                         {"device", opt_json(r.device)}});
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << fmt::format(
        "{:>5}  {:<20}  {:<6}  {:<9}  {:<8}  {:<9}  {:>7}  {:>6}  {:>10}  {:>10}  {:<20}  {}\n", "run",
        "generator", "gpu", "mode", "source", "status", "samples", "failed", "predicted", "runtime ms",
        "device", "started");
    for (const auto &r : rows) {
        std::cout << fmt::format(
            "{:>5}  {:<20}  {:<6}  {:<9}  {:<8}  {:<9}  {:>7}  {:>6}  {:>10}  {:>10}  {:<20}  {}\n", r.id,
            r.generator_name, r.gpu, r.mode, r.autoscheduler, r.status, r.samples, r.failed_samples,
            opt_num(r.best_predicted_cost), opt_num(r.best_runtime_ms), r.device.value_or("-"), r.started_at);
    }
    return kExitOk;
}

// `db best`: the best sample per pipeline and measuring device.
int print_best(db::SampleStore &store, bool json) {
    auto rows = store.best_per_pipeline();
    if (json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto &b : rows) {
            j.push_back({{"generator", b.generator_name},
                         {"params", b.params},
                         {"target", b.target},
                         {"gpu", b.gpu},
                         {"sample_id", b.sample_id},
                         {"run_id", b.run_id},
                         {"mode", b.mode},
                         {"autoscheduler", b.autoscheduler},
                         {"runtime_ms", opt_json(b.runtime_ms)},
                         {"predicted_cost", opt_json(b.predicted_cost)},
                         {"device", opt_json(b.device)}});
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << fmt::format("{:<20}  {:<6}  {:<24}  {:<24}  {:>6}  {:>6}  {:<9}  {:<8}  {:>10}  {:>10}\n",
                             "generator", "gpu", "params", "device", "run", "sample", "mode", "source",
                             "runtime ms", "predicted");
    for (const auto &b : rows) {
        std::cout << fmt::format(
            "{:<20}  {:<6}  {:<24}  {:<24}  {:>6}  {:>6}  {:<9}  {:<8}  {:>10}  {:>10}\n", b.generator_name,
            b.gpu, b.params, b.device.value_or("(not measured)"), b.run_id, b.sample_id, b.mode,
            b.autoscheduler, opt_num(b.runtime_ms), opt_num(b.predicted_cost));
    }
    return kExitOk;
}

// `db stats`: per pipeline and device, with each run's rank correlations
// and an Autotune run's learning curve.
int print_stats(db::SampleStore &store, bool json) {
    auto rows = store.stats();
    if (json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto &g : rows) {
            nlohmann::json runs_json = nlohmann::json::array();
            for (const auto &r : g.runs) {
                nlohmann::json rj = {{"run_id", r.run_id},
                                     {"mode", r.mode},
                                     {"autoscheduler", r.autoscheduler},
                                     {"measured", r.measured},
                                     {"spearman", opt_json(r.spearman)},
                                     {"kendall", opt_json(r.kendall)}};
                if (r.mode == "autotune") {
                    rj["batches"] = nlohmann::json::array();
                    for (const auto &b : store.autotune_batches(r.run_id)) {
                        rj["batches"].push_back({{"batch", b.batch},
                                                 {"status", b.status},
                                                 {"weights_id", opt_json(b.weights_id)},
                                                 {"samples", b.samples},
                                                 {"measured", b.measured},
                                                 {"failed", b.failed},
                                                 {"spilled", b.spilled},
                                                 {"best_ms", opt_json(b.best_ms)},
                                                 {"spearman", opt_json(b.spearman)},
                                                 {"kendall", opt_json(b.kendall)},
                                                 {"regret", opt_json(b.regret)}});
                    }
                }
                runs_json.push_back(rj);
            }
            j.push_back({{"generator", g.generator_name},
                         {"params", g.params},
                         {"gpu", g.gpu},
                         {"device", opt_json(g.device)},
                         {"samples", g.samples},
                         {"measured", g.measured},
                         {"failed", g.failed},
                         {"spilled", g.spilled},
                         {"best_ms", opt_json(g.best_ms)},
                         {"median_ms", opt_json(g.median_ms)},
                         {"runs", runs_json}});
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    for (const auto &g : rows) {
        std::cout << fmt::format("{} {} for {} on {}: {} samples, {} measured, {} failed, {} spilled; "
                                 "best {} ms, median {} ms\n",
                                 g.generator_name, g.params, g.gpu, g.device.value_or("(not measured)"),
                                 g.samples, g.measured, g.failed, g.spilled, opt_num(g.best_ms),
                                 opt_num(g.median_ms));
        for (const auto &r : g.runs) {
            if (r.measured == 0) continue;
            std::cout << fmt::format(
                "  run {:>4} {:<8} {:<8} {:>4} measured  Spearman {:>6}  Kendall {:>6}\n", r.run_id, r.mode,
                r.autoscheduler, r.measured, opt_num(r.spearman, "{:.3f}"), opt_num(r.kendall, "{:.3f}"));
            if (r.mode != "autotune") continue;
            // The learning curve: each batch's weights against its measured times.
            for (const auto &b : store.autotune_batches(r.run_id)) {
                std::cout << fmt::format(
                    "    batch {:>3} {:<8} {:>4} measured {:>3} failed {:>3} spilled  best {:>9} ms  "
                    "Spearman {:>6}  Kendall {:>6}  regret {:>5}  weights {}\n",
                    b.batch, b.status, b.measured, b.failed, b.spilled, opt_num(b.best_ms),
                    opt_num(b.spearman, "{:.3f}"), opt_num(b.kendall, "{:.3f}"), opt_num(b.regret, "{:.2f}"),
                    b.weights_id ? std::to_string(*b.weights_id) : "embedded");
            }
        }
    }
    return kExitOk;
}

// `db samples RUN`.
int print_samples(db::Database &database, db::SampleStore &store, const DbArgs &args, const std::string &path,
                  bool json) {
    auto rows = store.samples_of_run(args.run_id);
    if (rows.empty()) {
        std::cerr << "error: run " << args.run_id << " has no samples in " << path << "\n";
        return kExitError;
    }
    std::cout << db::export_samples(database, json ? db::ExportFormat::Json : db::ExportFormat::Csv,
                                    args.run_id);
    return kExitOk;
}

// `db export`.
int write_export(db::Database &database, db::SampleStore &store, const DbArgs &args,
                 const std::string &path) {
    if (args.export_run && !store.find_run(*args.export_run)) {
        std::cerr << "error: --run " << *args.export_run << ": no such run in " << path << "\n";
        return kExitError;
    }
    const std::string text = db::export_samples(
        database, args.format == "json" ? db::ExportFormat::Json : db::ExportFormat::Csv, args.export_run);
    if (args.output.empty()) {
        std::cout << text;
    } else {
        std::ofstream f(args.output);
        f << text;
        if (!f) {
            std::cerr << "error: cannot write '" << args.output << "'\n";
            return kExitError;
        }
    }
    return kExitOk;
}

} // namespace

Action add_db_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<DbArgs>();
    CLI::App *cmd = app.add_subcommand("db", "Query the sample database");
    cmd->require_subcommand(1);
    cmd->add_option("--db", args->db_path,
                    "Sample database (default: $XDG_DATA_HOME/gpusched/samples.sqlite)");
    CLI::App *runs = cmd->add_subcommand("runs", "Runs, newest first");
    runs->add_option("--limit", args->limit, "How many")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    CLI::App *best =
        cmd->add_subcommand("best", "Best sample per pipeline and measuring device (measured first)");
    CLI::App *stats = cmd->add_subcommand(
        "stats",
        "Per pipeline and device: samples measured/failed/spilled, best and median time, and each run's "
        "predicted-vs-measured rank correlation");
    CLI::App *samples = cmd->add_subcommand("samples", "The samples of one run");
    samples->add_option("run", args->run_id, "Run id")->check(whole_number_at_least(1))->required();
    CLI::App *exp = cmd->add_subcommand("export", "Export samples as CSV or JSON");
    exp->add_option("--format", args->format, "csv or json")
        ->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    exp->add_option("--run", args->export_run, "Only this run")->check(whole_number_at_least(1));
    exp->add_option("-o,--output", args->output, "Write to this file instead of stdout");

    return [args, &global, runs, best, stats, samples, exp]() {
        const std::string path = args->db_path.empty() ? db::default_database_path() : args->db_path;
        db::Database database = db::Database::open_existing(path);
        db::SampleStore store(database);
        if (runs->parsed()) return print_runs(store, *args, global.json);
        if (best->parsed()) return print_best(store, global.json);
        if (stats->parsed()) return print_stats(store, global.json);
        if (samples->parsed()) return print_samples(database, store, *args, path, global.json);
        if (exp->parsed()) return write_export(database, store, *args, path);
        return kExitError;
    };
}

} // namespace gpusched::cli
