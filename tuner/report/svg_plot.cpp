#include "tuner/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "tuner/report/html_text.h"

namespace gpusched::report {
namespace {

// Room around the plot area: tick labels and the y label on the left, the
// title on top, tick labels and the x label below, the legend on the right.
constexpr double kLeft = 78, kTop = 34, kBottom = 52, kLegendWidth = 180;
constexpr double kPointRadius = 3.5;

// Coordinates are written with two decimals: enough for a screen, and
// stable text for tests.
std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

std::string axis_title(const Axis &a) {
    std::string t = a.label;
    if (!a.unit.empty()) t += " (" + a.unit + ")";
    if (a.log) t += ", log scale";
    return t;
}

// One axis mapped onto pixels: the domain is the ticks' span.
struct Scale {
    bool log = false;
    double lo = 0, hi = 1; // domain (data units)
    double p0 = 0, p1 = 1; // pixels of lo and hi
    std::vector<double> ticks;

    double t(double v) const {
        if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
        return (v - lo) / (hi - lo);
    }
    double px(double v) const { return p0 + (p1 - p0) * t(v); }
};

Scale make_scale(const Axis &axis, double data_lo, double data_hi, double p0, double p1,
                 const std::string &plot_id, const char *which) {
    const bool horizontal = std::string(which) == "x";
    double lo = axis.min.value_or(data_lo), hi = axis.max.value_or(data_hi);
    if (axis.min) lo = std::min(lo, *axis.min);
    if (axis.max) hi = std::max(hi, *axis.max);
    if (!std::isfinite(lo) || !std::isfinite(hi))
        throw std::invalid_argument("plot '" + plot_id + "': a " + which + " value is not finite");
    Scale s;
    s.log = axis.log;
    s.p0 = p0;
    s.p1 = p1;
    if (axis.log) {
        if (lo <= 0)
            throw std::invalid_argument("plot '" + plot_id + "': the " + which +
                                        " axis is logarithmic but a value is <= 0");
        s.ticks = log_ticks(lo, hi);
    } else {
        // Fewer ticks when their labels would run into each other along a
        // horizontal axis (about 6.5 px per character at 11 px).
        const double length = std::fabs(p1 - p0);
        for (int target = 5; target >= 2; --target) {
            s.ticks = linear_ticks(lo, hi, target, axis.integer);
            if (!horizontal) break;
            std::size_t widest = 0;
            for (double t : s.ticks)
                widest = std::max(widest, format_number(t).size());
            if (static_cast<double>(s.ticks.size()) * (static_cast<double>(widest) * 6.5 + 10) <= length)
                break;
        }
    }
    s.lo = s.ticks.front();
    s.hi = s.ticks.back();
    return s;
}

void check_value(const Axis &axis, double v, const std::string &plot_id, const char *which) {
    if (!std::isfinite(v))
        throw std::invalid_argument("plot '" + plot_id + "': a " + which + " value is not finite");
    if (axis.log && v <= 0)
        throw std::invalid_argument("plot '" + plot_id + "': the " + which +
                                    " axis is logarithmic but a value is <= 0");
}

std::string svg_open(const std::string &id, const std::string &kind, int width, int height,
                     std::size_t points, const std::string &title) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" id=\"" + escape_html(id) +
           "\" data-kind=\"" + escape_html(kind) + "\" data-points=\"" + std::to_string(points) +
           "\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
           "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
           "\" role=\"img\" aria-label=\"" + escape_html(title) + "\">\n<title>" + escape_html(title) +
           "</title>\n<text class=\"plot-title\" x=\"" + num(kLeft) + "\" y=\"20\">" + escape_html(title) +
           "</text>\n";
}

// Frame, grid, tick labels and axis titles.
std::string axes(const Scale &xs, const Scale &ys, const Axis &xa, const Axis &ya) {
    const double left = xs.p0, right = xs.p1, top = ys.p1, bottom = ys.p0;
    std::string s = "<g class=\"axes\">\n<rect class=\"frame\" x=\"" + num(left) + "\" y=\"" + num(top) +
                    "\" width=\"" + num(right - left) + "\" height=\"" + num(bottom - top) + "\"/>\n";
    s += "<g class=\"x-ticks\">\n";
    for (double t : xs.ticks) {
        const double x = xs.px(t);
        s += "<line class=\"grid\" x1=\"" + num(x) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x) +
             "\" y2=\"" + num(bottom) + "\"/><line class=\"tick\" x1=\"" + num(x) + "\" y1=\"" + num(bottom) +
             "\" x2=\"" + num(x) + "\" y2=\"" + num(bottom + 5) + "\"/><text class=\"tick-label\" x=\"" +
             num(x) + "\" y=\"" + num(bottom + 18) + "\" text-anchor=\"middle\">" +
             escape_html(format_number(t)) + "</text>\n";
    }
    s += "</g>\n<g class=\"y-ticks\">\n";
    for (double t : ys.ticks) {
        const double y = ys.px(t);
        s += "<line class=\"grid\" x1=\"" + num(left) + "\" y1=\"" + num(y) + "\" x2=\"" + num(right) +
             "\" y2=\"" + num(y) + "\"/><line class=\"tick\" x1=\"" + num(left - 5) + "\" y1=\"" + num(y) +
             "\" x2=\"" + num(left) + "\" y2=\"" + num(y) + "\"/><text class=\"tick-label\" x=\"" +
             num(left - 8) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
             escape_html(format_number(t)) + "</text>\n";
    }
    s += "</g>\n<text class=\"axis-label x-label\" x=\"" + num((left + right) / 2) + "\" y=\"" +
         num(bottom + 40) + "\" text-anchor=\"middle\">" + escape_html(axis_title(xa)) + "</text>\n";
    const double ymid = (top + bottom) / 2;
    s += "<text class=\"axis-label y-label\" x=\"16\" y=\"" + num(ymid) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + num(ymid) + ")\">" +
         escape_html(axis_title(ya)) + "</text>\n</g>\n";
    return s;
}

