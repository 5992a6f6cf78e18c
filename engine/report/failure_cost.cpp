#include "report/failure_cost.h"

#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "report/fabric_text.h"
#include "report/report_text.h"

namespace orrery::report {
namespace {

struct Group {
    std::string design, events;  // the other parameters' values; the events' label
    std::vector<size_t> rows;
};

std::optional<double> mean_of(const ResultsTable& t, const std::vector<size_t>& rows, const std::string& metric) {
    double sum = 0;
    size_t n = 0;
    for (size_t r : rows)
        if (auto v = metric_value(t, r, metric)) sum += *v, ++n;
    return n ? std::optional<double>(sum / double(n)) : std::nullopt;
}

std::string join_with(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
    return out;
}

}  // namespace

std::vector<std::string> failure_sentences(const ResultsTable& t, double tie) {
    size_t events = t.parameter_paths.size();
    for (size_t p = 0; p < t.parameter_paths.size(); ++p)
        if (t.parameter_paths[p] == "topology.events" && t.parameter_differs[p]) events = p;
    if (events == t.parameter_paths.size()) return {};
    std::vector<Group> groups;
    for (size_t i = 0; i < t.rows.size(); ++i) {
        Group g{differing_values(t, i, {"topology.events", "seed"}), t.rows[i].parameters[events], {i}};
        bool found = false;
        for (Group& h : groups)
            if (h.design == g.design && h.events == g.events) h.rows.push_back(i), found = true;
        if (!found) groups.push_back(std::move(g));
    }
    // Each job's iteration time for a mix of jobs (so a reader sees which job a fault hurts); iteration time for one
    // LLM job; mean and p99 FCT for flow workloads.
    std::vector<std::string> metrics;
    const std::string job_prefix = "job_iteration_time.";
    for (const MetricColumn& m : t.metrics)
        if (m.name.rfind(job_prefix, 0) == 0) metrics.push_back(m.name);
    const bool jobs = !metrics.empty();
    if (jobs) {
    } else if (!metric_unit(t, "iteration_time").empty()) metrics = {"iteration_time"};
    else
        for (const char* m : {"fct_mean", "fct_p99"})
            if (!metric_unit(t, m).empty()) metrics.push_back(m);
    if (metrics.empty()) return {};
    std::vector<std::string> order;                       // failures, as first met
    std::map<std::string, std::vector<std::string>> cost;  // failure → "+2.0 % with ecmp", …
    for (const Group& failed : groups) {
        if (failed.events == kHealthyFabric) continue;
        const Group* healthy = nullptr;
        for (const Group& h : groups)
            if (h.events == kHealthyFabric && h.design == failed.design) healthy = &h;
        if (!healthy) continue;
        std::vector<std::string> changes;
        for (const std::string& m : metrics) {
            const auto a = mean_of(t, healthy->rows, m), b = mean_of(t, failed.rows, m);
            if (!a || !b || *a == 0) continue;
            const double d = (*b - *a) / std::fabs(*a);
            const std::string label = jobs ? "job " + m.substr(job_prefix.size()) + " " : metrics.size() > 1 ? metric_label(m) + " " : "";
            changes.push_back(label + (std::fabs(d) < tie ? "the same within " + format_percent(tie) : format_percent(d, true)));
        }
        if (changes.empty()) continue;
        std::string s = join_with(changes, ", ");
        if (!failed.design.empty()) s += " with " + failed.design;
        std::vector<std::string> losses;
        if (auto lost = mean_of(t, failed.rows, "lost_to_failures"); lost && *lost > 0) losses.push_back(format_value(*lost, "packets") + " lost to failed links");
        if (auto timeouts = mean_of(t, failed.rows, "timeouts"); timeouts && *timeouts > 0) losses.push_back(format_value(*timeouts, "timeouts"));
        if (!losses.empty()) s += " (" + join_with(losses, ", ") + ")";
        if (!cost.count(failed.events)) order.push_back(failed.events);
        cost[failed.events].push_back(s);
    }
    std::vector<std::string> out;
    const std::string what = jobs || metrics.front() == "iteration_time" ? metric_label("iteration_time") + " " : "";
    for (const std::string& failure : order) {
        std::string s = failure + ": " + what + join_with(cost[failure], "; ") + ", against the same design" + (cost[failure].size() > 1 ? "s" : "") +
                        " on the healthy fabric.";
        s[0] = char(std::toupper(static_cast<unsigned char>(s[0])));
        out.push_back(s);
    }
    return out;
}

}  // namespace orrery::report
