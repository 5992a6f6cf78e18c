#pragma once
// Numbers and sentences as the report prints them: values rounded to four significant digits in a unit that
// suits their size (61.03 ms, not 0.061027826001 s), differences to a tenth of a percent, and the summary that
// says which experiment is best on each key metric, by how much, and what the difference is made of.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/results_table.h"

namespace orrery::report {

// `unit` as the store names it (s, us, B, ratio, frames, …); a `ratio` named *_share prints as a percentage.
std::string format_value(double value, const std::string& unit, const std::string& metric = "");
// 0.0481 → "4.8 %"; with `sign`, "+4.8 %" / "−4.8 %".
std::string format_percent(double ratio, bool sign = false);

// The parts of a rank's iteration the LLM driver stores (metrics <part>_mean_per_rank, in s), with how a
// sentence and a chart legend name each. The driver's compute includes the optimizer step.
struct IterationPart {
    std::string part, sentence, legend;
    std::string metric() const { return part + "_mean_per_rank"; }
};
const std::vector<IterationPart>& iteration_parts();

// The metrics the summary ranks, in order; lower is better for each.
struct KeyMetric {
    const char* name;
    const char* label;
};
const std::vector<KeyMetric>& key_metrics();

// Differences under `tie` (a ratio) count as ties: how closely the model's results can be trusted to rank
// designs (see report.cpp for where the figure comes from).
struct SummaryInput {
    const ResultsTable* table = nullptr;
    std::vector<std::string> labels;  // per row: how the summary names the experiment
    int baseline = -1;
    double tie = 0.005;
    // Wider ties for some metrics (replications: the seeds' own spread of each design), by metric name.
    std::map<std::string, double> metric_tie;
    std::string subject = "experiments";  // what the rows are, in sentences: "experiments", "designs"
};
std::vector<std::string> summarize(const SummaryInput& in);

// What the fabric went through, shown beside the key metrics where any experiment has it (above zero): each
// switch tier's uplink imbalance (busiest over mean, by capacity), drops, packets lost to failed links,
// packets resent and retransmission timeouts.
bool is_fabric_metric(const std::string& name);

// How a person reads a stored metric's name: "fct_p99" → "p99 FCT", "exposed_dp_mean_per_rank" → "exposed DP
// communication, mean per rank".
std::string metric_label(const std::string& name);

// A swept parameter's value as a legend or a sentence names it: "true" / "false" as "skipping on" / "pfc off"
// (the path's last name, or the one before ".enabled"); a job's placement as placement_label; anything else unchanged.
std::string parameter_value_label(const std::string& path, const std::string& text);
// A job's placement object as read: {"policy":"random","seed":3} → "random (seed 3)", "hosts 0-31".
std::string placement_label(const std::string& json_text);

// What sets row `row` apart, as legends and sentences name it: the values of the parameters the run sweeps (those
// that differ), but those at `except`, joined by ", " ("" when none is left).
std::string differing_values(const ResultsTable& t, size_t row, const std::vector<std::string>& except);

// A stored metric's unit ("" when the run has no such metric).
std::string metric_unit(const ResultsTable& t, const std::string& name);

// The metric's value in row `r`, when the run recorded it.
std::optional<double> metric_value(const ResultsTable& t, size_t r, const std::string& name);

}  // namespace orrery::report