struct LegendEntry {
    std::string label, colour;
    bool line = false, marker = false, dashed = false;
};

std::string legend(const std::vector<LegendEntry> &entries, double x, double top) {
    std::string s = "<g class=\"legend\">\n";
    double y = top + 8;
    for (const LegendEntry &e : entries) {
        s += "<g class=\"legend-entry\">";
        if (e.line || e.dashed)
            s += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x + 18) + "\" y2=\"" +
                 num(y) + "\" stroke=\"" + escape_html(e.colour) + "\" stroke-width=\"2\"" +
                 (e.dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>";
        if (e.marker)
            s += "<circle class=\"legend-swatch\" cx=\"" + num(x + 9) + "\" cy=\"" + num(y) + "\" r=\"" +
                 num(kPointRadius) + "\" fill=\"" + escape_html(e.colour) + "\"/>";
        s += "<text x=\"" + num(x + 24) + "\" y=\"" + num(y + 4) + "\">" + escape_html(e.label) +
             "</text></g>\n";
        y += 18;
    }
    return s + "</g>\n";
}

} // namespace

std::vector<double> linear_ticks(double lo, double hi, int target, bool integer) {
    if (hi < lo) std::swap(lo, hi);
    if (hi == lo) {
        const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double raw = (hi - lo) / std::max(1, target);
    const double mag = std::pow(10, std::floor(std::log10(raw)));
    const double norm = raw / mag;
    // The smallest of 1, 2, 5 x 10^k at least as wide as the raw step: at
    // most `target` intervals.
    double step = (norm <= 1 + 1e-9 ? 1 : norm <= 2 + 1e-9 ? 2 : norm <= 5 + 1e-9 ? 5 : 10) * mag;
    if (integer) step = std::max(step, 1.0);
    // Integer multiples of the step, so ticks do not drift (0.1 + 0.2 ...)
    // and one lands on 0 exactly when the range crosses it.
    const long first = static_cast<long>(std::floor(lo / step + 1e-9));
    const long last = static_cast<long>(std::ceil(hi / step - 1e-9));
    std::vector<double> ticks;
    for (long i = first; i <= last; ++i)
        ticks.push_back(static_cast<double>(i) * step);
    return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
    if (hi < lo) std::swap(lo, hi);
    int lo_pow = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    int hi_pow = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    if (hi_pow == lo_pow) ++hi_pow;
    std::vector<double> ticks;
    if (hi_pow - lo_pow >= 3) {
        for (int p = lo_pow; p <= hi_pow; ++p)
            ticks.push_back(std::pow(10.0, p));
        return ticks;
    }
    // Fewer than three decades: 1, 2, 5 x 10^k, trimmed to the tightest span
    // around the data.
    std::vector<double> candidates;
    for (int p = lo_pow; p <= hi_pow; ++p)
        for (double m : {1.0, 2.0, 5.0})
            candidates.push_back(m * std::pow(10.0, p));
    std::size_t first = 0, last = candidates.size() - 1;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i] <= lo * (1 + 1e-9)) first = i;
    for (std::size_t i = candidates.size(); i-- > 0;)
        if (candidates[i] >= hi * (1 - 1e-9)) last = i;
    if (last <= first) last = std::min(candidates.size() - 1, first + 1);
    ticks.assign(candidates.begin() + static_cast<long>(first),
                 candidates.begin() + static_cast<long>(last) + 1);
    return ticks;
}

