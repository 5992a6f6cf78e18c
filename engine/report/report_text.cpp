#include "report/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "report/job_text.h"

namespace orrery::report {
namespace {

std::string printf_text(const char* format, double v) {
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string sig4(double v) { return std::fabs(v) >= 1e4 ? printf_text("%.0f", v) : printf_text("%.4g", v); }

bool ends_with(const std::string& s, const std::string& tail) { return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0; }

std::string seconds(double s) {
    const double a = std::fabs(s);
    if (a == 0) return "0 s";
    if (a < 1e-6) return sig4(s * 1e9) + " ns";
    if (a < 1e-3) return sig4(s * 1e6) + " µs";
    if (a < 1) return sig4(s * 1e3) + " ms";
    return sig4(s) + " s";
}

std::string bytes(double b) {
    const double a = std::fabs(b);
    if (a < 1024) return sig4(b) + " B";
    if (a < 1024.0 * 1024) return sig4(b / 1024) + " KiB";
    if (a < 1024.0 * 1024 * 1024) return sig4(b / (1024.0 * 1024)) + " MiB";
    return sig4(b / (1024.0 * 1024 * 1024)) + " GiB";
}

std::string count(double v, const std::string& unit) {
    const double a = std::fabs(v);
    const std::string u = unit.empty() ? "" : " " + unit;
    if (a < 1e4) return (v == std::floor(v) ? printf_text("%.0f", v) : sig4(v)) + u;
    if (a < 1e6) return sig4(v / 1e3) + " k" + u;
    if (a < 1e9) return sig4(v / 1e6) + " M" + u;
    return sig4(v / 1e9) + " G" + u;
}

std::string join(const std::vector<std::string>& items, const std::string& last = "and") {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " " + last + " " : ", ") + items[i];
    return out;
}

struct Ranking {
    std::vector<size_t> rows;  // rows with a value, best first
    double best = 0, worst = 0;
    std::vector<size_t> best_set;  // within the tie of the best
    bool tied = true;              // every value within the tie
    double spread = 0;             // (worst − best) / |worst|
};

Ranking rank(const ResultsTable& t, const std::string& metric, double tie) {
    Ranking r;
    for (size_t i = 0; i < t.rows.size(); ++i)
        if (metric_value(t, i, metric)) r.rows.push_back(i);
    std::stable_sort(r.rows.begin(), r.rows.end(), [&](size_t a, size_t b) { return *metric_value(t, a, metric) < *metric_value(t, b, metric); });
    if (r.rows.empty()) return r;
    r.best = *metric_value(t, r.rows.front(), metric);
    r.worst = *metric_value(t, r.rows.back(), metric);
    // "x % below the worst": relative to the worst, so it never exceeds 100 %.
    const double scale = std::fabs(r.worst) > 0 ? std::fabs(r.worst) : std::fabs(r.best);
    r.spread = scale > 0 ? (r.worst - r.best) / scale : 0;
    r.tied = r.spread < tie;
    for (size_t i : r.rows)
        if (scale == 0 || (*metric_value(t, i, metric) - r.best) / scale < tie) r.best_set.push_back(i);
    return r;
}

}  // namespace

std::string format_value(double value, const std::string& unit, const std::string& metric) {
    if (unit == "s") return seconds(value);
    if (unit == "us") return seconds(value * 1e-6);
    if (unit == "ps") return seconds(value * 1e-12);
    if (unit == "B" || unit == "bytes") return bytes(value);
    if (unit == "MiB") return bytes(value * 1024 * 1024);
    if (unit == "ratio") return ends_with(metric, "_share") ? printf_text("%.1f %%", value * 100) : sig4(value) + "×";
    return count(value, unit);
}

std::string format_percent(double ratio, bool sign) {
    const double p = ratio * 100;
    std::string digits = std::fabs(p) >= 100 ? printf_text("%.0f", std::fabs(p)) : printf_text("%.1f", std::fabs(p));
    if (!sign) return (p < 0 ? "−" : "") + digits + " %";
    return (p < 0 ? "−" : "+") + digits + " %";
}

const std::vector<IterationPart>& iteration_parts() {
    static const std::vector<IterationPart> parts = {{"compute", "compute (optimizer included)", "compute"},
                                                     {"exposed_tp", "exposed TP communication", "exposed TP"},
                                                     {"exposed_pp", "exposed PP communication", "exposed PP"},
                                                     {"exposed_dp", "exposed DP communication", "exposed DP"},
                                                     {"exposed_ep", "exposed EP communication", "exposed EP"},
                                                     {"exposed_embedding", "exposed embedding-gradient sync", "exposed embedding sync"},
                                                     {"bubble", "pipeline bubble", "bubble"},
                                                     {"optimizer", "optimizer", "optimizer"},
                                                     {"idle", "idle time", "idle"}};
    return parts;
}

const std::vector<KeyMetric>& key_metrics() {
    static const std::vector<KeyMetric> keys = {{"iteration_time", "iteration time"}, {"fct_mean", "mean FCT"},         {"fct_p99", "p99 FCT"},
                                                {"slowdown_p99", "p99 slowdown"},     {"peak_queue", "peak switch queue"}, {"pfc_pauses", "PFC pauses"}};
    return keys;
}

bool is_fabric_metric(const std::string& name) {
    return name.rfind("uplink_imbalance_tier", 0) == 0 || name == "drops" || name == "lost_to_failures" || name == "retransmits" ||
           name == "timeouts";
}

std::string metric_label(const std::string& name) {
    if (std::string job = job_metric_label(name); !job.empty()) return job;
    if (const std::string prefix = "uplink_imbalance_tier"; name.rfind(prefix, 0) == 0) {
        const std::string tier = name.substr(prefix.size());
        const int below = std::atoi(tier.c_str());
        return "uplink imbalance, tier " + tier + " to " + std::to_string(below + 1) + " (busiest / mean)";
    }
    static const std::vector<std::pair<std::string, std::string>> known = {
        {"iteration_time", "iteration time"}, {"fct_mean", "mean FCT"},          {"fct_p50", "median FCT"},   {"fct_p99", "p99 FCT"},
        {"fct_max", "max FCT"},               {"slowdown_mean", "mean slowdown"}, {"slowdown_p99", "p99 slowdown"}, {"peak_queue", "peak switch queue"},
        {"pfc_pauses", "PFC pauses"},         {"events_skipped_share", "events skipped"}, {"lost_on_links", "lost on links"}, {"lost_to_failures", "lost to failed links"}, {"retransmits", "retransmitted packets"}, {"timeouts", "retransmission timeouts"},
        {"flows_finished", "flows finished"}, {"engine_memory", "engine memory"}, {"memo_hits", "memo hits"}, {"memo_misses", "memo misses"},
        {"memo_follows", "memo follows"},     {"bytes_skipped", "bytes skipped"}, {"events_skipped_estimate", "events skipped (estimate)"},
        {"tails_measured", "tails measured"}, {"tail_replays", "tails replayed"}};
    for (const auto& [n, label] : known)
        if (n == name) return label;
    std::string base = name, tail;
    if (ends_with(base, "_mean_per_rank")) base.resize(base.size() - 14), tail = ", mean per rank";
    for (const IterationPart& p : iteration_parts())
        if (p.part == base) return p.sentence + tail;
    for (char& c : base)
        if (c == '_') c = ' ';
    return base + tail;
}

std::string parameter_value_label(const std::string& path, const std::string& text) {
    if (ends_with(path, ".placement") && !text.empty() && text[0] == '{') return placement_label(text);
    if (text != "true" && text != "false") return text;
    std::string name = path;
    if (ends_with(name, ".enabled")) name.resize(name.size() - 8);
    if (const size_t dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
    for (char& c : name)
        if (c == '_') c = ' ';
    return name + (text == "true" ? " on" : " off");
}

std::string differing_values(const ResultsTable& t, size_t row, const std::vector<std::string>& except) {
    std::string out;
    for (size_t p = 0; p < t.parameter_paths.size(); ++p) {
        if (!t.parameter_differs[p] || std::find(except.begin(), except.end(), t.parameter_paths[p]) != except.end()) continue;
        if (!out.empty()) out.append(", ");
        out.append(parameter_value_label(t.parameter_paths[p], t.rows[row].parameters[p]));
    }
    return out;
}

std::string metric_unit(const ResultsTable& t, const std::string& name) {
    for (const MetricColumn& m : t.metrics)
        if (m.name == name) return m.unit;
    return "";
}

std::optional<double> metric_value(const ResultsTable& t, size_t r, const std::string& name) {
    for (size_t m = 0; m < t.metrics.size(); ++m)
        if (t.metrics[m].name == name) return t.rows[r].metrics[m];
    return std::nullopt;
}

std::vector<std::string> summarize(const SummaryInput& in) {
    const ResultsTable& t = *in.table;
    std::vector<std::string> out;
    auto unit_of = [&](const std::string& name) { return metric_unit(t, name); };
    auto value_text = [&](size_t row, const std::string& name) { return format_value(*metric_value(t, row, name), unit_of(name), name); };
    auto tie_of = [&](const std::string& name) {
        auto it = in.metric_tie.find(name);
        return it == in.metric_tie.end() ? in.tie : std::max(in.tie, it->second);
    };
    const std::string tie_text = format_percent(in.tie);

    std::vector<std::pair<KeyMetric, Ranking>> ranked;
    for (const KeyMetric& k : key_metrics()) {
        Ranking r = rank(t, k.name, tie_of(k.name));
        if (r.rows.size() >= 2) ranked.push_back({k, std::move(r)});
    }
    if (t.rows.size() == 1) {
        // Nothing to rank: say what the one design gives, and what it spends its iteration on besides compute.
        std::vector<std::string> facts;
        for (const KeyMetric& k : key_metrics())
            if (metric_value(t, 0, k.name)) facts.push_back(std::string(k.label) + " " + value_text(0, k.name));
        std::string s = "One experiment, so nothing to compare" + (facts.empty() ? std::string(".") : ": " + join(facts) + ".");
        std::string part_label;
        double biggest = 0;
        for (const IterationPart& p : iteration_parts())
            if (auto v = metric_value(t, 0, p.metric()); v && p.part != "compute" && *v > biggest) biggest = *v, part_label = p.sentence;
        if (!part_label.empty())
            s += " Besides compute, a rank's iteration goes mostly to " + part_label + " (" + format_value(biggest, "s") + ", mean over ranks).";
        out.push_back(s + " A sweep (Sweep tab, or \"sweep\" in the scenario) compares designs.");
        return out;
    }
    if (ranked.empty()) {
        out.push_back("Fewer than two experiments finished with comparable metrics: nothing to rank.");
        return out;
    }
    const auto primary = std::find_if(ranked.begin(), ranked.end(), [](const auto& kr) { return !kr.second.tied; });
    if (primary == ranked.end()) {
        std::vector<std::string> names;
        for (const auto& [k, r] : ranked) names.push_back(k.label);
        out.push_back("No design is better: the " + std::to_string(ranked.front().second.rows.size()) + " " + in.subject + " agree within " +
                      (in.metric_tie.empty() ? tie_text : "the model's resolution and their seeds' spread") +
                      " on " + join(names) + ". The parameters they differ in do not change these results here.");
    } else {
        const size_t winner = primary->second.rows.front();
        const std::vector<size_t>& winners = primary->second.best_set;
        std::vector<std::string> also, names;
        for (auto it = primary + 1; it != ranked.end(); ++it) {
            const auto& best = it->second.best_set;
            const bool all_best = std::all_of(winners.begin(), winners.end(), [&](size_t w) { return std::find(best.begin(), best.end(), w) != best.end(); });
            if (!it->second.tied && all_best) also.push_back(std::string("the lowest ") + it->first.label);
        }
        for (size_t w : winners) names.push_back(in.labels[w]);
        std::string s = winners.size() == 1 ? "Best design: " + names.front()
                                            : "Best designs, tied within " + format_percent(tie_of(primary->first.name)) + ": " + join(names);
        s += ", with the lowest " + std::string(primary->first.label) + " (" + value_text(winner, primary->first.name) + ", " +
             format_percent(primary->second.spread) + " below the worst)";
        if (!also.empty()) s += "; " + std::string(winners.size() == 1 ? "it also has " : "they also have ") + join(also);
        out.push_back(s + ".");
        // What the difference is made of: the iteration's parts, best against worst.
        const size_t worst = primary->second.rows.back();
        if (std::string(primary->first.name) == "iteration_time") {
            std::string part_label;
            double biggest = 0, a = 0, b = 0;
            for (const IterationPart& p : iteration_parts()) {
                const auto w = metric_value(t, winner, p.metric()), l = metric_value(t, worst, p.metric());
                if (w && l && std::fabs(*l - *w) > std::fabs(biggest)) biggest = *l - *w, part_label = p.sentence, a = *w, b = *l;
            }
            if (!part_label.empty())
                out.push_back("Of a rank's iteration (mean over ranks), " + part_label + " differs most: " + format_value(a, "s") + " against " +
                              format_value(b, "s") + " in " + in.labels[worst] + ".");
        } else {
            std::vector<std::string> names, mine, theirs;
            for (const char* name : {"pfc_pauses", "peak_queue"}) {
                const auto w = metric_value(t, winner, name), l = metric_value(t, worst, name);
                if (!w || !l || *w == *l) continue;
                names.push_back(metric_label(name));
                mine.push_back(format_value(*w, unit_of(name), name));
                theirs.push_back(format_value(*l, unit_of(name), name));
            }
            if (!names.empty())
                out.push_back("Its " + join(names) + ": " + join(mine) + ", against " + join(theirs) + " in " + in.labels[worst] + ".");
        }
    }
    for (const auto& [k, r] : ranked) {
        std::string s = std::string(1, char(std::toupper(static_cast<unsigned char>(k.label[0])))) + (k.label + 1) + ": ";
        if (r.best == r.worst) {
            s += value_text(r.rows.front(), k.name) + " in all " + std::to_string(r.rows.size()) + ".";
        } else if (r.tied) {
            s += "all " + std::to_string(r.rows.size()) + " agree within " + format_percent(tie_of(k.name)) + " (" + value_text(r.rows.front(), k.name);
            s += " to " + value_text(r.rows.back(), k.name) + ").";
        } else {
            std::vector<std::string> best;
            for (size_t i : r.best_set) best.push_back(in.labels[i]);
            s += "best " + join(best) + " at " + value_text(r.rows.front(), k.name) + ", " + format_percent(r.spread) + " below the worst, " +
                 in.labels[r.rows.back()] + " at " + value_text(r.rows.back(), k.name) + ".";
        }
        out.push_back(s);
    }
    if (in.baseline >= 0 && size_t(in.baseline) < t.rows.size()) {
        const auto& [k, r] = primary == ranked.end() ? ranked.front() : *primary;
        const auto base = metric_value(t, size_t(in.baseline), k.name);
        if (base && *base != 0) {
            std::vector<std::string> parts;
            for (size_t i : r.rows) {
                if (int(i) == in.baseline) continue;
                const double d = (*metric_value(t, i, k.name) - *base) / std::fabs(*base);
                parts.push_back(in.labels[i] + " " + (std::fabs(d) < tie_of(k.name) ? "the same within " + format_percent(tie_of(k.name)) : format_percent(d, true)));
            }
            out.push_back("Against the baseline " + in.labels[size_t(in.baseline)] + ", " + k.label + ": " + join(parts) + ".");
        }
    }
    return out;
}

std::string placement_label(const std::string& json_text) {
    const nlohmann::json p = nlohmann::json::parse(json_text, nullptr, false);
    if (!p.is_object() || !p.contains("policy") || !p["policy"].is_string()) return json_text;
    std::string out = p["policy"].get<std::string>();
    if (p.contains("seed")) out.append(" (seed ").append(p["seed"].dump()).append(")");
    if (p.contains("hosts") && p["hosts"].is_array()) {
        std::string hosts;
        for (const nlohmann::json& h : p["hosts"]) hosts.append(hosts.empty() ? "" : ",").append(h.is_string() ? h.get<std::string>() : h.dump());
        out.append(" ").append(hosts);
    }
    return out;
}

}  // namespace orrery::report
