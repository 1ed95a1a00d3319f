#pragma once
// Small SVG plots for the HTML report, drawn here rather than by a plotting
// library so the report stays one file with no scripts and no fetches: an
// x-y plot (lines, steps, markers; linear or log axes; vertical markers such
// as batch boundaries) and a histogram. Each plot is one <svg> element with
// a title, both axes with ticks, an axis label with its unit, and a legend.
//
// Invariants: every string from the caller is XML-escaped; every number
// written into an attribute is finite (values that cannot be drawn, such as
// a non-positive value on a log axis, are refused with
// std::invalid_argument, never written as NaN); each drawn data point is one
// <circle class="point"> (markers) or one vertex of a path, and the <svg>
// carries data-points with the number of points drawn, so tests and people
// can count what was plotted.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpusched::report {

struct Axis {
    std::string label;    // e.g. "median time"
    std::string unit;     // e.g. "ms"; shown as "label (unit)"
    bool log = false;     // base-10 log scale; every value must be > 0
    bool integer = false; // whole-number ticks only (batches, sample numbers)
    // Forced range (before ticks round it outwards); unset: from the data.
    std::optional<double> min, max;
};

enum class SeriesStyle {
    Markers,     // one circle per point
    Line,        // straight segments through the points, no markers
    Step,        // horizontal then vertical segments (a running best)
    LineMarkers, // straight segments and a circle per point
};

struct Series {
    std::string label; // legend text
    std::vector<std::pair<double, double>> points;
    SeriesStyle style = SeriesStyle::Markers;
    std::string colour; // CSS colour; empty: the palette's next colour
    bool faint = false; // drawn lighter (context points behind a line)
};

// A dashed vertical line across the plot, labelled at the top.
struct VerticalMarker {
    double x = 0;
    std::string label;
};

struct XyPlot {
    std::string id;   // the svg element's id (escaped)
    std::string kind; // data-kind attribute, e.g. "tuning-curve"
    std::string title;
    Axis x, y;
    std::vector<Series> series;
    std::vector<VerticalMarker> markers;
    int width = 560, height = 340;
};

struct Histogram {
    std::string id, kind, title;
    Axis x; // the measured quantity; linear only
    std::string count_label = "samples";
    std::string series_label;
    std::vector<double> values;
    int bins = 0; // 0: chosen from the number of values
    std::string colour;
    int width = 560, height = 300;
};

// Tick positions for a linear axis: steps of 1, 2 or 5 x 10^k, about
// `target` of them, the first <= lo and the last >= hi (the axis is extended
// to them). lo == hi gets a range around the value. `integer`: the step is
// at least 1.
std::vector<double> linear_ticks(double lo, double hi, int target = 5, bool integer = false);
// Tick positions for a log axis (lo > 0): the powers of ten from the one at
// or below lo to the one at or above hi; with fewer than three decades, also
// 2x and 5x each power, so that a narrow range still has labelled ticks.
std::vector<double> log_ticks(double lo, double hi);

// The categorical colour for series i (cycles), and a colour on a blue to red
// ramp for position i of n (batches: early blue, late red).
std::string palette_colour(std::size_t i);
std::string ramp_colour(std::size_t i, std::size_t n);

// One <svg> element, complete. Throws std::invalid_argument for a value a
// log axis cannot show or for a plot with no points at all.
std::string render_xy_plot(const XyPlot &plot);
std::string render_histogram(const Histogram &hist);

} // namespace gpusched::report
