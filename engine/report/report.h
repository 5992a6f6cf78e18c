#pragma once
// A run's comparison report as plain data, read from a results store once: the results table, how each
// experiment is named (by the parameters that set it apart), the summary sentences, the charts (FCT CDFs
// overlaid per experiment, queue occupancy per switch tier over time, the iteration breakdown, skip shares)
// and what it takes to reproduce the run. The HTML page, the PDF, `orrery-cli report` and the Results view's
// charts are all drawn from it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/chart.h"
#include "report/results_table.h"

namespace orrery::report {

struct ExperimentFacts {
    std::string experiment, sha256;
    int64_t seed = 0;
    double wall_seconds = 0;
};

struct Reproducibility {
    std::string store, scenario_file, scenario_sha256, engine_version, git_revision, backend, device, host;
    std::string scenario_json;  // the scenario the run kept (stores written before it was kept: empty)
    int64_t threads = 0;
    std::vector<ExperimentFacts> experiments;
};

struct Report {
    ResultsTable table;
    int baseline = -1;                 // row index, or -1
    double tie = 0.005;                // differences under this ratio are reported as ties
    std::string tie_reason;
    std::vector<std::string> labels;   // per row, for sentences: "hpcc-400g (e0001)"
    std::vector<std::string> short_labels;  // per row, for legends: "hpcc-400g"
    std::vector<std::string> summary;
    // What was simulated, for a reader who did not set it up: (what, description) read off the scenario the
    // run kept (fabric, GPUs, model and strategy, link rates, congestion control, network mode, sweep).
    std::vector<std::pair<std::string, std::string>> simulated;
    Reproducibility repro;
    // What the run takes in its store, bytes (each table's pages shared out by the run's rows), by table, largest
    // first; empty where SQLite cannot tell (no dbstat).
    std::vector<std::pair<std::string, uint64_t>> disk_by_table;
    uint64_t store_bytes = 0;  // the whole database, pages in its write-ahead log included
    LineChart fct_cdf;
    std::vector<LineChart> queue_tiers;  // one per switch tier that was sampled
    StackedBars iteration;
    BarChart skip_share;
};

// `run_id` 0 takes the newest run. `baseline`: an experiment id, or "" for none. Throws InputError naming the
// store, the run or the baseline when they are not there.
Report read_report(const std::string& store, int64_t run_id, const std::string& baseline = "");
// Names, tie and summary for `table` with `baseline` (row or -1): what read_report does after reading, kept
// apart so the Results view can re-pin a baseline without reading the store again.
void compose_report(Report& r, int baseline);

// Every chart the report shows, in page order, as SVG (empty charts left out).
struct RenderedChart {
    std::string title, svg;
    int width = 0, height = 0;
};
std::vector<RenderedChart> report_charts(const Report& r);

// One self-contained page: `inline_svg` puts the charts in the page (HTML files); otherwise it refers to them as
// images named chart-0.svg, chart-1.svg, … in report_charts order (the PDF writer supplies them).
std::string report_html(const Report& r, bool inline_svg = true);
// "This run takes about 12.3 MiB of the store's 45.6 MiB: timeline 8.1 MiB, flows 2.0 MiB, …"; empty when unknown.
std::string disk_cost_sentence(const Report& r);
// Report::simulated of a scenario document (presets resolved).
std::vector<std::pair<std::string, std::string>> simulated_facts(const nlohmann::json& scenario);
std::string report_csv(const Report& r);

}  // namespace orrery::report
