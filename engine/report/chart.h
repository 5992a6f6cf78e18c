#pragma once
// The report's charts as plain data, and each drawn as one self-contained SVG: the same text goes into the HTML
// report, the PDF (rendered by Qt's SVG renderer) and the Results view, so the three never disagree.
// No Qt here: the CLI writes HTML reports without it.
#include <string>
#include <utility>
#include <vector>

namespace orrery::report {

struct ChartSeries {
    std::string label;
    std::vector<std::pair<double, double>> points;  // (x, y) in the chart's display units, x ascending
};

struct LineChart {
    std::string title, x_label, y_label;  // labels carry their unit: "FCT (µs)"
    bool log_x = false;
    bool step = false;                    // draw as a staircase (a CDF, a sampled maximum)
    std::vector<ChartSeries> series;
    // Moments marked across the plot by a dashed line with their name (x in the chart's units): a fabric's
    // failures, repairs and degradations on a time chart.
    std::vector<std::pair<double, std::string>> marks;
    bool empty() const;
};

// One bar per experiment, split into parts (compute, exposed DP, …) that add up to its length.
struct StackedBars {
    std::string title, unit;
    std::vector<std::string> parts, bars;
    std::vector<std::vector<double>> values;  // [bar][part]
    bool empty() const { return bars.empty(); }
};

struct BarChart {
    std::string title, unit;
    std::vector<std::string> bars;
    std::vector<double> values;
    bool empty() const { return bars.empty(); }
};

// Text made safe inside HTML or SVG markup (&, <, >, both quotes).
std::string markup_escape(const std::string& s);

// The colour of the i-th series or part (a qualitative palette that stays apart when printed).
const char* chart_colour(size_t i);

std::string chart_svg(const LineChart& c, int width, int height);
std::string chart_svg(const StackedBars& c, int width);
std::string chart_svg(const BarChart& c, int width);

// Axis ticks: "nice" values (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count);

}  // namespace orrery::report
