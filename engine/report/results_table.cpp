#include "report/results_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "report/fabric_text.h"
#include "report/store_query.h"

namespace orrery::report {
namespace {

// Metrics shown first, in this order, when present; the rest follow by name.
const std::vector<std::string> kPreferred = {"iteration_time", "fct_mean", "fct_p50", "fct_p99", "fct_max", "slowdown_mean", "slowdown_p99",
                                             "peak_queue", "pfc_pauses", "events_skipped_share", "simulated_time", "wall_time"};

std::string number(double v) {
    std::ostringstream o;
    o.precision(6);
    o << v;
    return o.str();
}

// A swept value as a person reads it: a JSON string without its quotes (a preset name, a rate), a fabric's
// events as a failure is named ("link 144 down"), anything else as compact JSON.
std::string parameter_text(const std::string& path, const std::string& value_json) {
    const nlohmann::json v = nlohmann::json::parse(value_json, nullptr, false);
    if (v.is_discarded()) return value_json;
    if (path == "topology.events") return events_label(v);
    return v.is_string() ? v.get<std::string>() : v.dump();
}

bool has_table(sqlite3* db, const char* name) {
    sqlite3_stmt* q = nullptr;
    bool found = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &q, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(q) == SQLITE_ROW;
    }
    sqlite3_finalize(q);
    return found;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

std::vector<RunInfo> list_runs(const std::string& store) {
    ReadOnlyStore db(store);
    std::vector<RunInfo> out;
    StoreQuery q(db.db, "SELECT r.run_id, r.scenario_name, r.started_utc, r.status, coalesce(r.wall_seconds, 0), "
               "(SELECT count(*) FROM experiments e WHERE e.run_id = r.run_id) FROM runs r ORDER BY r.run_id DESC", store);
    while (q.next()) out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), int(q.integer(5)), q.real(4)});
    return out;
}

ResultsTable read_results(const std::string& store, int64_t run_id) {
    ReadOnlyStore db(store);
    ResultsTable t;
    for (const RunInfo& r : list_runs(store))
        if (r.run_id == run_id) t.run = r;
    std::map<std::string, size_t> row_of;
    {
        StoreQuery q(db.db, "SELECT experiment, status, coalesce(message, '') FROM experiments WHERE run_id = ? ORDER BY idx", store);
        q.bind(1, run_id);
        while (q.next()) {
            row_of[q.text(0)] = t.rows.size();
            t.rows.push_back({q.text(0), q.text(1), q.text(2), {}, {}, {}, {}});
        }
    }
    std::map<std::string, std::map<std::string, std::string>> params;  // path → experiment → value
    {
        StoreQuery q(db.db, "SELECT experiment, path, value_json FROM parameters WHERE run_id = ?", store);
        q.bind(1, run_id);
        while (q.next()) params[q.text(1)][q.text(0)] = parameter_text(q.text(1), q.text(2));
    }
    for (const auto& [path, values] : params) {
        t.parameter_paths.push_back(path);
        std::set<std::string> distinct;
        for (const auto& [x, v] : values) distinct.insert(v);
        t.parameter_differs.push_back(distinct.size() > 1);
        for (ResultRow& r : t.rows) {
            auto it = values.find(r.experiment);
            r.parameters.push_back(it == values.end() ? "" : it->second);
        }
    }
    if (has_table(db.db, "fabric_events")) {  // stores written before it have none
        StoreQuery q(db.db, "SELECT experiment, time_ps, what FROM fabric_events WHERE run_id = ? ORDER BY rowid", store);
        q.bind(1, run_id);
        while (q.next())
            if (auto it = row_of.find(q.text(0)); it != row_of.end()) t.rows[it->second].fabric_events.emplace_back(q.integer(1), q.text(2));
        for (const ResultRow& r : t.rows) {
            std::string list;
            for (const auto& [time_ps, what] : r.fabric_events) list += (list.empty() ? "" : "; ") + what;
            if (!list.empty()) t.notes.push_back(r.experiment + "'s fabric events, as resolved: " + list + ".");
        }
    }
    if (has_table(db.db, "jobs")) {  // runs of several jobs (stores written before them have none)
        StoreQuery q(db.db, "SELECT experiment, job, name, first_rank, ranks, hosts, start_ps, iteration_time_s, alone_iteration_time_s, slowdown, "
                            "first_flow, flows, kind, leaves FROM jobs WHERE run_id = ? ORDER BY experiment, job", store);
        q.bind(1, run_id);
        while (q.next())
            if (auto it = row_of.find(q.text(0)); it != row_of.end())
                t.rows[it->second].jobs.push_back({uint32_t(q.integer(1)), q.text(2), uint32_t(q.integer(3)), uint32_t(q.integer(4)), q.text(5), q.integer(6),
                                                   q.real(7), q.real(8), q.real(9), uint32_t(q.integer(10)), uint32_t(q.integer(11)), q.text(12), q.text(13)});
    }
    std::map<std::string, std::string> units;
    std::map<std::string, std::map<std::string, double>> values;  // metric → experiment → value
    {
        StoreQuery q(db.db, "SELECT experiment, name, value, unit FROM metrics WHERE run_id = ?", store);
        q.bind(1, run_id);
        while (q.next()) {
            units[q.text(1)] = q.text(3);
            if (!q.is_null(2)) values[q.text(1)][q.text(0)] = q.real(2);
        }
    }
    {
        StoreQuery q(db.db, "SELECT experiment, max(max_bytes) FROM queue_tiers WHERE run_id = ? GROUP BY experiment", store);
        q.bind(1, run_id);
        while (q.next()) {
            units["peak_queue"] = "B";
            values["peak_queue"][q.text(0)] = q.real(1);
        }
    }
    std::vector<std::string> names;
    for (const std::string& n : kPreferred)
        if (units.count(n)) names.push_back(n);
    for (const auto& [n, u] : units)
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    for (const std::string& n : names) {
        t.metrics.push_back({n, units[n]});
        for (ResultRow& r : t.rows) {
            auto it = values[n].find(r.experiment);
            r.metrics.push_back(it == values[n].end() ? std::nullopt : std::optional<double>(it->second));
        }
    }
    if (values.count("events_skipped_share"))
        for (const auto& [x, share] : values["events_skipped_share"])
            if (share > 0) {
                char percent[16];
                std::snprintf(percent, sizeof percent, share * 100 < 0.1 ? "%.2f" : "%.1f", share * 100);
                t.notes.push_back(x + ": steady-state skipping fast-forwarded " + percent +
                                  "% of its events; queues and rates inside skipped spans show the frozen state (table skips)");
            }
    return t;
}

std::optional<double> relative_to(const std::optional<double>& value, const std::optional<double>& baseline) {
    if (!value || !baseline || *baseline == 0) return std::nullopt;
    return (*value - *baseline) / std::fabs(*baseline);
}

std::string results_csv(const ResultsTable& t) {
    std::ostringstream o;
    o << "experiment,status";
    for (const std::string& p : t.parameter_paths) o << "," << csv_field(p);
    for (const MetricColumn& m : t.metrics) o << "," << csv_field(m.header());
    o << "\n";
    for (const ResultRow& r : t.rows) {
        o << csv_field(r.experiment) << "," << csv_field(r.status);
        for (const std::string& p : r.parameters) o << "," << csv_field(p);
        for (const auto& m : r.metrics) o << "," << (m ? number(*m) : "");
        o << "\n";
    }
    return o.str();
}

}  // namespace orrery::report
