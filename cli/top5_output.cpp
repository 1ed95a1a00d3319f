#include "cli/top5_output.h"

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/optional_json.h"

namespace gpusched::cli {

std::string format_ms(const std::optional<double> &v) {
    return v ? fmt::format("{:.4g}", *v) : "-";
}

namespace {

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
    if (!e.execution.is_null()) j["execution"] = e.execution;
    j["predicted_rank"] = e.predicted_rank ? nlohmann::json(e.predicted_rank) : nlohmann::json(nullptr);
    j["predicted_cost"] = e.predicted_cost ? nlohmann::json(*e.predicted_cost) : nlohmann::json(nullptr);
    if (!e.build.ok) j["build_error"] = e.build.error;
    return j;
}

std::optional<double> speedup(const Top5Result &r, const Top5Entry &baseline) {
    if (!r.best || !baseline.measured()) return std::nullopt;
    return *baseline.measurement.median_ms / *r.benchmarked[*r.best].measurement.median_ms;
}

// The pipeline's roofline on the GPU profile (core/roofline.h), from the
// first sample's search record; none without one.
std::optional<double> profile_roofline_ms(const Top5Result &r) {
    for (const auto &s : r.samples)
        if (s.record.is_object() && s.record.contains("roofline")) {
            const double ms = s.record["roofline"].value("bound_ms", 0.0);
            if (ms > 0) return ms;
        }
    return std::nullopt;
}

// The roofline the measured times are judged against: none where they are
// not a GPU's (POCL's are a CPU's: a GPU's bound says nothing of them).
std::optional<double> roofline_ms(const Top5Result &r) {
    if (r.benchmark_target.find("cuda") == std::string::npos) return std::nullopt;
    return profile_roofline_ms(r);
}

} // namespace

void print_top5_table(const Top5Result &r) {
    std::cout << fmt::format("\nBenchmarked on {} ({}); spill check: {}\n", r.device, r.benchmark_target,
                             r.spill_check);
    const std::optional<double> bound = roofline_ms(r);
    if (bound)
        std::cout << fmt::format(
            "Roofline of the GPU profile (no schedule runs faster; core/roofline.h): {:.4g} ms; "
            "x roofline: each median over it\n",
            *bound);
    // The schedule column fits the longest label ("anderson2021-paper").
    std::size_t label_width = std::string("schedule").size();
    for (const auto *list : {&r.benchmarked, &r.baselines})
        for (const auto &e : *list)
            label_width = std::max(label_width, e.label.size());
    std::cout << fmt::format("  {:>4}  {:<{}}  {:>10}  {:>10}  {:>10}  {:>10}  {:>5}  {:<10}  {:>6}  {}\n",
                             "rank", "schedule", label_width, "predicted", "min ms", "median ms",
                             "x roofline", "reps", "validation", "spills", "status");
    auto row = [&](const Top5Entry &e, const std::string &rank, bool chosen) {
        std::cout << fmt::format(
            "  {:>4}  {:<{}}  {:>10}  {:>10}  {:>10}  {:>10}  {:>5}  {:<10}  {:>6}  {}{}\n", rank, e.label,
            label_width, e.predicted_cost ? fmt::format("{:.4g}", *e.predicted_cost) : "-",
            format_ms(e.measurement.min_ms), format_ms(e.measurement.median_ms),
            bound && e.measurement.median_ms ? fmt::format("{:.1f}", *e.measurement.median_ms / *bound) : "-",
            e.measured() ? std::to_string(e.measurement.reps) : "-", validation_text(e),
            e.ptxas_status == "checked" ? std::to_string(e.spill_bytes) : "-", entry_status(e),
            chosen ? "  <- chosen" : "");
    };
    for (std::size_t i = 0; i < r.benchmarked.size(); ++i)
        row(r.benchmarked[i], std::to_string(r.benchmarked[i].predicted_rank),
            !r.kept_baseline && r.best && *r.best == i);
    for (std::size_t i = 0; i < r.baselines.size(); ++i)
        row(r.baselines[i], "-", r.kept_baseline && *r.kept_baseline == i);
    for (const std::string &line : sample_failure_lines(r.samples))
        std::cout << "  " << line << "\n";
    for (const auto &e : r.benchmarked)
        if (!e.measured())
            std::cout << fmt::format("  {} {}: {}\n", e.label, to_string(e.measurement.outcome),
                                     e.measurement.error);
    for (const auto &e : r.baselines)
        if (!e.measured())
            std::cout << fmt::format("  {} {}: {}\n", e.label, to_string(e.measurement.outcome),
                                     e.measurement.error);
    if (!r.baselines.empty()) {
        std::cout << "\nMeasured speedup of the best sample (median over median, same device):\n";
        for (const auto &b : r.baselines) {
            auto s = speedup(r, b);
            std::cout << fmt::format("  over {:<{}} {}\n", b.label, label_width,
                                     s ? fmt::format("{:.2f}x", *s) : "- (not measured)");
        }
    }
    if (r.kept_baseline) {
        const Top5Entry &kept = r.baselines[*r.kept_baseline];
        std::cout << fmt::format(
            "\nKept the {} baseline: measured {} ms, faster than the best sample's {} ms "
            "(the run's kept_source in the database says so).\n",
            kept.label, format_ms(kept.measurement.median_ms),
            format_ms(r.benchmarked[*r.best].measurement.median_ms));
        std::cout << fmt::format("\nLibrary of the kept {} schedule:\n", kept.label);
    } else {
        std::cout << "\nSchedule and library of the chosen sample:\n";
    }
    for (const auto &f : r.best_files)
        std::cout << "  " << f << "\n";
    std::cout << fmt::format("\nStored as run {} in {} ({:.1f} s)\n", r.run_id, r.db_path, r.wall_seconds);
}

void print_top5_json(const Top5Options &opt, const Top5Result &r) {
    const OneShotOptions &b = opt.batch;
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
    j["chosen"] = r.kept_baseline ? nlohmann::json(r.baselines[*r.kept_baseline].label)
                  : r.best        ? nlohmann::json(r.benchmarked[*r.best].label)
                                  : nlohmann::json(nullptr);
    j["kept_baseline"] = r.kept_baseline.has_value();
    j["roofline_ms"] = opt_json(roofline_ms(r));
    j["profile_roofline_ms"] = opt_json(profile_roofline_ms(r));
    std::cout << j.dump(2) << "\n";
}

} // namespace gpusched::cli
