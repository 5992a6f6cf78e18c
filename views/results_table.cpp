#include "views/results_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "telemetry/sqlite_query.h"

namespace orrery::views {
namespace {

struct Db {
    explicit Db(const std::string& file) {
        if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
            sqlite3_close(db);
            throw InputError(file, "cannot open the results store: " + why);
        }
        sqlite3_busy_timeout(db, 2000);
    }
    ~Db() { sqlite3_close(db); }
    sqlite3* db = nullptr;
};

// Reading the store's tables: a statement that cannot be prepared means the file is not a results store.
struct Q : SqlQuery {
    Q(sqlite3* db, const char* sql, const std::string& file) : SqlQuery(db, sql) {
        if (!ok()) throw InputError(file, "not an Orrery results store: " + error());
    }
};

// Metrics shown first, in this order, when present; the rest follow by name.
const std::vector<std::string> kPreferred = {"iteration_time", "fct_mean", "fct_p50", "fct_p99", "fct_max", "slowdown_mean", "slowdown_p99",
                                             "peak_queue", "pfc_pauses", "events_skipped_share", "simulated_time", "wall_time"};

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

std::string number(double v) {
    std::ostringstream o;
    o.precision(6);
    o << v;
    return o.str();
}

// A swept value as a person reads it: a JSON string without its quotes (a preset name, a rate), anything
// else as compact JSON.
std::string parameter_text(const std::string& value_json) {
    const nlohmann::json v = nlohmann::json::parse(value_json, nullptr, false);
    if (v.is_discarded()) return value_json;
    return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// A horizontal bar chart of one metric over the experiments, as inline SVG.
std::string bar_chart(const ResultsTable& t, size_t m, int baseline) {
    double top = 0;
    for (const ResultRow& r : t.rows)
        if (r.metrics[m]) top = std::max(top, std::fabs(*r.metrics[m]));
    if (top <= 0) return "";
    const int bar = 18, label = 90, width = 520;
    std::ostringstream svg;
    svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width + label + 120 << "' height='" << t.rows.size() * (bar + 4) + 24 << "'>";
    svg << "<text x='0' y='14' font-size='13' font-weight='bold'>" << html_escape(t.metrics[m].header()) << "</text>";
    for (size_t i = 0; i < t.rows.size(); ++i) {
        const ResultRow& r = t.rows[i];
        const int y = 22 + int(i) * (bar + 4);
        svg << "<text x='0' y='" << y + 13 << "' font-size='12'>" << html_escape(r.experiment) << "</text>";
        if (!r.metrics[m]) continue;
        const int w = int(std::fabs(*r.metrics[m]) / top * width);
        svg << "<rect x='" << label << "' y='" << y << "' width='" << std::max(w, 1) << "' height='" << bar << "' fill='"
            << (int(i) == baseline ? "#888" : "#4a7fc1") << "'/>";
        svg << "<text x='" << label + w + 4 << "' y='" << y + 13 << "' font-size='11'>" << number(*r.metrics[m]) << " " << html_escape(t.metrics[m].unit) << "</text>";
    }
    svg << "</svg>";
    return svg.str();
}

}  // namespace

std::vector<RunInfo> list_runs(const std::string& store) {
    Db db(store);
    std::vector<RunInfo> out;
    Q q(db.db, "SELECT r.run_id, r.scenario_name, r.started_utc, r.status, coalesce(r.wall_seconds, 0), "
               "(SELECT count(*) FROM experiments e WHERE e.run_id = r.run_id) FROM runs r ORDER BY r.run_id DESC", store);
    while (q.next()) out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), int(q.integer(5)), q.real(4)});
    return out;
}

