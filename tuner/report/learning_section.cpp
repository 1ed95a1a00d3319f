#include "tuner/report/learning_section.h"

#include <algorithm>
#include <cstdio>

#include "tuner/report/html_text.h"
#include "tuner/report/svg_plot.h"

namespace gpusched::report {
namespace {

std::string fixed(double v, int digits = 2) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string arrow(double before, double after) {
    return "<td class=\"num\">" + fixed(before) + " &rarr; " + fixed(after) + "</td>";
}

// Figure 8: per pipeline (numbered as in the table), the pick over the best.
std::string pick_plot(const LearningReport &r) {
    XyPlot p;
    p.id = "learning-pick";
    p.kind = "learning-pick";
    p.title = "Pick over the batch's best (figure 8)";
    p.x.label = "pipeline (as numbered in the table)";
    p.x.integer = true;
    p.y.label = "pick / best";
    p.y.unit = "x";
    p.y.log = true;
    Series start{"default", {}, SeriesStyle::Markers, "#7d8796", false};
    Series held{"hold-one-out", {}, SeriesStyle::Markers, "#1f6feb", false};
    Series loop{"Autotune loop", {}, SeriesStyle::Markers, "#d1242f", false};
    for (std::size_t i = 0; i < r.pipelines.size(); ++i) {
        const PipelineLearning &pl = r.pipelines[i];
        const double x = static_cast<double>(i + 1);
        start.points.push_back({x, pl.start.pick_ratio});
        held.points.push_back({x, pl.held_out.pick_ratio});
        if (pl.in_run) loop.points.push_back({x, pl.in_run->pick_ratio});
    }
    p.series = {start, held};
    if (!loop.points.empty()) p.series.push_back(loop);
    return render_xy_plot(p);
}

// The learning curve (one device); "all" drawn at the most batches any run has.
std::string curve_plot(const LearningReport &r) {
    XyPlot p;
    p.id = "learning-curve";
    p.kind = "learning-curve";
    p.title = "Learning curve (one device): hold-one-out on k batches each";
    p.x.label = "batches per pipeline trained on (0: the default weights)";
    p.x.integer = true;
    p.y.label = "mean over pipelines";
    p.y.min = -1;
    p.y.max = 1;
    Series kendall{"Kendall", {}, SeriesStyle::LineMarkers, "#1f6feb", false};
    Series top1{"top-1", {}, SeriesStyle::LineMarkers, "#2da44e", false};
    for (const CurvePoint &c : r.curve) {
        kendall.points.push_back({static_cast<double>(c.batches), c.mean.kendall});
        top1.points.push_back({static_cast<double>(c.batches), c.mean.top1});
    }
    p.series = {kendall, top1};
    return render_xy_plot(p);
}

} // namespace

std::string learning_section(const LearningReport &r) {
    std::string s = "<section class=\"card\" id=\"learning\" data-pipelines=\"" +
                    std::to_string(r.pipelines.size()) + "\"><h2>Does retraining learn? (" +
                    escape_html(r.device) + ")</h2>\n";
    s += "<p class=\"meta\">Each pipeline's measured Autotune batches, judged by the default weights, by "
         "them retrained on the other pipelines' samples only (hold-one-out), and by them retrained on the "
         "run's earlier batches (Autotune's own loop, from its second batch). Means over a pipeline's "
         "batches. Pick: the measured time of the model's favourite over the batch's best; top-k: the "
         "best time over the best among the model's k favourites. From <code>gpusched learning</code>.</p>\n";
    s += pick_plot(r) + curve_plot(r);
    s += "<table class=\"learning\"><thead><tr><th class=\"num\">#</th><th>pipeline</th><th "
         "class=\"num\">samples</th><th class=\"num\">batches</th><th class=\"num\">Kendall</th><th "
         "class=\"num\">pick / best</th><th class=\"num\">top-1</th><th class=\"num\">top-5</th><th "
         "class=\"num\">Autotune's loop: pick / best</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < r.pipelines.size(); ++i) {
        const PipelineLearning &p = r.pipelines[i];
        s +=
            "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td><td>" + escape_html(p.name) +
            "</td><td class=\"num\">" + std::to_string(p.samples) + "</td><td class=\"num\">" +
            std::to_string(p.batches) + "</td>" + arrow(p.start.kendall, p.held_out.kendall) +
            arrow(p.start.pick_ratio, p.held_out.pick_ratio) + arrow(p.start.top1, p.held_out.top1) +
            arrow(p.start.top5, p.held_out.top5) +
            (p.in_run ? arrow(p.in_run_start->pick_ratio, p.in_run->pick_ratio) : "<td class=\"num\"></td>") +
            "</tr>\n";
    }
    return s + "</tbody></table></section>\n";
}

} // namespace gpusched::report
