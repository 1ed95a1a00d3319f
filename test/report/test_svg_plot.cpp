// The SVG plot helper (tuner/report/svg_plot.h) on its own: ticks a reader
// can use on linear and log axes, axis titles with units, legends, every
// point drawn once, text from the database escaped, and values a plot
// cannot show refused instead of written as NaN.

#include <cmath>
#include <stdexcept>

#include "test/catch2_compat.h"

#include "report_page.h"
#include "tuner/report/html_text.h"
#include "tuner/report/svg_plot.h"

using namespace gpusched;
using namespace gpusched::report;

namespace {

void check_ticks(const std::vector<double> &got, const std::vector<double> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == Approx(want[i]).margin(1e-12));
}

XyPlot two_series_plot() {
    XyPlot p;
    p.id = "p1";
    p.kind = "test";
    p.title = "Tuning curve";
    p.x.label = "sample";
    p.y.label = "median time";
    p.y.unit = "ms";
    p.series.push_back({"each sample", {{1, 0.5}, {2, 0.3}, {3, 0.4}}, SeriesStyle::Markers, "", false});
    p.series.push_back({"best so far", {{1, 0.5}, {2, 0.3}, {3, 0.3}}, SeriesStyle::Step, "", false});
    p.markers.push_back({2.5, "batch 1"});
    return p;
}

} // namespace

TEST_CASE("linear ticks step by 1, 2 or 5 times a power of ten and cover the data", "[svg]") {
    check_ticks(linear_ticks(0.13, 0.87), {0, 0.2, 0.4, 0.6, 0.8, 1.0});
    check_ticks(linear_ticks(0, 9.3), {0, 2, 4, 6, 8, 10});
    check_ticks(linear_ticks(-1, 1), {-1, -0.5, 0, 0.5, 1});
    check_ticks(linear_ticks(120, 480), {100, 200, 300, 400, 500});
    // A single value still gets an axis around it.
    const auto one = linear_ticks(0.25, 0.25);
    REQUIRE(one.size() >= 2);
    CHECK(one.front() < 0.25);
    CHECK(one.back() > 0.25);
    // Whole-number axes (batches, sample numbers) never get half a batch.
    check_ticks(linear_ticks(0, 1, 5, true), {0, 1});
    check_ticks(linear_ticks(0, 3, 5, true), {0, 1, 2, 3});
}

TEST_CASE("log ticks are powers of ten over wide ranges and 1-2-5 steps over narrow ones", "[svg]") {
    check_ticks(log_ticks(0.03, 40), {0.01, 0.1, 1, 10, 100});
    check_ticks(log_ticks(0.044, 0.26), {0.02, 0.05, 0.1, 0.2, 0.5});
    check_ticks(log_ticks(3, 7), {2, 5, 10});
}

TEST_CASE("an x-y plot has a title, axis titles with units, tick labels and one legend entry per series",
          "[svg]") {
    XyPlot p = two_series_plot();
    p.y.log = true;
    const std::string svg = render_xy_plot(p);
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(test::count(svg, "</svg>") == 1);
    CHECK(svg.find(">Tuning curve</text>") != std::string::npos);
    CHECK(svg.find(">sample</text>") != std::string::npos);
    CHECK(svg.find(">median time (ms), log scale</text>") != std::string::npos);
    // Ticks: x from 1 to 3 in steps of 0.5, y on a 1-2-5 log scale (0.2, 0.5).
    CHECK(svg.find("text-anchor=\"end\">0.2</text>") != std::string::npos);
    CHECK(svg.find("text-anchor=\"end\">0.5</text>") != std::string::npos);
    CHECK(test::count(svg, "class=\"tick-label\"") >= 6);
    // Legend: both series and the batch boundary.
    CHECK(test::count(svg, "class=\"legend-entry\"") == 3);
    CHECK(svg.find(">each sample</text>") != std::string::npos);
    CHECK(svg.find(">best so far</text>") != std::string::npos);
    CHECK(svg.find(">batch boundary</text>") != std::string::npos);
    CHECK(test::count(svg, "class=\"vmarker\"") == 1);
}