std::string palette_colour(std::size_t i) {
    // Tableau 10: distinct hues that stay apart for colour-blind readers.
    static const char *kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return kColours[i % (sizeof kColours / sizeof kColours[0])];
}

std::string ramp_colour(std::size_t i, std::size_t n) {
    // Hue 230 (blue) to 0 (red) at constant saturation and lightness.
    const double t = n <= 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    char buf[48];
    std::snprintf(buf, sizeof buf, "hsl(%d, 70%%, 45%%)", static_cast<int>(std::lround(230 * (1 - t))));
    return buf;
}

std::string render_xy_plot(const XyPlot &plot) {
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    std::size_t points = 0;
    for (const Series &s : plot.series) {
        for (const auto &[x, y] : s.points) {
            check_value(plot.x, x, plot.id, "x");
            check_value(plot.y, y, plot.id, "y");
            xlo = std::min(xlo, x);
            xhi = std::max(xhi, x);
            ylo = std::min(ylo, y);
            yhi = std::max(yhi, y);
            ++points;
        }
    }
    if (points == 0) throw std::invalid_argument("plot '" + plot.id + "' has no points");
    for (const VerticalMarker &m : plot.markers) {
        check_value(plot.x, m.x, plot.id, "x");
        xlo = std::min(xlo, m.x);
        xhi = std::max(xhi, m.x);
    }
    const double right = plot.width - kLegendWidth, bottom = plot.height - kBottom;
    const Scale xs = make_scale(plot.x, xlo, xhi, kLeft, right, plot.id, "x");
    const Scale ys = make_scale(plot.y, ylo, yhi, bottom, kTop, plot.id, "y");

    std::string s = svg_open(plot.id, plot.kind, plot.width, plot.height, points, plot.title);
    s += axes(xs, ys, plot.x, plot.y);
    std::vector<LegendEntry> entries;

    s += "<g class=\"markers\">\n";
    for (const VerticalMarker &m : plot.markers) {
        const double x = xs.px(m.x);
        s += "<line class=\"vmarker\" x1=\"" + num(x) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(x) +
             "\" y2=\"" + num(bottom) + "\"/><text class=\"vmarker-label\" x=\"" + num(x + 3) + "\" y=\"" +
             num(kTop + 12) + "\">" + escape_html(m.label) + "</text>\n";
    }
    s += "</g>\n";
    if (!plot.markers.empty()) entries.push_back({"batch boundary", "#888888", false, false, true});

    std::size_t auto_colour = 0;
    for (const Series &series : plot.series) {
        const std::string colour = series.colour.empty() ? palette_colour(auto_colour++) : series.colour;
        const bool line = series.style != SeriesStyle::Markers;
        const bool marker = series.style == SeriesStyle::Markers || series.style == SeriesStyle::LineMarkers;
        s += "<g class=\"series\" data-label=\"" + escape_html(series.label) + "\" data-points=\"" +
             std::to_string(series.points.size()) + "\"" + (series.faint ? " opacity=\"0.6\"" : "") + ">\n";
        if (line && !series.points.empty()) {
            std::string d;
            for (std::size_t i = 0; i < series.points.size(); ++i) {
                const double x = xs.px(series.points[i].first), y = ys.px(series.points[i].second);
                if (i == 0)
                    d = "M" + num(x) + " " + num(y);
                else if (series.style == SeriesStyle::Step)
                    d += " H" + num(x) + " V" + num(y);
                else
                    d += " L" + num(x) + " " + num(y);
            }
            s += "<path class=\"series-line\" d=\"" + d + "\" fill=\"none\" stroke=\"" + escape_html(colour) +
                 "\" stroke-width=\"2\"/>\n";
        }
        if (marker) {
            for (const auto &[x, y] : series.points)
                s += "<circle class=\"point\" cx=\"" + num(xs.px(x)) + "\" cy=\"" + num(ys.px(y)) +
                     "\" r=\"" + num(kPointRadius) + "\" fill=\"" + escape_html(colour) + "\"><title>" +
                     escape_html(series.label + ": " + format_number(x) + ", " + format_number(y)) +
                     "</title></circle>\n";
        }
        s += "</g>\n";
        if (!series.label.empty()) entries.push_back({series.label, colour, line, marker, false});
    }
    s += legend(entries, right + 16, kTop);
    return s + "</svg>\n";
}

