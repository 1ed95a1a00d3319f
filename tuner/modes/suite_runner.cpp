#include "tuner/modes/suite_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tuner/generate/autoschedulers.h"
#include "tuner/modes/oneshot.h"
#include "tuner/report_stamp.h"
#include "tuner/subprocess.h"

namespace gpusched {
namespace fs = std::filesystem;

std::vector<SuiteApp> read_suite_manifest(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw UserError("cannot read suite manifest '" + path + "'");
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("apps") || !j["apps"].is_array())
        throw UserError("suite manifest '" + path + "' must be a JSON object with an \"apps\" array");
    std::vector<SuiteApp> apps;
    for (const auto &a : j["apps"]) {
        SuiteApp app;
        try {
            app.name = a.at("name").get<std::string>();
            app.generator = a.at("generator").get<std::string>();
            app.generator_name = a.at("generator_name").get<std::string>();
            if (a.contains("params")) {
                const nlohmann::json &params = a.at("params");
                if (!params.is_object())
                    throw UserError("suite manifest '" + path + "': params of '" + app.name +
                                    "' must be an object");
                for (auto it = params.begin(); it != params.end(); ++it)
                    app.params[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
            }
        } catch (const nlohmann::json::exception &e) {
            throw UserError("suite manifest '" + path +
                            "': an app entry needs name, generator and generator_name (" + e.what() + ")");
        }
        apps.push_back(std::move(app));
    }
    return apps;
}

namespace {

std::optional<double> stat(const nlohmann::json &record, const char *key) {
    if (!record.is_object() || !record.contains("statistics")) return std::nullopt;
    const auto &s = record["statistics"];
    if (!s.contains(key) || !s[key].is_number()) return std::nullopt;
    return s[key].get<double>();
}

std::string fmt_opt(const std::optional<double> &v, int precision = 2) {
    if (!v) return "—";
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(precision);
    s << *v;
    return s.str();
}

} // namespace

std::vector<SuiteCell> run_suite(const SuiteOptions &opt, const SuiteProgress &progress) {
    std::vector<SuiteApp> all = read_suite_manifest(opt.manifest);
    std::vector<SuiteApp> apps;
    if (opt.apps.empty()) {
        apps = all;
    } else {
        for (const auto &name : opt.apps) {
            auto it = std::find_if(all.begin(), all.end(), [&](const SuiteApp &a) { return a.name == name; });
            if (it == all.end()) throw UserError("no app named '" + name + "' in '" + opt.manifest + "'");
            apps.push_back(*it);
        }
    }
    for (const auto &s : opt.sources)
        if (const std::string why = schedule_source_unavailable(s); !why.empty()) throw UserError(why);
    for (const auto &a : apps) {
        const std::string gen = opt.build_dir + "/" + a.generator;
        if (!fs::exists(gen))
            throw UserError("generator of '" + a.name + "' not found at '" + gen +
                            "' (build with GPUSCHED_BUILD_BENCHMARKS=ON, or pass --build-dir)");
    }

    std::vector<SuiteCell> cells;
    const int total = static_cast<int>(apps.size() * opt.sources.size());
    for (const auto &app : apps) {
        for (const auto &source : opt.sources) {
            SuiteCell cell;
            cell.app = app.name;
            cell.source = source;
            OneShotOptions o;
            o.generator_path = opt.build_dir + "/" + app.generator;
            o.generator_name = app.generator_name;
            o.generator_params = app.params;
            o.gpu = opt.gpu;
            o.schedule_source = source;
            o.output_dir = opt.work_dir + "/" + app.name + "/" + source;
            o.db_path = opt.db_path;
            o.samples = opt.samples;
            o.jobs = opt.jobs;
            o.validate = opt.validate;
            o.timeout = opt.timeout;
            o.gpusched_version = opt.gpusched_version;
            try {
                OneShotResult r = run_oneshot(o);
                const OneShotSample &best = r.samples[*r.best];
                cell.ok = true;
                cell.run_id = r.run_id;
                cell.wall_seconds = r.wall_seconds;
                cell.search_seconds = best.search_seconds;
                if (best.generator.process.started)
                    cell.compile_seconds =
                        best.generator.process.wall_seconds - best.search_seconds.value_or(0.0);
                cell.states_featurized = stat(best.record, "states_featurized");
                for (const auto &s : r.samples) {
                    if (auto m = stat(s.record, "peak_rss_mb"))
                        cell.peak_rss_mb = std::max(cell.peak_rss_mb.value_or(0.0), *m);
                }
                cell.predicted_cost = best.predicted_cost;
                if (best.record.is_object() && best.record.contains("roofline"))
                    cell.roofline_ms = best.record["roofline"].value("bound_ms", 0.0);
                cell.gpu_fill = best.gpu_fill;
                if (best.record.is_object() && best.record.contains("reduction_splits") &&
                    best.record["reduction_splits"].is_array())
                    cell.splits = static_cast<int>(best.record["reduction_splits"].size());
                cell.kernels = static_cast<int>(best.ptxas.kernels.size());
                for (const auto &k : best.ptxas.kernels)
                    cell.max_registers = std::max(cell.max_registers, k.registers);
                cell.spill_bytes = best.ptxas.total_spill_bytes();
                cell.ptxas = to_string(best.ptxas.status);
                cell.validation = best.validation;
            } catch (const std::exception &e) {
                cell.error = e.what();
            }
            cells.push_back(cell);
            if (progress) progress(cells.back(), static_cast<int>(cells.size()), total);
        }
    }
    return cells;
}

namespace {

std::string fill_text(const std::optional<GpuFillSummary> &f, bool least) {
    return f ? fill_percent(least ? f->least : f->weighted) : "—";
}

} // namespace

std::string suite_report_markdown(const SuiteOptions &opt, const std::vector<SuiteCell> &cells,
                                  const std::string &command_line) {
    std::ostringstream md;
    md << "# Benchmark suite: " << opt.gpu.name << "\n\n";
    md << "Produced by:\n\n```sh\n" << command_line << "\n```\n\n";
    md << "on " << machine_description() << ", " << utc_timestamp() << ", gpusched " << opt.gpusched_version
       << ". GPU profile " << opt.gpu.name << " (" << opt.gpu.description
       << "); ptxas -arch=" << opt.gpu.ptxas_arch() << ". gpusched rows are One Shot with " << opt.samples
       << " samples (1 beam search + greedy); search figures are those of the chosen sample, peak memory the "
          "largest of any sample's search process. Runtime needs a GPU: `—` means it was not benchmarked "
          "here.\n\n";
    md << "GPU fill (docs/search.md): the threads each stage launches against the GPU's resident threads, "
          "weighted by work, then the least over stages with 1% of the work or more (gpusched rows only); "
          "splits: reductions split across threads.\n\n";
    md << "Roofline (core/roofline.h): a lower bound on any schedule's time on this profile, the "
          "pipeline's inputs read and outputs written once at its DRAM bandwidth or its operations at "
          "its peak FP32 rate, whichever is longer (from the gpusched row's search; `—` without one); "
          "x roofline: the runtime over it.\n\n";
    // The bound is the pipeline's, whatever the source: every row of an app shows its gpusched row's.
    std::map<std::string, double> roofline;
    for (const auto &c : cells)
        if (c.roofline_ms && *c.roofline_ms > 0) roofline[c.app] = *c.roofline_ms;
    md << "| app | source | search s | states featurized | peak MiB | compile s | GPU fill | least fill | "
          "splits "
          "| kernels | max regs | spill B | ptxas | validation | runtime ms | roofline ms | x roofline | run "
          "|\n";
    md << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n";
    for (const auto &c : cells) {
        if (!c.ok) {
            std::string err = c.error;
            std::replace(err.begin(), err.end(), '|', '/');
            std::replace(err.begin(), err.end(), '\n', ' ');
            if (err.size() > 160) err = err.substr(0, 157) + "...";
            md << "| " << c.app << " | " << c.source << " | failed: " << err
               << " | | | | | | | | | | | | | | | |\n";
            continue;
        }
        md << "| " << c.app << " | " << c.source << " | " << fmt_opt(c.search_seconds) << " | "
           << fmt_opt(c.states_featurized, 0) << " | " << fmt_opt(c.peak_rss_mb, 0) << " | "
           << fmt_opt(c.compile_seconds, 1) << " | " << fill_text(c.gpu_fill, false) << " | "
           << fill_text(c.gpu_fill, true) << " | "
           << (c.source == "gpusched" ? std::to_string(c.splits) : "—") << " | " << c.kernels << " | "
           << c.max_registers << " | " << c.spill_bytes << " | " << c.ptxas << " | " << c.validation << " | "
           << fmt_opt(c.runtime_ms, 3) << " | ";
        const auto bound = roofline.find(c.app);
        const std::optional<double> bound_ms =
            bound == roofline.end() ? std::nullopt : std::optional<double>(bound->second);
        std::ostringstream bound_text;
        bound_text.precision(3);
        if (bound_ms) bound_text << *bound_ms;
        std::optional<double> over_bound;
        if (bound_ms && c.runtime_ms) over_bound = *c.runtime_ms / *bound_ms;
        md << (bound_ms ? bound_text.str() : "—") << " | " << fmt_opt(over_bound, 1) << " | " << c.run_id
           << " |\n";
    }
    return md.str();
}

} // namespace gpusched
