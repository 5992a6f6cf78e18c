#pragma once
// The results of one run as a plain table, read from the project's store: one row per experiment with the
// swept parameters that tell experiments apart and the metrics with their units (iteration time, FCT
// percentiles, peak queue, skipped share…), and its CSV. The comparison report (report.h) is built on it.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/results_store.h"

namespace orrery::report {

struct RunInfo {
    int64_t run_id = 0;
    std::string scenario, started_utc, status;
    int experiments = 0;
    double wall_seconds = 0;
};

struct MetricColumn {
    std::string name, unit;      // as stored ("fct_p99", "us"); peak_queue is derived from queue_tiers
    std::string header() const { return name + " (" + unit + ")"; }
};

struct ResultRow {
    std::string experiment, status, message;
    std::vector<std::string> parameters;          // per parameter column, as text (a JSON string without its quotes)
    std::vector<std::optional<double>> metrics;   // per metric column
    std::vector<std::pair<int64_t, std::string>> fabric_events;  // (ps, what): its topology.events as it resolved them
    std::vector<JobRow> jobs;                     // a mix of jobs: each job's hosts, iteration times, slowdown
};

struct ResultsTable {
    RunInfo run;
    std::vector<std::string> parameter_paths;     // the swept ones
    std::vector<bool> parameter_differs;          // true where experiments disagree
    std::vector<MetricColumn> metrics;
    std::vector<ResultRow> rows;
    std::vector<std::string> notes;               // e.g. "skipping froze 95.9% of events in e0001"
};

// Throws InputError naming the file when it is not a results store.
std::vector<RunInfo> list_runs(const std::string& store);
ResultsTable read_results(const std::string& store, int64_t run_id);

// Relative difference of `value` against `baseline` (0.05 = 5% more); nullopt when either is missing or zero.
std::optional<double> relative_to(const std::optional<double>& value, const std::optional<double>& baseline);

std::string results_csv(const ResultsTable& t);

}  // namespace orrery::report