TEST_CASE("every point is drawn once: one circle per marker point, one path vertex per line point", "[svg]") {
    const std::string svg = render_xy_plot(two_series_plot());
    CHECK(test::attribute(svg, "data-points") == "6");
    CHECK(test::count(svg, "class=\"point\"") == 3);
    const auto series = test::elements(svg, "<g class=\"series\"", "</g>");
    REQUIRE(series.size() == 2);
    CHECK(test::attribute(series[0], "data-points") == "3");
    CHECK(test::attribute(series[1], "data-points") == "3");
    // A step line: a move to the first point, then horizontal and vertical
    // segments to each next point.
    const auto path = test::elements(series[1], "<path", "/>");
    REQUIRE(path.size() == 1);
    const std::string d = test::attribute(path[0], "d");
    CHECK(test::count(d, "M") == 1);
    CHECK(test::count(d, "H") == 2);
    CHECK(test::count(d, "V") == 2);
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
}

TEST_CASE("text from the database is escaped in titles, labels, legends and ids", "[svg]") {
    XyPlot p = two_series_plot();
    const std::string evil = "<script>alert(\"x\")</script> & 'quoted'";
    p.id = evil;
    p.title = evil;
    p.x.label = evil;
    p.series[0].label = evil;
    const std::string svg = render_xy_plot(p);
    CHECK(svg.find("<script") == std::string::npos);
    CHECK(svg.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;") !=
          std::string::npos);
    CHECK(escape_html("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST_CASE("values a plot cannot show are refused, never written as NaN", "[svg]") {
    XyPlot p = two_series_plot();
    p.y.log = true;
    p.series[0].points.push_back({4, 0.0});
    CHECK_THROWS_AS(render_xy_plot(p), std::invalid_argument);
    XyPlot q = two_series_plot();
    q.series[0].points.push_back({std::nan(""), 1.0});
    CHECK_THROWS_AS(render_xy_plot(q), std::invalid_argument);
    XyPlot empty;
    empty.id = "empty";
    CHECK_THROWS_AS(render_xy_plot(empty), std::invalid_argument);
    Histogram h;
    h.id = "h";
    CHECK_THROWS_AS(render_histogram(h), std::invalid_argument);
}

TEST_CASE("a histogram counts every value once, in whole-number ticks", "[svg]") {
    Histogram h;
    h.id = "h";
    h.kind = "time-histogram";
    h.title = "Distribution";
    h.x.label = "median time";
    h.x.unit = "ms";
    h.series_label = "samples";
    h.values = {0.1, 0.11, 0.12, 0.5, 0.9, 0.9, 1.0};
    h.bins = 5;
    const std::string svg = render_histogram(h);
    const auto bars = test::elements(svg, "<rect class=\"bar\"", "</rect>");
    REQUIRE(bars.size() == 5);
    int total = 0;
    for (const auto &b : bars)
        total += std::stoi(test::attribute(b, "data-count"));
    CHECK(total == 7);
    CHECK(test::attribute(bars[0], "data-count") == "3"); // 0.1 .. 0.28
    CHECK(test::attribute(bars[4], "data-count") == "3"); // 0.82 .. 1.0, the maximum included
    CHECK(svg.find(">median time (ms)</text>") != std::string::npos);
    CHECK(svg.find(">samples</text>") != std::string::npos);
    CHECK(svg.find("text-anchor=\"end\">0.5</text>") ==
          std::string::npos); // no half samples on the count axis
    // All values equal: one visible bar holds them all.
    h.values = {2, 2, 2};
    h.bins = 0;
    int nonzero = 0;
    for (const auto &b : test::elements(render_histogram(h), "<rect class=\"bar\"", "</rect>"))
        nonzero += test::attribute(b, "data-count") != "0";
    CHECK(nonzero == 1);
}

TEST_CASE("numbers are written with four significant digits and no trailing zeros", "[svg]") {
    CHECK(format_number(0) == "0");
    CHECK(format_number(0.04493) == "0.04493");
    CHECK(format_number(0.129478) == "0.1295");
    CHECK(format_number(1.5) == "1.5");
    CHECK(format_number(2000) == "2000");
    CHECK(format_number(0.00044281) == "0.0004428");
    CHECK(format_number(3e-7) == "3e-07");
}