std::string render_histogram(const Histogram &hist) {
    if (hist.values.empty()) throw std::invalid_argument("histogram '" + hist.id + "' has no values");
    if (hist.x.log) throw std::invalid_argument("histogram '" + hist.id + "': log bins are not supported");
    for (double v : hist.values)
        check_value(hist.x, v, hist.id, "x");
    const auto [mn, mx] = std::minmax_element(hist.values.begin(), hist.values.end());
    double lo = *mn, hi = *mx;
    if (hi == lo) {
        const double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.05;
        lo -= pad;
        hi += pad;
    }
    // Rice's rule (2 n^(1/3) bins), kept between 5 and 40.
    const int n = static_cast<int>(hist.values.size());
    const int bins =
        hist.bins > 0 ? hist.bins
                      : std::clamp(static_cast<int>(std::ceil(2 * std::cbrt(static_cast<double>(n)))), 5, 40);
    const double width = (hi - lo) / bins;
    std::vector<int> counts(static_cast<std::size_t>(bins), 0);
    for (double v : hist.values) {
        int b = static_cast<int>(std::floor((v - lo) / width));
        counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))]++; // the maximum closes the last bin
    }
    const int max_count = *std::max_element(counts.begin(), counts.end());

    const double right = hist.width - kLegendWidth, bottom = hist.height - kBottom;
    Axis xa = hist.x;
    const Scale xs = make_scale(xa, lo, hi, kLeft, right, hist.id, "x");
    Scale ys;
    ys.p0 = bottom;
    ys.p1 = kTop;
    // Counts are whole numbers: integer ticks, never 0.2 of a sample.
    if (max_count <= 5) {
        for (int i = 0; i <= std::max(max_count, 1); ++i)
            ys.ticks.push_back(i);
    } else {
        ys.ticks = linear_ticks(0, max_count);
    }
    ys.lo = ys.ticks.front();
    ys.hi = ys.ticks.back();
    Axis ya;
    ya.label = hist.count_label;

    const std::string colour = hist.colour.empty() ? palette_colour(0) : hist.colour;
    std::string s = svg_open(hist.id, hist.kind, hist.width, hist.height, hist.values.size(), hist.title);
    s += axes(xs, ys, xa, ya);
    s += "<g class=\"series\" data-label=\"" + escape_html(hist.series_label) + "\" data-points=\"" +
         std::to_string(n) + "\">\n";
    for (int b = 0; b < bins; ++b) {
        const double x0 = xs.px(lo + b * width), x1 = xs.px(lo + (b + 1) * width);
        const double y = ys.px(counts[static_cast<std::size_t>(b)]);
        s += "<rect class=\"bar\" data-count=\"" + std::to_string(counts[static_cast<std::size_t>(b)]) +
             "\" x=\"" + num(x0) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, x1 - x0 - 1)) +
             "\" height=\"" + num(bottom - y) + "\" fill=\"" + escape_html(colour) + "\"><title>" +
             escape_html(format_number(lo + b * width) + " to " + format_number(lo + (b + 1) * width) + " " +
                         hist.x.unit + ": " + std::to_string(counts[static_cast<std::size_t>(b)])) +
             "</title></rect>\n";
    }
    s += "</g>\n";
    s += legend({{hist.series_label, colour, false, true, false}}, right + 16, kTop);
    return s + "</svg>\n";
}

} // namespace gpusched::report
