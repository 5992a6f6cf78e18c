#include "report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace orrery::report {
namespace {

std::string tick_text(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", std::fabs(v) < 1e-12 ? 0.0 : v);
    return b;
}

std::string fixed(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return b;
}

// Legend entries in rows under the plot; returns the height it takes.
int legend(std::ostringstream& svg, const std::vector<std::string>& labels, int left, int top, int width) {
    constexpr int kEntry = 170, kRow = 16;
    const int per_row = std::max(1, width / kEntry);
    for (size_t i = 0; i < labels.size(); ++i) {
        const int x = left + int(i % size_t(per_row)) * kEntry, y = top + int(i / size_t(per_row)) * kRow;
        std::string label = labels[i];
        if (label.size() > 24) label = label.substr(0, 23) + "…";
        svg << "<rect x='" << x << "' y='" << y + 3 << "' width='12' height='8' fill='" << chart_colour(i) << "'/>"
            << "<text x='" << x + 16 << "' y='" << y + 11 << "' font-size='11'>" << markup_escape(label) << "</text>";
    }
    return labels.empty() ? 0 : int((labels.size() + size_t(per_row) - 1) / size_t(per_row)) * kRow + 4;
}

std::string svg_open(int width, int height) {
    std::ostringstream o;
    o << "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 " << width << " " << height << "' width='" << width << "' height='" << height
      << "' font-family='sans-serif'><rect width='" << width << "' height='" << height << "' fill='white'/>";
    return o.str();
}

}  // namespace

std::string markup_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;";
        else if (c == '\'') out += "&#39;";
        else out += c;
    }
    return out;
}

bool LineChart::empty() const {
    for (const ChartSeries& s : series)
        if (!s.points.empty()) return false;
    return true;
}

const char* chart_colour(size_t i) {
    static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
    if (!(hi > lo)) return {lo};
    const double raw = (hi - lo) / std::max(1, count);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    std::vector<double> ticks;
    for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
    return ticks;
}

std::string chart_svg(const LineChart& c, int width, int height) {
    constexpr int kLeft = 70, kRight = 16, kTop = 30, kBottom = 42;
    double x_lo = INFINITY, x_hi = -INFINITY, y_hi = 0, y_lo = 0;
    for (const ChartSeries& s : c.series)
        for (const auto& [x, y] : s.points) {
            if (c.log_x && x <= 0) continue;
            x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
            y_hi = std::max(y_hi, y), y_lo = std::min(y_lo, y);
        }
    std::vector<std::string> labels;
    for (const ChartSeries& s : c.series) labels.push_back(s.label);
    const int plot_w = width - kLeft - kRight, plot_h = height - kTop - kBottom;
    std::ostringstream body;
    const int legend_h = legend(body, labels, kLeft, height, plot_w);
    std::ostringstream svg;
    svg << svg_open(width, height + legend_h) << "<text x='" << kLeft << "' y='18' font-size='13' font-weight='bold'>" << markup_escape(c.title) << "</text>";
    if (!(x_hi >= x_lo)) {
        svg << "<text x='" << kLeft << "' y='" << kTop + plot_h / 2 << "' font-size='12' fill='#666'>nothing recorded</text></svg>";
        return svg.str();
    }
    if (c.log_x) x_lo = std::pow(10.0, std::floor(std::log10(x_lo))), x_hi = std::pow(10.0, std::ceil(std::log10(x_hi)));
    if (x_hi <= x_lo) x_hi = x_lo + (x_lo == 0 ? 1 : std::fabs(x_lo));
    std::vector<double> yt = nice_ticks(y_lo, y_hi > y_lo ? y_hi : y_lo + 1, 5);
    y_hi = std::max(y_hi, yt.back());
    if (y_hi <= y_lo) y_hi = y_lo + 1;
    std::vector<double> xt;
    if (c.log_x)
        for (double t = x_lo; t <= x_hi * 1.0001; t *= 10) xt.push_back(t);
    else {
        xt = nice_ticks(x_lo, x_hi, 6);
        x_lo = std::min(x_lo, xt.front()), x_hi = std::max(x_hi, xt.back());
    }
    auto px = [&](double x) {
        const double f = c.log_x ? (std::log10(std::max(x, x_lo)) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo)) : (x - x_lo) / (x_hi - x_lo);
        return kLeft + f * plot_w;
    };
    auto py = [&](double y) { return kTop + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h; };
    for (double t : yt) {
        if (t < y_lo - 1e-12 || t > y_hi + 1e-12) continue;
        svg << "<line x1='" << kLeft << "' x2='" << kLeft + plot_w << "' y1='" << fixed(py(t)) << "' y2='" << fixed(py(t)) << "' stroke='#e4e4e4'/>"
            << "<text x='" << kLeft - 6 << "' y='" << fixed(py(t) + 4) << "' font-size='10' text-anchor='end'>" << tick_text(t) << "</text>";
    }
    for (double t : xt)
        svg << "<line x1='" << fixed(px(t)) << "' x2='" << fixed(px(t)) << "' y1='" << kTop << "' y2='" << kTop + plot_h << "' stroke='#eeeeee'/>"
            << "<text x='" << fixed(px(t)) << "' y='" << kTop + plot_h + 14 << "' font-size='10' text-anchor='middle'>" << tick_text(t) << "</text>";
    svg << "<rect x='" << kLeft << "' y='" << kTop << "' width='" << plot_w << "' height='" << plot_h << "' fill='none' stroke='#888'/>";
    for (size_t i = 0; i < c.series.size(); ++i) {
        const ChartSeries& s = c.series[i];
        if (s.points.empty()) continue;
        svg << "<polyline fill='none' stroke-width='1.6' stroke='" << chart_colour(i) << "' points='";
        double last_y = c.step ? y_lo : s.points.front().second;
        for (const auto& [x, y] : s.points) {
            if (c.log_x && x <= 0) continue;
            if (c.step) svg << fixed(px(x)) << "," << fixed(py(last_y)) << " ";
            svg << fixed(px(x)) << "," << fixed(py(y)) << " ";
            last_y = y;
        }
        svg << "'/>";
    }
    for (const auto& [x, name] : c.marks) {
        if (x < x_lo || x > x_hi || (c.log_x && x <= 0)) continue;
        std::string label = name;
        if (label.size() > 48) label = label.substr(0, 47) + "…";
        svg << "<line x1='" << fixed(px(x)) << "' x2='" << fixed(px(x)) << "' y1='" << kTop << "' y2='" << kTop + plot_h
            << "' stroke='#b22222' stroke-width='1.2' stroke-dasharray='5,3'/>"
            << "<text transform='translate(" << fixed(px(x) + 11) << "," << kTop + 4 << ") rotate(90)' font-size='9' fill='#b22222'>"
            << markup_escape(label) << "</text>";
    }
    svg << "<text x='" << kLeft + plot_w / 2 << "' y='" << kTop + plot_h + 32 << "' font-size='11' text-anchor='middle'>" << markup_escape(c.x_label) << "</text>"
        << "<text transform='translate(14," << kTop + plot_h / 2 << ") rotate(-90)' font-size='11' text-anchor='middle'>" << markup_escape(c.y_label) << "</text>";
    svg << body.str() << "</svg>";
    return svg.str();
}

