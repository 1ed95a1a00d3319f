#include "tuner/report/html_report.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "common/errors.h"
#include "tuner/report/html_text.h"
#include "tuner/report/learning_section.h"
#include "tuner/report/svg_plot.h"

namespace gpusched::report {
namespace {

namespace fs = std::filesystem;

// Axes switch to log scale when the values span more than this ratio: below
// it a linear axis reads more easily, above it the fast samples would be
// squashed against the axis.
constexpr double kLogRatio = 20;

const char *kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 0; color: #1d2330;
       background: #f4f5f7; line-height: 1.4; }
main { max-width: 1260px; margin: 0 auto; padding: 16px 24px 48px; }
header { background: #1d2330; color: #fff; padding: 18px 24px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: #c9cfdb; font-size: 13px; }
h2 { font-size: 19px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
h4 { font-size: 13px; margin: 12px 0 4px; }
section.card { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 4px 18px 14px; margin: 16px 0; }
.meta { color: #566074; font-size: 13px; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre.schedule { background: #f7f8fa; border: 1px solid #e3e6eb; padding: 10px; overflow-x: auto; max-height: 420px;
               white-space: pre; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 10px; }
th, td { border-bottom: 1px solid #e3e6eb; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; }
table.runs td, table.runs th, table.speedups td { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.reason { max-width: 640px; word-break: break-word; }
td.blank { color: #9aa3b2; }
.faster { color: #1a7f37; font-weight: 600; }
.slower { color: #b42318; font-weight: 600; }
.stats { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0; }
.stat { background: #f7f8fa; border: 1px solid #e3e6eb; border-radius: 4px; padding: 6px 12px; min-width: 90px; }
.stat b { display: block; font-size: 17px; }
.stat span { color: #566074; font-size: 12px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
svg.plot { background: #fff; border: 1px solid #e3e6eb; border-radius: 4px; }
svg .frame { fill: #fbfbfc; stroke: #8a93a3; }
svg .grid { stroke: #e6e8ec; }
svg .tick { stroke: #8a93a3; }
svg .tick-label { font-size: 11px; fill: #3a4252; }
svg .axis-label { font-size: 12px; fill: #1d2330; }
svg .plot-title { font-size: 13px; font-weight: 600; fill: #1d2330; }
svg .vmarker { stroke: #888; stroke-dasharray: 4 3; }
svg .vmarker-label { font-size: 10px; fill: #666; }
svg .legend text { font-size: 11px; fill: #1d2330; }
svg circle.point { stroke: #fff; stroke-width: 0.75; }
nav ul { margin: 4px 0; padding-left: 20px; columns: 2; font-size: 13px; }
.note { color: #566074; font-size: 13px; font-style: italic; }
)css";

std::string esc(const std::string &s) {
    return escape_html(s);
}

std::string num_cell(const std::optional<double> &v) {
    return v ? "<td class=\"num\">" + format_number(*v) + "</td>" : "<td class=\"num blank\">&ndash;</td>";
}

std::string num_cell(int64_t v) {
    return "<td class=\"num\">" + std::to_string(v) + "</td>";
}

std::string cell(const std::string &text) {
    return "<td>" + esc(text) + "</td>";
}

std::string utc_now() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

// The database's "2026-11-23T06:45:58.701Z" as "2026-11-23 06:45:58".
std::string readable_time(const std::string &iso) {
    if (iso.size() < 19 || iso[10] != 'T') return iso;
    return iso.substr(0, 10) + " " + iso.substr(11, 8);
}

std::string device_label(const std::string &device) {
    return device.empty() ? "(not measured)" : device;
}

bool wants_log(const std::vector<double> &values) {
    if (values.empty()) return false;
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    return *mn > 0 && *mx / *mn > kLogRatio;
}

// "1.59x" coloured by which side is faster.
std::string speedup_html(double baseline_ms, double best_ms) {
    const double s = baseline_ms / best_ms;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f&times;", s);
    return std::string("<span class=\"") + (s >= 1 ? "faster" : "slower") + "\">" + buf + "</span>";
}

std::set<std::string> baseline_sources(const ReportData &data) {
    // The paper's three baselines always have a column (blank when not
    // measured), and any other source the database holds gets one too.
    std::set<std::string> out = {"naive", "li2018", "manual"};
    for (const auto &g : data.groups)
        for (const auto &[source, t] : g.baselines)
            out.insert(source);
    return out;
}

std::string best_measured_cell(const DeviceGroup &g) {
    if (!g.winner || !g.winner->runtime_ms) return "<td class=\"num blank\">&ndash;</td>";
    return "<td class=\"num\">" + format_number(*g.winner->runtime_ms) + "</td>";
}

std::string speedup_table(const ReportData &data) {
    const std::set<std::string> sources = baseline_sources(data);
    std::string s =
        "<section class=\"card\" id=\"speedups\"><h2>Speedup over the measured baselines</h2>\n"
        "<p class=\"meta\">Median time of each group's fastest gpusched sample against the newest "
        "measured run of each baseline on the same pipeline and device (times of different devices "
        "are never compared). A blank cell: that baseline was not measured there.</p>\n"
        "<table class=\"speedups\"><thead><tr><th>pipeline</th><th>params</th><th>GPU profile</th>"
        "<th>device</th><th class=\"num\">gpusched (ms)</th>";
    for (const auto &src : sources)
        s += "<th class=\"num\">" + esc(src) + " (ms)</th>";
    s += "</tr></thead><tbody>\n";
    for (std::size_t i = 0; i < data.groups.size(); ++i) {
        const DeviceGroup &g = data.groups[i];
        s += "<tr data-group=\"g" + std::to_string(i + 1) + "\"><td><a href=\"#g" + std::to_string(i + 1) +
             "\">" + esc(g.pipeline.generator_name) + "</a></td>" + cell(g.pipeline.params) +
             cell(g.pipeline.gpu) + cell(device_label(g.device)) + best_measured_cell(g);
        for (const auto &src : sources) {
            auto it = g.baselines.find(src);
            if (it == g.baselines.end()) {
                s += "<td class=\"num blank\" data-baseline=\"" + esc(src) + "\"></td>";
                continue;
            }
            s += "<td class=\"num\" data-baseline=\"" + esc(src) + "\">" +
                 format_number(it->second.runtime_ms);
            if (g.winner && g.winner->runtime_ms)
                s += " &middot; " + speedup_html(it->second.runtime_ms, *g.winner->runtime_ms);
            s += "</td>";
        }
        s += "</tr>\n";
    }
    return s + "</tbody></table></section>\n";
}

std::string runs_table(const ReportData &data) {
    std::string s =
        "<section class=\"card\" id=\"runs\"><h2>Runs</h2>\n<table class=\"runs\"><thead><tr>"
        "<th class=\"num\">run</th><th>pipeline</th><th>GPU profile</th><th>mode</th><th>source</th>"
        "<th>status</th><th>device</th><th class=\"num\">samples</th><th class=\"num\">measured</th>"
        "<th class=\"num\">failed</th><th>started (UTC)</th></tr></thead><tbody>\n";
    for (const auto &r : data.runs) {
        s += "<tr><td class=\"num\">" + std::to_string(r.id) + "</td>" + cell(r.generator_name) +
             cell(r.gpu) + cell(r.mode) + cell(r.autoscheduler) + cell(r.status) +
             cell(device_label(r.device)) + num_cell(r.samples) + num_cell(r.measured) + num_cell(r.failed) +
             cell(readable_time(r.started_at)) + "</tr>\n";
    }
    return s + "</tbody></table></section>\n";
}

// Best median time so far over a run's samples in (batch, idx) order, with
// every measured sample behind it and the batch boundaries marked.
std::string tuning_curve(const ReportRun &run, const std::string &id) {
    XyPlot p;
    p.id = id;
    p.kind = "tuning-curve";
    p.title = "Run " + std::to_string(run.id) + ": tuning curve";
    p.x.label = "sample (in search order)";
    p.x.integer = true;
    p.y.label = "median time";
    p.y.unit = "ms";
    Series each{"each measured sample", {}, SeriesStyle::Markers, "#7d8796", true};
    Series best{"best so far", {}, SeriesStyle::Step, "#1f6feb", false};
    std::vector<double> times;
    double best_ms = INFINITY;
    for (std::size_t i = 0; i < run.samples.size(); ++i) {
        const ReportSample &s = run.samples[i];
        const double x = static_cast<double>(i + 1);
        if (i > 0 && s.batch != run.samples[i - 1].batch)
            p.markers.push_back({x - 0.5, "batch " + std::to_string(s.batch)});
        if (!s.measured()) continue;
        each.points.push_back({x, *s.runtime_ms});
        best_ms = std::min(best_ms, *s.runtime_ms);
        best.points.push_back({x, best_ms});
        times.push_back(*s.runtime_ms);
    }
    p.y.log = wants_log(times);
    p.x.min = 0;
    p.x.max = static_cast<double>(run.samples.size());
    p.series = {each, best};
    return render_xy_plot(p);
}

// The paper's figure 8: the model's prediction against the measured time,
// one colour per batch, so a reader sees the ranking sharpen batch by batch.
std::string predicted_vs_measured(const ReportRun &run, const std::string &id) {
    XyPlot p;
    p.id = id;
    p.kind = "predicted-vs-measured";
    p.title = "Run " + std::to_string(run.id) + ": predicted vs measured";
    p.x.label = "predicted cost";
    p.x.unit = "model units";
    p.y.label = "median time";
    p.y.unit = "ms";
    std::vector<int> batches;
    for (const auto &s : run.samples)
        if (batches.empty() || batches.back() != s.batch) batches.push_back(s.batch);
    std::vector<double> xs, ys;
    for (std::size_t b = 0; b < batches.size(); ++b) {
        Series series{
            "batch " + std::to_string(batches[b]), {}, SeriesStyle::Markers, ramp_colour(b, batches.size())};
        for (const auto &s : run.samples) {
            if (s.batch != batches[b] || !s.measured() || !s.predicted_cost) continue;
            series.points.push_back({*s.predicted_cost, *s.runtime_ms});
            xs.push_back(*s.predicted_cost);
            ys.push_back(*s.runtime_ms);
        }
        if (!series.points.empty()) p.series.push_back(std::move(series));
    }
    if (xs.empty()) return "";
    p.x.log = wants_log(xs);
    p.y.log = wants_log(ys);
    const bool nonpositive = std::any_of(xs.begin(), xs.end(), [](double v) { return v <= 0; });
    if (nonpositive) p.x.log = false;
    // Taller than wide legends need: one legend line per batch.
    p.height = std::max(340, 60 + 18 * static_cast<int>(p.series.size()) + 20);
    return render_xy_plot(p);
}

std::string correlation_plot(const ReportRun &run, const std::string &id) {
    XyPlot p;
    p.id = id;
    p.kind = "rank-correlation";
    p.title = "Run " + std::to_string(run.id) + ": rank correlation per batch";
    p.x.label = "batch";
    p.x.integer = true;
    p.y.label = "correlation of predicted and measured";
    p.y.min = -1;
    p.y.max = 1;
    Series spearman{"Spearman", {}, SeriesStyle::LineMarkers, palette_colour(0)};
    Series kendall{"Kendall tau-b", {}, SeriesStyle::LineMarkers, palette_colour(1)};
    for (const auto &b : run.batches) {
        if (b.spearman) spearman.points.push_back({static_cast<double>(b.batch), *b.spearman});
        if (b.kendall) kendall.points.push_back({static_cast<double>(b.batch), *b.kendall});
    }
    if (spearman.points.size() < 2) return "";
    p.series = {spearman, kendall};
    return render_xy_plot(p);
}

std::string batch_table(const ReportRun &run) {
    std::string s =
        "<table class=\"batches\" data-run=\"" + std::to_string(run.id) +
        "\"><thead><tr><th class=\"num\">batch</th><th>status</th><th class=\"num\">samples</th>"
        "<th class=\"num\">measured</th><th class=\"num\">failed</th><th class=\"num\">spilled</th>"
        "<th class=\"num\">best (ms)</th><th class=\"num\">Spearman</th><th class=\"num\">Kendall</th>"
        "<th class=\"num\">regret</th><th>weights searched with</th></tr></thead><tbody>\n";
    for (const auto &b : run.batches) {
        s += "<tr><td class=\"num\">" + std::to_string(b.batch) + "</td>" + cell(b.status) +
             num_cell(b.samples) + num_cell(b.measured) + num_cell(b.failed) + num_cell(b.spilled) +
             num_cell(b.best_ms) + num_cell(b.spearman) + num_cell(b.kendall) + num_cell(b.regret) +
             cell(b.weights_path.empty() ? "embedded defaults" : b.weights_path) + "</tr>\n";
    }
    return s + "</tbody></table>\n";
}

std::string run_section(const ReportRun &run, const std::string &id_prefix) {
    std::size_t measured = 0, failed = 0;
    for (const auto &s : run.samples) {
        measured += s.measured();
        failed += !s.failure.empty();
    }
    std::string s = "<div class=\"run\" data-run=\"" + std::to_string(run.id) + "\"><h3>Run " +
                    std::to_string(run.id) + " &middot; " + esc(run.mode) + " &middot; " + esc(run.status);
    if (!run.stopped_by.empty()) s += " (stopped by " + esc(run.stopped_by) + ")";
    s += "</h3>\n<p class=\"meta\">started " + esc(readable_time(run.started_at)) +
         (run.finished_at.empty() ? "" : ", finished " + esc(readable_time(run.finished_at))) + " UTC; " +
         std::to_string(run.samples.size()) + " samples, " + std::to_string(measured) + " measured, " +
         std::to_string(failed) + " failed";
    if (run.spearman) s += "; whole run: Spearman " + format_number(*run.spearman);
    if (run.kendall) s += ", Kendall " + format_number(*run.kendall);
    s += "</p>\n";
    if (!run.error.empty()) s += "<p class=\"meta\">error: " + esc(run.error) + "</p>\n";
    if (measured == 0) {
        s += "<p class=\"note\">No measured sample in this run: nothing to plot.</p>\n";
    } else {
        s += "<div class=\"plots\">\n" + tuning_curve(run, id_prefix + "-curve") +
             predicted_vs_measured(run, id_prefix + "-pvm") + "</div>\n";
    }
    if (!run.batches.empty()) {
        s += "<h4>The model's rank correlation per batch</h4>\n<p class=\"meta\">How well each batch's "
             "weights ordered "
             "its measured samples before retraining: Spearman and Kendall tau-b between predicted cost and "
             "measured "
             "time (1: the same order), and the regret of the model's pick (its time over the batch's "
             "best).</p>\n";
        s += batch_table(run);
        s += correlation_plot(run, id_prefix + "-corr");
    }
    return s + "</div>\n";
}

std::string problem_table(const DeviceGroup &g) {
    std::string rows;
    std::size_t n = 0;
    for (const auto &r : g.runs) {
        for (const auto &s : r.samples) {
            if (s.failure.empty() && s.spill_bytes == 0) continue;
            ++n;
            std::string what, reason;
            if (!s.failure.empty()) {
                what =
                    "failed" + (s.benchmark.empty() || s.benchmark == "measured" ? "" : ": " + s.benchmark);
                reason = s.failure;
            }
            if (s.spill_bytes > 0) {
                what +=
                    std::string(what.empty() ? "" : ", ") + "spills " + std::to_string(s.spill_bytes) + " B";
                reason += std::string(reason.empty() ? "" : "; ") + s.spill_detail;
            }
            rows += "<tr data-sample=\"" + std::to_string(s.id) + "\"><td class=\"num\">" +
                    std::to_string(r.id) + "</td><td class=\"num\">" + std::to_string(s.batch) +
                    "</td><td class=\"num\">" + std::to_string(s.idx) + "</td><td class=\"num\">" +
                    std::to_string(s.id) + "</td>" + cell(what) + "<td class=\"reason\">" + esc(reason) +
                    "</td></tr>\n";
        }
    }
    std::string s = "<h3>Spilled and failed samples</h3>\n";
    if (n == 0)
        return s + "<p class=\"note problems-none\">None: every sample compiled, ran and matched the CPU "
                   "reference, and no kernel spilled registers.</p>\n";
    return s +
           "<table class=\"problems\"><thead><tr><th class=\"num\">run</th><th class=\"num\">batch</th>"
           "<th class=\"num\">sample</th><th class=\"num\">id</th><th>what</th><th>reason</th></tr></thead>"
           "<tbody>\n" +
           rows + "</tbody></table>\n";
}

std::string winner_section(const DeviceGroup &g) {
    std::string s = "<h3>Winning schedule</h3>\n";
    if (!g.winner)
        return s +
               "<p class=\"note\">None: no sample was measured, and no run chose one by prediction.</p>\n";
    const Winner &w = *g.winner;
    s += "<p class=\"meta\">Run " + std::to_string(w.run_id) + ", batch " + std::to_string(w.batch) +
         ", sample " + std::to_string(w.idx) + " (id " + std::to_string(w.sample_id) + ")";
    if (w.runtime_ms)
        s += ": median " + format_number(*w.runtime_ms) + " ms on " + esc(device_label(g.device));
    else
        s += ": chosen by the cost model, not measured";
    if (w.predicted_cost) s += " (predicted cost " + format_number(*w.predicted_cost) + ")";
    s += ".</p>\n";
    if (w.gpu_fill && w.gpu_fill_least) {
        // A schedule that leaves most of the GPU idle (a reduction in one
        // thread) is visible here without a GPU.
        s += "<p class=\"meta\">GPU fill: " + format_number(100.0 * *w.gpu_fill) +
             "% of the GPU's resident threads, weighted by work; least " +
             format_number(100.0 * *w.gpu_fill_least) + "% (docs/search.md, \"GPU fill\").</p>\n";
    }
    if (w.schedule_source.empty())
        return s + "<p class=\"note\">The database holds no schedule source for it.</p>\n";
    return s + "<pre class=\"schedule\"><code>" + esc(w.schedule_source) + "</code></pre>\n";
}

std::string group_section(const DeviceGroup &g, std::size_t index) {
    const std::string id = "g" + std::to_string(index);
    std::vector<double> times;
    std::size_t samples = 0, failed = 0, spilled = 0;
    for (const auto &r : g.runs)
        for (const auto &s : r.samples) {
            ++samples;
            failed += !s.failure.empty();
            spilled += s.spill_bytes > 0;
            if (s.measured()) times.push_back(*s.runtime_ms);
        }
    std::string s = "<section class=\"card group\" id=\"" + id + "\" data-pipeline=\"" +
                    esc(g.pipeline.generator_name) + "\" data-device=\"" + esc(g.device) +
                    "\" data-measured=\"" + std::to_string(times.size()) + "\">\n<h2>" +
                    esc(g.pipeline.generator_name) + " on " + esc(device_label(g.device)) + "</h2>\n";
    s += "<p class=\"meta\">params <code>" + esc(g.pipeline.params) + "</code> &middot; GPU profile " +
         esc(g.pipeline.gpu) + " &middot; target <code>" + esc(g.pipeline.target) + "</code></p>\n";
    s += "<div class=\"stats\">";
    auto stat = [&](const std::string &value, const std::string &label) {
        s += "<div class=\"stat\"><b>" + value + "</b><span>" + label + "</span></div>";
    };
    stat(std::to_string(g.runs.size()), "runs");
    stat(std::to_string(samples), "samples");
    stat(std::to_string(times.size()), "measured");
    stat(std::to_string(failed), "failed");
    stat(std::to_string(spilled), "spilled");
    if (g.winner && g.winner->runtime_ms) stat(format_number(*g.winner->runtime_ms) + " ms", "best median");
    for (const auto &[source, t] : g.baselines)
        if (g.winner && g.winner->runtime_ms)
            stat(speedup_html(t.runtime_ms, *g.winner->runtime_ms), "over " + esc(source));
    s += "</div>\n";
    if (!times.empty()) {
        Histogram h;
        h.id = id + "-hist";
        h.kind = "time-histogram";
        h.title = "Distribution of sample times";
        h.x.label = "median time";
        h.x.unit = "ms";
        h.series_label = "measured samples (" + std::to_string(times.size()) + ")";
        h.values = times;
        s += "<div class=\"plots\">\n" + render_histogram(h) + "</div>\n";
    }
    for (std::size_t i = 0; i < g.runs.size(); ++i)
        s += run_section(g.runs[i], id + "-r" + std::to_string(g.runs[i].id));
    s += problem_table(g);
    s += winner_section(g);
    return s + "</section>\n";
}

} // namespace

std::string render_html_report(const ReportData &data, const std::string &generated_by) {
    std::string s =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpusched report: " +
        esc(data.filter) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
    s += "<header><h1>gpusched tuning report</h1><p>" + esc(data.filter) + " in <code>" +
         esc(data.database_path) + "</code> &middot; " + std::to_string(data.runs.size()) +
         " runs &middot; generated " + utc_now() + " by " + esc(generated_by) + "</p></header>\n<main>\n";
    if (!data.groups.empty()) {
        s += "<nav class=\"card\"><ul>";
        for (std::size_t i = 0; i < data.groups.size(); ++i)
            s += "<li><a href=\"#g" + std::to_string(i + 1) + "\">" +
                 esc(data.groups[i].pipeline.generator_name) + " on " +
                 esc(device_label(data.groups[i].device)) + "</a></li>";
        s += "</ul></nav>\n";
        s += speedup_table(data);
    } else {
        s += "<p class=\"note\">The selection holds only baseline runs: no gpusched search to show.</p>\n";
    }
    s += runs_table(data);
    for (std::size_t i = 0; i < data.groups.size(); ++i)
        s += group_section(data.groups[i], i + 1);
    if (data.learning) s += learning_section(*data.learning);
    return s + "</main>\n</body>\n</html>\n";
}

void write_html_report(const ReportData &data, const std::string &generated_by, const std::string &path) {
    const std::string html = render_html_report(data, generated_by);
    const fs::path target(path);
    if (fs::is_directory(target))
        throw UserError("cannot write the report to '" + path + "': it is a directory");
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw UserError("cannot write the report to '" + path + "': " + std::strerror(errno));
        out << html;
        out.flush();
        if (!out) {
            const std::string why = std::strerror(errno);
            std::remove(tmp.c_str());
            throw UserError("cannot write the report to '" + path + "': " + why);
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        std::remove(tmp.c_str());
        throw UserError("cannot write the report to '" + path + "': " + ec.message());
    }
}

ReportWritten write_report(const std::string &db_path, const ReportFilter &filter,
                           const std::string &out_path, const std::string &generated_by,
                           std::optional<LearningReport> learning) {
    db::Database database = db::Database::open_existing(db_path);
    ReportData data = load_report_data(database, filter);
    data.learning = std::move(learning);
    write_html_report(data, generated_by, out_path);
    return ReportWritten{data.runs.size(), data.groups.size()};
}

} // namespace gpusched::report