ResultsTable read_results(const std::string& store, int64_t run_id) {
    Db db(store);
    ResultsTable t;
    for (const RunInfo& r : list_runs(store))
        if (r.run_id == run_id) t.run = r;
    std::map<std::string, size_t> row_of;
    {
        Q q(db.db, "SELECT experiment, status, coalesce(message, '') FROM experiments WHERE run_id = ? ORDER BY idx", store);
        q.bind(1, run_id);
        while (q.next()) {
            row_of[q.text(0)] = t.rows.size();
            t.rows.push_back({q.text(0), q.text(1), q.text(2), {}, {}});
        }
    }
    std::map<std::string, std::map<std::string, std::string>> params;  // path → experiment → value
    {
        Q q(db.db, "SELECT experiment, path, value_json FROM parameters WHERE run_id = ?", store);
        q.bind(1, run_id);
        while (q.next()) params[q.text(1)][q.text(0)] = parameter_text(q.text(2));
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
    std::map<std::string, std::string> units;
    std::map<std::string, std::map<std::string, double>> values;  // metric → experiment → value
    {
        Q q(db.db, "SELECT experiment, name, value, unit FROM metrics WHERE run_id = ?", store);
        q.bind(1, run_id);
        while (q.next()) {
            units[q.text(1)] = q.text(3);
            if (!q.is_null(2)) values[q.text(1)][q.text(0)] = q.real(2);
        }
    }
    {
        Q q(db.db, "SELECT experiment, max(max_bytes) FROM queue_tiers WHERE run_id = ? GROUP BY experiment", store);
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
                std::snprintf(percent, sizeof percent, "%.1f", share * 100);
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

std::string results_html(const ResultsTable& t, int baseline) {
    std::ostringstream h;
    h << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Orrery comparison: " << html_escape(t.run.scenario) << "</title>"
      << "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
         "th{background:#eee}td:first-child,th:first-child{text-align:left}.base{background:#f4f4f4}.worse{color:#b00}.better{color:#070}</style></head><body>";
    h << "<h1>" << html_escape(t.run.scenario) << "</h1><p>Run " << t.run.run_id << ", started " << html_escape(t.run.started_utc) << " UTC, "
      << t.rows.size() << " experiments, status " << html_escape(t.run.status) << ", " << number(t.run.wall_seconds) << " s wall.</p>";
    h << "<h2>Parameters that differ</h2><table><tr><th>experiment</th>";
    for (size_t p = 0; p < t.parameter_paths.size(); ++p)
        if (t.parameter_differs[p]) h << "<th>" << html_escape(t.parameter_paths[p]) << "</th>";
    h << "</tr>";
    for (const ResultRow& r : t.rows) {
        h << "<tr><td>" << html_escape(r.experiment) << "</td>";
        for (size_t p = 0; p < t.parameter_paths.size(); ++p)
            if (t.parameter_differs[p]) h << "<td>" << html_escape(r.parameters[p]) << "</td>";
        h << "</tr>";
    }
    h << "</table><h2>Metrics</h2>";
    if (baseline >= 0 && baseline < int(t.rows.size())) h << "<p>Baseline: " << html_escape(t.rows[size_t(baseline)].experiment) << "; others show their difference to it.</p>";
    h << "<table><tr><th>experiment</th><th>status</th>";
    for (const MetricColumn& m : t.metrics) h << "<th>" << html_escape(m.header()) << "</th>";
    h << "</tr>";
    for (size_t i = 0; i < t.rows.size(); ++i) {
        const ResultRow& r = t.rows[i];
        h << "<tr" << (int(i) == baseline ? " class='base'" : "") << "><td>" << html_escape(r.experiment) << "</td><td>" << html_escape(r.status) << "</td>";
        for (size_t m = 0; m < t.metrics.size(); ++m) {
            h << "<td>" << (r.metrics[m] ? number(*r.metrics[m]) : "–");
            if (baseline >= 0 && int(i) != baseline)
                if (auto d = relative_to(r.metrics[m], t.rows[size_t(baseline)].metrics[m]))
                    h << " <span class='" << (*d > 0 ? "worse" : "better") << "'>(" << (*d > 0 ? "+" : "") << number(*d * 100) << "%)</span>";
            h << "</td>";
        }
        h << "</tr>";
    }
    h << "</table>";
    if (!t.notes.empty()) {
        h << "<h2>Notes</h2><ul>";
        for (const std::string& n : t.notes) h << "<li>" << html_escape(n) << "</li>";
        h << "</ul>";
    }
    h << "<h2>Charts</h2>";
    for (size_t m = 0; m < t.metrics.size(); ++m) h << "<div>" << bar_chart(t, m, baseline) << "</div>";
    h << "<p style='color:#888'>Written by Orrery from the project's results store.</p></body></html>\n";
    return h.str();
}

}  // namespace orrery::views