namespace {

std::string stacked_svg(const StackedBars& c, int width, bool with_legend) {
    constexpr int kLabel = 150, kRight = 70, kTop = 30, kBar = 18, kGap = 6;
    double top = 0;
    for (const auto& v : c.values) {
        double sum = 0;
        for (double x : v) sum += std::max(0.0, x);
        top = std::max(top, sum);
    }
    const int plot_w = width - kLabel - kRight;
    const int plot_h = int(c.bars.size()) * (kBar + kGap);
    std::ostringstream body;
    const int legend_h = with_legend ? legend(body, c.parts, kLabel, kTop + plot_h + 30, plot_w + kRight - 10) : 0;
    std::ostringstream svg;
    svg << svg_open(width, kTop + plot_h + 32 + legend_h) << "<text x='0' y='18' font-size='13' font-weight='bold'>" << markup_escape(c.title) << "</text>";
    if (top <= 0) top = 1;
    const std::vector<double> ticks = nice_ticks(0, top, 5);
    top = std::max(top, ticks.back());
    for (double t : ticks) {
        const double x = kLabel + t / top * plot_w;
        svg << "<line x1='" << fixed(x) << "' x2='" << fixed(x) << "' y1='" << kTop - 4 << "' y2='" << kTop + plot_h << "' stroke='#e4e4e4'/>"
            << "<text x='" << fixed(x) << "' y='" << kTop + plot_h + 12 << "' font-size='10' text-anchor='middle'>" << tick_text(t) << "</text>";
    }
    for (size_t b = 0; b < c.bars.size(); ++b) {
        const int y = kTop + int(b) * (kBar + kGap);
        std::string label = c.bars[b];
        if (label.size() > 22) label = label.substr(0, 21) + "…";
        svg << "<text x='" << kLabel - 6 << "' y='" << y + 13 << "' font-size='11' text-anchor='end'>" << markup_escape(label) << "</text>";
        double x = kLabel, sum = 0;
        for (size_t p = 0; p < c.parts.size() && p < c.values[b].size(); ++p) {
            const double w = std::max(0.0, c.values[b][p]) / top * plot_w;
            sum += std::max(0.0, c.values[b][p]);
            if (w > 0) svg << "<rect x='" << fixed(x) << "' y='" << y << "' width='" << fixed(w) << "' height='" << kBar << "' fill='" << chart_colour(p) << "'/>";
            x += w;
        }
        svg << "<text x='" << fixed(x + 4) << "' y='" << y + 13 << "' font-size='10'>" << tick_text(sum) << " " << markup_escape(c.unit) << "</text>";
    }
    svg << "<text x='" << kLabel + plot_w / 2 << "' y='" << kTop + plot_h + 24 << "' font-size='10' text-anchor='middle' fill='#555'>" << markup_escape(c.unit)
        << "</text>";
    svg << body.str() << "</svg>";
    return svg.str();
}

}  // namespace

std::string chart_svg(const StackedBars& c, int width) { return stacked_svg(c, width, true); }

std::string chart_svg(const BarChart& c, int width) {
    StackedBars one{c.title, c.unit, {c.title}, c.bars, {}};
    for (double v : c.values) one.values.push_back({v});
    return stacked_svg(one, width, false);  // one part: the title names it
}

}  // namespace orrery::report
