// The report as one HTML page: summary, what differs, the key metrics, the charts, every metric, and how to
// reproduce the run. It fits a 1,280-px window and prints on A4 (print CSS); the PDF writer lays out the same
// page with the charts as images.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/job_text.h"
#include "report/report.h"
#include "report/report_text.h"

namespace orrery::report {
namespace {

constexpr int kChartWidth = 580, kChartHeight = 300;
constexpr size_t kTransposeUpTo = 8;  // experiments as columns up to this many; beyond, one row each
constexpr int kPdfTextWidthPx = 182 * 96 * 10 / 254 - 16;  // A4 less 14 mm margins each side at 96 px an inch, less the document's own margin

std::string escape(const std::string& s) { return markup_escape(s); }

int svg_height(const std::string& svg) {
    const size_t at = svg.find("height='");
    return at == std::string::npos ? 0 : std::stoi(svg.substr(at + 8));
}

// Which way is better, for colouring differences: -1 lower, +1 higher, 0 neither (a count of work done).
int better_direction(const std::string& metric) {
    static const char* const higher[] = {"events_skipped_share", "events_skipped_estimate", "bytes_skipped", "memo_hits", "memo_follows", "tail_replays", "flows_finished", "skips"};
    static const char* const neither[] = {"flows", "events", "packet_hops", "simulated_time"};
    for (const char* m : higher)
        if (metric == m) return 1;
    for (const char* m : neither)
        if (metric == m) return 0;
    return -1;
}

std::string cell(const Report& r, size_t row, size_t m) {
    const ResultsTable& t = r.table;
    const auto& v = t.rows[row].metrics[m];
    if (!v) return "–";
    std::string s = escape(format_value(*v, t.metrics[m].unit, t.metrics[m].name));
    if (r.baseline >= 0 && int(row) != r.baseline)
        if (auto d = relative_to(v, t.rows[size_t(r.baseline)].metrics[m])) {
            const int direction = better_direction(t.metrics[m].name);
            const char* css = direction == 0 ? "same" : (*d > 0) == (direction > 0) ? "better" : "worse";
            s += std::fabs(*d) < r.tie ? " <span class='same'>(=)</span>" : " <span class='" + std::string(css) + "'>(" + format_percent(*d, true) + ")</span>";
        }
    return s;
}

// A table as cells of HTML: its header and its rows. Written whole for a browser (it scrolls); on a page of
// `page_px` pixels (the PDF) split into several tables of the columns that fit, each repeating the first
// `keep` columns, so that no column is cut at the page's edge.
struct CellTable {
    std::vector<std::string> header;
    std::vector<std::string> row_class;  // per row: its <tr> class ("" none)
    std::vector<std::vector<std::string>> rows;
};

// The printed width of a cell, from its text without markup: about 7 px a character at the PDF's 9-point
// font, plus padding and border.
int cell_px(const std::string& html) {
    if (html.find("class='lw'") != std::string::npos) return 200;  // a cell that wraps takes this much
    int chars = 0;
    bool tag = false;
    for (size_t i = 0; i < html.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(html[i]);
        if (c == '<') tag = true;
        else if (c == '>') tag = false;
        else if (!tag && (c & 0xC0) != 0x80) ++chars;  // one per UTF-8 character
    }
    return 7 * chars + 18;
}

void write_table(std::ostringstream& h, const CellTable& t, size_t keep, int page_px) {
    const size_t columns = t.header.size();
    std::vector<int> width(columns, 0);
    for (size_t c = 0; c < columns; ++c) {
        width[c] = cell_px(t.header[c]);
        for (const auto& row : t.rows) width[c] = std::max(width[c], cell_px(row[c]));
    }
    int kept = 0;
    for (size_t c = 0; c < keep && c < columns; ++c) kept += width[c];
    std::vector<std::pair<size_t, size_t>> chunks;  // [first, last) of the other columns
    for (size_t c = keep; c < columns;) {
        size_t end = c;
        int used = kept;
        while (end < columns && (page_px <= 0 || end == c || used + width[end] <= page_px)) used += width[end++];
        chunks.push_back({c, end});
        c = end;
    }
    if (chunks.empty()) chunks.push_back({keep, keep});
    for (const auto& [first, last] : chunks) {
        h << "<table><tr>";
        for (size_t c = 0; c < columns; ++c)
            if (c < keep || (c >= first && c < last)) h << t.header[c];
        h << "</tr>";
        for (size_t i = 0; i < t.rows.size(); ++i) {
            h << "<tr" << (t.row_class[i].empty() ? "" : " class='" + t.row_class[i] + "'") << ">";
            for (size_t c = 0; c < columns; ++c)
                if (c < keep || (c >= first && c < last)) h << t.rows[i][c];
            h << "</tr>";
        }
        h << "</table>";
    }
}

bool is_key(const std::string& metric) {
    for (const KeyMetric& k : key_metrics())
        if (metric == k.name) return true;
    return is_job_metric(metric);
}

// A run of several jobs: per experiment, each job's hosts, start, iteration time with the others and alone, slowdown.
void jobs_table(std::ostringstream& h, const Report& r, int page_px) {
    const ResultsTable& t = r.table;
    CellTable c;
    for (const char* title : {"Experiment", "Job", "Hosts", "Leaves (GPUs)", "Start", "Iteration time", "Alone", "Slowdown"})
        c.header.push_back("<th>" + std::string(title) + "</th>");
    for (size_t i = 0; i < t.rows.size(); ++i)
        for (const JobRow& j : t.rows[i].jobs) {
            const bool alone = j.alone_iteration_time_s > 0;
            const std::string name = j.kind == "flows" ? j.name + " (background flows: times are their mean FCT)" : j.name;
            c.rows.push_back({"<td class='l'>" + escape(r.labels[i]) + "</td>", "<td class='l'>" + escape(name) + "</td>",
                              "<td class='l'>" + escape(j.hosts) + "</td>", "<td class='l'>" + escape(j.leaves) + "</td>",
                              "<td>" + escape(format_value(double(j.start_ps) * 1e-12, "s")) + "</td>",
                              "<td>" + escape(format_value(j.iteration_time_s, "s")) + "</td>",
                              "<td>" + (alone ? escape(format_value(j.alone_iteration_time_s, "s")) : std::string("—")) + "</td>",
                              "<td>" + (alone ? escape(format_value(j.slowdown, "ratio")) : std::string("—")) + "</td>"});
            c.row_class.emplace_back();
        }
    if (c.rows.empty()) return;
    h << "<h2>Jobs</h2><p>Hosts are GPU indices in fabric order; leaves are the switches (node ids) their NICs reach, with the job's GPUs "
         "under each; a job's slowdown is its iteration time with the others over its time alone on "
         "the same hosts (workload.isolation).</p>";
    write_table(h, c, 2, page_px);
}

// Up to kTransposeUpTo experiments: a column each (split over several tables where the page is too narrow);
// beyond: a row each, the metrics as columns (split likewise).
void metrics_table(std::ostringstream& h, const Report& r, bool keys_only, int page_px) {
    const ResultsTable& t = r.table;
    std::vector<size_t> shown;
    auto any_above_zero = [&](size_t m) {
        return std::any_of(t.rows.begin(), t.rows.end(), [&](const ResultRow& row) { return row.metrics[m] && *row.metrics[m] > 0; });
    };
    for (size_t m = 0; m < t.metrics.size(); ++m)
        if (!keys_only || is_key(t.metrics[m].name) || (is_fabric_metric(t.metrics[m].name) && any_above_zero(m))) shown.push_back(m);
    if (shown.empty()) return;
    CellTable c;
    // Printed, a metric's name may wrap (long ones would leave the experiments no room); on screen it stays whole.
    const std::string label_class = page_px > 0 ? "lw" : "l";
    if (t.rows.size() <= kTransposeUpTo) {
        c.header.push_back("<th class='l'>metric</th>");
        for (size_t i = 0; i < t.rows.size(); ++i)
            c.header.push_back(std::string("<th") + (int(i) == r.baseline ? " class='base'" : "") + ">" + escape(r.short_labels[i]) + "</th>");
        for (size_t m : shown) {
            c.row_class.push_back("");
            c.rows.push_back({"<td class='" + label_class + "'>" + escape(metric_label(t.metrics[m].name)) + "</td>"});
            for (size_t i = 0; i < t.rows.size(); ++i)
                c.rows.back().push_back(std::string("<td") + (int(i) == r.baseline ? " class='base'" : "") + ">" + cell(r, i, m) + "</td>");
        }
    } else {
        c.header = {"<th class='l'>experiment</th>", "<th>status</th>"};
        for (size_t m : shown) c.header.push_back("<th>" + escape(metric_label(t.metrics[m].name)) + "</th>");
        for (size_t i = 0; i < t.rows.size(); ++i) {
            c.row_class.push_back(int(i) == r.baseline ? "base" : "");
            c.rows.push_back({"<td class='l'>" + escape(r.labels[i]) + "</td>", "<td>" + escape(t.rows[i].status) + "</td>"});
            for (size_t m : shown) c.rows.back().push_back("<td>" + cell(r, i, m) + "</td>");
        }
    }
    write_table(h, c, t.rows.size() <= kTransposeUpTo ? 1 : 2, page_px);
}

}  // namespace

std::vector<RenderedChart> report_charts(const Report& r) {
    std::vector<RenderedChart> out;
    auto add = [&](const std::string& title, std::string svg, int width) {
        const int height = svg_height(svg);
        out.push_back({title, std::move(svg), width, height});
    };
    if (!r.fct_cdf.empty()) add(r.fct_cdf.title, chart_svg(r.fct_cdf, kChartWidth, kChartHeight), kChartWidth);
    for (const LineChart& c : r.queue_tiers)
        if (!c.empty()) add(c.title, chart_svg(c, kChartWidth, kChartHeight), kChartWidth);
    if (!r.iteration.empty()) add(r.iteration.title, chart_svg(r.iteration, kChartWidth), kChartWidth);
    if (!r.skip_share.empty()) add(r.skip_share.title, chart_svg(r.skip_share, kChartWidth), kChartWidth);
    return out;
}

std::string report_html(const Report& r, bool inline_svg) {
    // Printed (the PDF: charts as images), tables must fit A4's text width: 182 mm at 96 px an inch.
    const int page_px = inline_svg ? 0 : kPdfTextWidthPx;
    // Printed, a SHA-256 takes two lines of 32 digits: whole, it pushed the wall times off the page.
    auto sha = [&](const std::string& s) { return page_px > 0 && s.size() > 32 ? escape(s.substr(0, 32)) + "<br>" + escape(s.substr(32)) : escape(s); };
    const ResultsTable& t = r.table;
    const Reproducibility& p = r.repro;
    std::ostringstream h;
    h << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Orrery comparison: " << escape(t.run.scenario) << "</title><style>"
      << "body{font-family:sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#222;font-size:14px}"
         "h1{font-size:22px;margin-bottom:0}h2{font-size:17px;margin-top:1.6em;border-bottom:1px solid #ddd}"
         ".sub{color:#666;margin-top:4px}table{border-collapse:collapse;margin:6px 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-size:13px}th{background:#eee;white-space:nowrap}"
         ".l{text-align:left;white-space:nowrap}.lw{text-align:left}.base{background:#f3f3f3}.worse{color:#b00}.better{color:#070}.same{color:#888}"
         ".summary li{margin:4px 0}.summary li:first-child{font-weight:bold}.charts{display:flex;flex-wrap:wrap;gap:16px}"
         ".chart svg{max-width:100%;height:auto}.mono{font-family:monospace;font-size:12px}.note{color:#666;font-size:12px}"
         "@page{size:A4;margin:14mm}@media print{body{max-width:none;margin:0;font-size:11px}.chart{break-inside:avoid}h2{break-after:avoid}}"
      << "</style></head><body>";
    h << "<h1>" << escape(t.run.scenario) << "</h1><p class='sub'>Run " << t.run.run_id << " · started " << escape(t.run.started_utc) << " UTC · "
      << t.rows.size() << " experiment" << (t.rows.size() == 1 ? "" : "s") << " · " << escape(t.run.status) << " · "
      << escape(format_value(t.run.wall_seconds, "s")) << " wall</p>";

    if (!r.simulated.empty()) {
        h << "<h2>What was simulated</h2><table>";
        for (const auto& [what, text] : r.simulated) h << "<tr><td class='l'>" << escape(what) << "</td><td class='lw'>" << escape(text) << "</td></tr>";
        h << "</table>";
    }
    h << "<h2>Summary</h2><ul class='summary'>";
    for (const std::string& s : r.summary) h << "<li>" << escape(s) << "</li>";
    h << "</ul><p class='note'>" << (t.rows.size() > 1 ? escape(r.tie_reason) + " " : "") << "Values are rounded to four significant digits.</p>";

    h << "<h2>What differs</h2>";
    bool differs = false;
    for (bool d : t.parameter_differs) differs = differs || d;
    if (t.rows.size() == 1) {
        h << "<p>One experiment: the scenario has no sweep.</p>";
    } else if (!differs) {
        h << "<p>The experiments differ in no swept parameter (replications: see the seeds below).</p>";
    } else {
        CellTable c;
        c.header.push_back("<th class='l'>experiment</th>");
        for (size_t q = 0; q < t.parameter_paths.size(); ++q)
            if (t.parameter_differs[q]) c.header.push_back("<th>" + escape(t.parameter_paths[q]) + "</th>");
        for (size_t i = 0; i < t.rows.size(); ++i) {
            c.row_class.push_back(int(i) == r.baseline ? "base" : "");
            c.rows.push_back({"<td class='l'>" + escape(t.rows[i].experiment) + (int(i) == r.baseline ? " (baseline)" : "") + "</td>"});
            for (size_t q = 0; q < t.parameter_paths.size(); ++q)
                if (t.parameter_differs[q]) c.rows.back().push_back("<td>" + escape(t.rows[i].parameters[q]) + "</td>");
        }
        write_table(h, c, 1, page_px);
    }

    h << "<h2>Key metrics</h2>";
    if (r.baseline >= 0)
        h << "<p>Differences are against the baseline, " << escape(r.labels[size_t(r.baseline)])
          << ": <span class='better'>green</span> is better, <span class='worse'>red</span> worse, (=) a tie.</p>";
    metrics_table(h, r, true, page_px);
    jobs_table(h, r, page_px);

    const std::vector<RenderedChart> charts = report_charts(r);
    if (!charts.empty()) {
        h << "<h2>Charts</h2><div class='charts'>";
        for (size_t i = 0; i < charts.size(); ++i) {
            h << "<div class='chart'>";
            if (inline_svg) h << charts[i].svg;
            else h << "<img src='chart-" << i << ".svg' width='" << charts[i].width << "' height='" << charts[i].height << "'>";
            h << "</div>";
        }
        h << "</div>";
        if (r.fct_cdf.empty() && r.queue_tiers.empty()) h << "<p class='note'>No flows or queues were recorded (output.record).</p>";
        if (t.rows.size() > 12 && (!r.fct_cdf.empty() || !r.queue_tiers.empty()))
            h << "<p class='note'>Line charts overlay 12 of the " << t.rows.size()
              << " experiments (more could not be told apart): the baseline when one is pinned, the best and the worst by the first key metric, and "
                 "evenly spaced others. The tables hold every experiment.</p>";
    }
    if (!t.notes.empty()) {
        h << "<h2>Notes</h2><ul>";
        for (const std::string& n : t.notes) h << "<li>" << escape(n) << "</li>";
        h << "</ul>";
    }

    h << "<h2>Every metric</h2>";
    metrics_table(h, r, false, page_px);
    bool failed = false;
    for (const ResultRow& row : t.rows) failed = failed || !row.message.empty();
    if (failed) {
        h << "<ul>";
        for (const ResultRow& row : t.rows)
            if (!row.message.empty()) h << "<li>" << escape(row.experiment) << " (" << escape(row.status) << "): " << escape(row.message) << "</li>";
        h << "</ul>";
    }

    h << "<h2>Reproducibility</h2><table>"
      << "<tr><td class='l'>results store</td><td class='mono l'>" << escape(p.store) << ", run " << t.run.run_id << "</td></tr>"
      << "<tr><td class='l'>scenario file</td><td class='mono l'>" << escape(p.scenario_file) << "</td></tr>"
      << "<tr><td class='l'>scenario SHA-256</td><td class='mono l'>" << sha(p.scenario_sha256) << "</td></tr>"
      << "<tr><td class='l'>Orrery</td><td class='mono l'>" << escape(p.engine_version) << " (revision " << escape(p.git_revision.empty() ? "unknown" : p.git_revision)
      << ")</td></tr>"
      << "<tr><td class='l'>engine</td><td class='mono l'>" << escape(p.backend) << (p.device.empty() ? "" : " ") << escape(p.device) << ", " << p.threads
      << " thread" << (p.threads == 1 ? "" : "s") << " on " << escape(p.host) << "</td></tr></table>";
    h << "<table><tr><th class='l'>experiment</th><th>seed</th><th>experiment SHA-256 (canonical JSON)</th><th>wall time</th></tr>";
    for (const ExperimentFacts& e : p.experiments)
        h << "<tr><td class='l'>" << escape(e.experiment) << "</td><td>" << e.seed << "</td><td class='mono'>" << sha(e.sha256) << "</td><td>"
          << escape(format_value(e.wall_seconds, "s")) << "</td></tr>";
    h << "</table><p class='note'>Results are deterministic: the same scenario and seeds give the same figures on any thread count. ";
    if (!p.scenario_json.empty())  // the run kept its scenario: reproducible from the store alone (its file may be a workbench's temporary copy)
        h << "The store keeps the scenario that ran; reproduce with <span class='mono'>orrery-cli export scenario " << escape(p.store) << " --run "
          << t.run.run_id << " -o scenario.json</span>, <span class='mono'>orrery-cli run scenario.json --out results.sqlite</span>";
    else
        h << "Reproduce with <span class='mono'>orrery-cli run " << escape(p.scenario_file.empty() ? "SCENARIO" : p.scenario_file) << " --out results.sqlite</span>";
    h << ", then <span class='mono'>orrery-cli report results.sqlite -o report.html</span>.</p>";
    h << "</body></html>\n";
    return h.str();
}

std::string report_csv(const Report& r) { return results_csv(r.table); }

}  // namespace orrery::report
