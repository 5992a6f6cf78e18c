#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "report/failure_cost.h"
#include "report/job_text.h"
#include "report/report_text.h"
#include "report/store_query.h"

namespace orrery::report {
namespace {

// How closely the model ranks designs. Packet level: Orrery's mean and last completion times agree with the
// reference simulator within 0.5 % (engine/net/README.md, tests/reference/ns3-hpcc). With steady-state
// skipping, its error bound on mean per-flow FCT is 1 % (engine/wormhole/README.md).
constexpr double kPacketTie = 0.005, kSkippingTie = 0.01;
constexpr size_t kCdfPoints = 300, kTimePoints = 400;
constexpr size_t kMaxLines = 12;  // lines overlaid in one chart: beyond a dozen, colours and legend stop telling them apart

// Seconds in the unit that suits `largest`: the factor and the unit's name.
std::pair<double, std::string> time_unit(double largest_seconds) {
    if (largest_seconds < 1e-3) return {1e6, "µs"};
    if (largest_seconds < 1) return {1e3, "ms"};
    return {1, "s"};
}

void read_reproducibility(sqlite3* db, const std::string& store, int64_t run, Reproducibility& out) {
    out.store = store;
    StoreQuery q(db,
            "SELECT coalesce(scenario_file, ''), coalesce(scenario_sha256, ''), coalesce(engine_version, ''), coalesce(git_revision, ''), "
            "coalesce(backend, ''), coalesce(device, ''), coalesce(host, ''), coalesce(threads, 0) FROM runs WHERE run_id = ?",
            store);
    q.bind(1, run);
    if (q.next())
        out.scenario_file = q.text(0), out.scenario_sha256 = q.text(1), out.engine_version = q.text(2), out.git_revision = q.text(3),
        out.backend = q.text(4), out.device = q.text(5), out.host = q.text(6), out.threads = q.integer(7);
    bool kept = false;  // stores written before runs kept their scenario have no such column
    {
        StoreQuery info(db, "PRAGMA table_info(runs)", store);
        while (info.next()) kept |= info.text(1) == "scenario_json";
    }
    if (kept) {
        StoreQuery s(db, "SELECT coalesce(scenario_json, '') FROM runs WHERE run_id = ?", store);
        s.bind(1, run);
        if (s.next()) out.scenario_json = s.text(0);
    }
    StoreQuery e(db, "SELECT experiment, coalesce(seed, 0), coalesce(sha256, ''), coalesce(wall_seconds, 0) FROM experiments WHERE run_id = ? ORDER BY idx", store);
    e.bind(1, run);
    while (e.next()) out.experiments.push_back({e.text(0), e.text(2), e.integer(1), e.real(3)});
}

// The experiments a line chart overlays: all up to kMaxLines; beyond, the baseline, the best and the worst on the
// first key metric the run has, and evenly spaced others, in sweep order.
std::vector<size_t> charted_rows(const Report& r) {
    const size_t n = r.table.rows.size();
    std::vector<size_t> out;
    if (n <= kMaxLines) {
        for (size_t i = 0; i < n; ++i) out.push_back(i);
        return out;
    }
    std::set<size_t> pick;
    if (r.baseline >= 0) pick.insert(size_t(r.baseline));
    for (const KeyMetric& k : key_metrics()) {
        std::optional<size_t> best, worst;
        for (size_t i = 0; i < n; ++i)
            if (auto v = metric_value(r.table, i, k.name)) {
                if (!best || *v < *metric_value(r.table, *best, k.name)) best = i;
                if (!worst || *v > *metric_value(r.table, *worst, k.name)) worst = i;
            }
        if (best) {
            pick.insert(*best);
            pick.insert(*worst);
            break;
        }
    }
    for (size_t j = 0; pick.size() < kMaxLines && j < kMaxLines; ++j) pick.insert(j * (n - 1) / (kMaxLines - 1));
    for (size_t i = 0; pick.size() < kMaxLines && i < n; ++i) pick.insert(i);
    return std::vector<size_t>(pick.begin(), pick.end());
}

std::string charted_note(const Report& r, size_t shown) {
    return shown < r.table.rows.size() ? " (" + std::to_string(shown) + " of " + std::to_string(r.table.rows.size()) + ")" : "";
}

LineChart read_fct_cdf(sqlite3* db, const std::string& store, int64_t run, const Report& r) {
    LineChart c{"Flow completion times, CDF per experiment", "", "fraction of flows", false, true, {}, {}};
    std::vector<std::vector<double>> fcts;
    double lo = INFINITY, hi = 0;
    for (const ResultRow& row : r.table.rows) {
        StoreQuery q(db, "SELECT fct_ps FROM flows WHERE run_id = ? AND experiment = ? AND fct_ps IS NOT NULL ORDER BY fct_ps", store);
        q.bind(1, run).bind(2, row.experiment);
        std::vector<double> v;
        while (q.next()) v.push_back(double(q.integer(0)) * 1e-12);
        if (!v.empty()) lo = std::min(lo, v.front()), hi = std::max(hi, v.back());
        fcts.push_back(std::move(v));
    }
    if (hi <= 0) return c;
    const auto [factor, unit] = time_unit(hi);
    c.x_label = "flow completion time (" + unit + ")";
    c.log_x = hi / lo > 50;
    const std::vector<size_t> rows = charted_rows(r);
    c.title += charted_note(r, rows.size());
    for (size_t i : rows) {
        ChartSeries s{r.short_labels[i], {}};
        const std::vector<double>& v = fcts[i];
        // A CDF keeps its shape with a few hundred quantiles; millions of flows would only bloat the page.
        const size_t n = v.size(), points = std::min(n, kCdfPoints);
        for (size_t j = 0; j < points; ++j) {
            const size_t k = points == 1 ? n - 1 : j * (n - 1) / (points - 1);
            s.points.push_back({v[k] * factor, double(k + 1) / double(n)});
        }
        c.series.push_back(std::move(s));
    }
    return c;
}

// Bytes in the unit that suits `largest`: the divisor and the unit's name.
std::pair<double, std::string> byte_unit(double largest) {
    if (largest < 1024) return {1, "B"};
    if (largest < 1024.0 * 1024) return {1024, "KiB"};
    return {1024.0 * 1024, "MiB"};
}

std::vector<LineChart> read_queue_tiers(sqlite3* db, const std::string& store, int64_t run, Report& r) {
    static const char* const kTierName[] = {"", "leaf / ToR", "spine / aggregation", "core"};
    std::map<int, std::vector<std::vector<std::pair<double, double>>>> tiers;  // tier → row → (s, bytes)
    std::map<int, double> peak_of;
    double end = 0;
    for (size_t i = 0; i < r.table.rows.size(); ++i) {
        StoreQuery q(db, "SELECT tier, time_ps, max_bytes FROM queue_tiers WHERE run_id = ? AND experiment = ? ORDER BY tier, time_ps", store);
        q.bind(1, run).bind(2, r.table.rows[i].experiment);
        while (q.next()) {
            const int tier = int(q.integer(0));
            auto& rows = tiers[tier];
            rows.resize(r.table.rows.size());
            const double t = double(q.integer(1)) * 1e-12;
            rows[i].push_back({t, q.real(2)});
            peak_of[tier] = std::max(peak_of[tier], q.real(2));
            end = std::max(end, t);
        }
    }
    std::vector<LineChart> out;
    std::vector<std::string> quiet;
    const auto [factor, unit] = time_unit(end);
    for (auto& [tier, rows] : tiers) {
        const std::string name = tier >= 1 && tier <= 3 ? kTierName[tier] : "tier " + std::to_string(tier);
        if (peak_of[tier] <= 0) {  // a flat zero line says less than a sentence
            quiet.push_back(name);
            continue;
        }
        const auto [divisor, bytes] = byte_unit(peak_of[tier]);
        const std::vector<size_t> charted = charted_rows(r);
        LineChart c{"Largest port queue, " + name + " switches" + charted_note(r, charted.size()), "simulated time (" + unit + ")", "queue (" + bytes + ")", false,
                    true, {}, {}};
        for (size_t i : charted) {
            ChartSeries s{r.short_labels[i], {}};
            // The largest sample of each of kTimePoints slices: a queue's peaks must survive thinning.
            const auto& v = rows[i];
            const double slice = end / double(kTimePoints);
            for (size_t j = 0; j < v.size();) {
                const size_t bucket = slice > 0 ? size_t(v[j].first / slice) : 0;
                double t = v[j].first, peak = v[j].second;
                for (++j; j < v.size() && (slice > 0 ? size_t(v[j].first / slice) : 0) == bucket; ++j)
                    if (v[j].second > peak) peak = v[j].second, t = v[j].first;
                s.points.push_back({t * factor, peak / divisor});
            }
            c.series.push_back(std::move(s));
            for (const auto& [time_ps, what] : r.table.rows[i].fabric_events) {
                const std::pair<double, std::string> mark{double(time_ps) * 1e-12 * factor, what};
                if (time_ps > 0 && std::find(c.marks.begin(), c.marks.end(), mark) == c.marks.end()) c.marks.push_back(mark);
            }
        }
        out.push_back(std::move(c));
    }
    if (!quiet.empty()) {
        std::string names;
        for (size_t i = 0; i < quiet.size(); ++i) names += (i == 0 ? "" : i + 1 == quiet.size() ? " and " : ", ") + quiet[i];
        r.table.notes.push_back("No packet ever queued at the " + names + " switches in any experiment (queue samples every output.sample_interval).");
    }
    return out;
}

StackedBars iteration_breakdown(const Report& r) {
    StackedBars c{"Iteration breakdown, mean over ranks", "ms", {}, {}, {}};
    std::vector<const IterationPart*> present;
    for (const IterationPart& p : iteration_parts())
        for (size_t i = 0; i < r.table.rows.size(); ++i)
            if (auto v = metric_value(r.table, i, p.metric()); v && *v > 0) {
                present.push_back(&p);
                c.parts.push_back(p.legend);
                break;
            }
    if (present.empty()) return c;
    for (size_t i = 0; i < r.table.rows.size(); ++i) {
        std::vector<double> v;
        bool any = false;
        for (const IterationPart* p : present) {
            auto x = metric_value(r.table, i, p->metric());
            any = any || x.has_value();
            // The driver's compute includes the optimizer step; the bar shows them apart, so the parts add up to
            // the iteration.
            if (x && p->part == "compute")
                if (auto opt = metric_value(r.table, i, "optimizer_mean_per_rank")) *x -= *opt;
            v.push_back(x ? *x * 1e3 : 0);
        }
        if (!any) continue;
        c.bars.push_back(r.short_labels[i]);
        c.values.push_back(std::move(v));
    }
    return c;
}

BarChart skip_shares(const Report& r) {
    BarChart c{"Events skipped by steady-state skipping", "%", {}, {}};
    for (size_t i = 0; i < r.table.rows.size(); ++i)
        if (auto v = metric_value(r.table, i, "events_skipped_share")) {
            c.bars.push_back(r.short_labels[i]);
            c.values.push_back(*v * 100);
        }
    bool any = false;
    for (double v : c.values) any = any || v > 0;
    return any ? c : BarChart{};
}

// Each table's pages (with its indexes), from SQLite's dbstat, shared out by the fraction of its rows that are
// the run's: what deleting the run would about free. Nothing where dbstat is missing.
void read_disk_cost(sqlite3* db, const std::string& store, int64_t run, Report& r) {
    // The database's size as SQLite sees it: pages still in the write-ahead log count (a project the workbench
    // has open holds its newest runs there, and the main file's size lags behind).
    {
        SqlQuery count(db, "PRAGMA page_count"), size(db, "PRAGMA page_size");
        if (count.next() && size.next()) r.store_bytes = uint64_t(count.integer(0)) * uint64_t(size.integer(0));
    }
    if (r.store_bytes == 0) {
        std::error_code ec;
        r.store_bytes = uint64_t(std::filesystem::file_size(store, ec));
    }
    SqlQuery pages(db, "SELECT m.tbl_name, sum(d.pgsize) FROM dbstat d JOIN sqlite_master m ON m.name = d.name GROUP BY m.tbl_name");
    if (!pages.ok()) return;
    std::vector<std::pair<std::string, uint64_t>> tables;
    while (pages.next()) tables.push_back({pages.text(0), uint64_t(pages.integer(1))});
    for (const auto& [table, bytes] : tables) {
        bool keyed = false;  // tables with a run_id column hold runs' rows
        {
            const std::string info = "PRAGMA table_info(\"" + table + "\")";
            SqlQuery cols(db, info.c_str());
            while (cols.ok() && cols.next()) keyed |= cols.text(1) == "run_id";
        }
        if (!keyed || table == "runs") continue;
        const std::string sql = "SELECT count(*), sum(run_id = ?) FROM \"" + table + "\"";
        SqlQuery rows(db, sql.c_str());
        rows.bind(1, run);
        if (!rows.ok() || !rows.next() || rows.integer(0) == 0 || rows.integer(1) == 0) continue;
        r.disk_by_table.push_back({table, uint64_t(double(bytes) * double(rows.integer(1)) / double(rows.integer(0)))});
    }
    std::sort(r.disk_by_table.begin(), r.disk_by_table.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
}

}  // namespace

std::string disk_cost_sentence(const Report& r) {
    if (r.disk_by_table.empty()) return "";
    uint64_t total = 0;
    for (const auto& [table, bytes] : r.disk_by_table) total += bytes;
    std::string parts;
    for (size_t i = 0; i < r.disk_by_table.size() && i < 4; ++i)
        parts += (parts.empty() ? "" : ", ") + r.disk_by_table[i].first + " " + format_value(double(r.disk_by_table[i].second), "B");
    return "On disk, this run takes about " + format_value(double(total), "B") + " of the store's " + format_value(double(r.store_bytes), "B") + " (" + parts +
           "; output.record chooses what is kept).";
}

namespace {

// Student's t at 97.5 % for n − 1 degrees of freedom (a two-sided 95 % interval of a mean of n samples).
double t_975(size_t dof) {
    static const double table[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                   2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    return dof < std::size(table) ? table[dof] : 1.96;
}

// The first key metric's 95 % interval of the mean over seeds, per design, and whether the best design's interval
// stands apart from every other's: only then is it called best on that metric.
std::string interval_sentence(const ResultsTable& t, const std::vector<std::string>& order, const std::map<std::string, std::vector<size_t>>& designs) {
    for (const KeyMetric& k : key_metrics()) {
        size_t m = t.metrics.size();
        for (size_t j = 0; j < t.metrics.size(); ++j)
            if (t.metrics[j].name == k.name) m = j;
        if (m == t.metrics.size()) continue;
        struct Interval {
            std::string design;
            double mean, half;
        };
        std::vector<Interval> iv;
        for (const std::string& key : order) {
            std::vector<double> x;
            for (size_t i : designs.at(key))
                if (const auto& v = t.rows[i].metrics[m]) x.push_back(*v);
            if (x.size() < 2) return "";
            double mean = 0, ss = 0;
            for (double v : x) mean += v;
            mean /= double(x.size());
            for (double v : x) ss += (v - mean) * (v - mean);
            iv.push_back({key, mean, t_975(x.size() - 1) * std::sqrt(ss / double(x.size() - 1)) / std::sqrt(double(x.size()))});
        }
        // Every key metric is better lower (times, slowdown, queue, pauses).
        std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) { return a.mean < b.mean; });
        const std::string unit = metric_unit(t, k.name);
        std::string list;
        for (const Interval& i : iv) list += (list.empty() ? "" : "; ") + i.design + " " + format_value(i.mean, unit, k.name) + " ± " + format_value(i.half, unit, k.name);
        bool apart = iv.size() > 1;
        for (size_t j = 1; j < iv.size(); ++j)
            apart = apart && iv[0].mean + iv[0].half < iv[j].mean - iv[j].half;
        return "95 % intervals of the mean " + std::string(k.label) + " over seeds: " + list + ". " +
               (apart ? iv[0].design + "'s interval stands apart from every other design's: it is best on " + k.label + " with 95 % confidence."
                      : "The best design's interval overlaps another's: more seeds would be needed to call one best on " + std::string(k.label) + " with 95 % confidence.");
    }
    return "";
}

// Replications: with the seed swept beside other parameters, a design is the other parameters' values, and the
// summary ranks designs by their mean over seeds. A difference within a design's own spread over seeds (largest
// minus smallest, relative to the largest) is no difference. Empty when the run has no swept seed.
std::vector<std::string> replicated_summary(const Report& r) {
    const ResultsTable& t = r.table;
    size_t seed = t.parameter_paths.size();
    for (size_t p = 0; p < t.parameter_paths.size(); ++p)
        if (t.parameter_paths[p] == "seed" && t.parameter_differs[p]) seed = p;
    if (seed == t.parameter_paths.size()) return {};
    std::map<std::string, std::vector<size_t>> designs;  // design label → its rows
    std::vector<std::string> order;
    for (size_t i = 0; i < t.rows.size(); ++i) {
        std::string key = differing_values(t, i, {"seed"});
        if (key.empty()) key = "the design";
        if (!designs.count(key)) order.push_back(key);
        designs[key].push_back(i);
    }
    ResultsTable means;
    means.metrics = t.metrics;
    std::map<std::string, double> spread;
    for (const std::string& key : order) {
        ResultRow row{key, "ok", "", {}, {}, {}, {}};
        for (size_t m = 0; m < t.metrics.size(); ++m) {
            double sum = 0, lo = INFINITY, hi = -INFINITY;
            size_t n = 0;
            for (size_t i : designs[key])
                if (const auto& v = t.rows[i].metrics[m]) sum += *v, lo = std::min(lo, *v), hi = std::max(hi, *v), ++n;
            row.metrics.push_back(n ? std::optional<double>(sum / double(n)) : std::nullopt);
            if (n > 1 && std::fabs(hi) > 0) spread[t.metrics[m].name] = std::max(spread[t.metrics[m].name], (hi - lo) / std::fabs(hi));
        }
        means.rows.push_back(std::move(row));
    }
    const size_t seeds = designs[order.front()].size();
    std::vector<std::string> labels;
    for (const std::string& key : order) labels.push_back(key + " (" + std::to_string(designs[key].size()) + " seeds)");
    std::vector<std::string> out;
    if (order.size() == 1) {
        std::vector<std::string> facts;
        for (const KeyMetric& k : key_metrics())
            if (auto v = metric_value(means, 0, k.name)) {
                facts.push_back(std::string(k.label) + " " + format_value(*v, metric_unit(t, k.name), k.name) + " (seeds differ by up to " + format_percent(spread[k.name]) + ")");
            }
        out.push_back(std::to_string(t.rows.size()) + " seeds of one design, so nothing to rank: mean " + (facts.empty() ? std::string("metrics in the table") : facts[0]) +
                      (facts.size() > 1 ? "; " + facts[1] : "") + ".");
        return out;
    }
    // A pinned baseline is compared as its design.
    int baseline = -1;
    if (r.baseline >= 0)
        for (size_t d = 0; d < order.size(); ++d)
            for (size_t i : designs[order[d]])
                if (int(i) == r.baseline) baseline = int(d);
    out = summarize({&means, labels, baseline, r.tie, spread, "designs"});
    if (std::string ci = interval_sentence(t, order, designs); !ci.empty()) out.push_back(ci);
    out.push_back("Each design is the mean over its seeds (" + std::to_string(seeds) + " here); a difference smaller than the seeds' own spread counts as a tie.");
    return out;
}

}  // namespace

void compose_report(Report& r, int baseline) {
    const ResultsTable& t = r.table;
    r.baseline = baseline >= 0 && size_t(baseline) < t.rows.size() ? baseline : -1;
    r.labels.clear();
    r.short_labels.clear();
    for (const ResultRow& row : t.rows) {
        std::string values;
        for (size_t p = 0; p < t.parameter_paths.size(); ++p)
            if (t.parameter_differs[p])
                values += (values.empty() ? "" : ", ") +
                          (t.parameter_paths[p] == "seed" ? "seed " + row.parameters[p] : parameter_value_label(t.parameter_paths[p], row.parameters[p]));
        r.short_labels.push_back(values.empty() ? row.experiment : values);
        r.labels.push_back(values.empty() ? row.experiment : values + " (" + row.experiment + ")");
    }
    bool skipping = false;
    for (size_t i = 0; i < t.rows.size(); ++i)
        if (auto v = metric_value(t, i, "events_skipped_share"); v && *v > 0) skipping = true;
    r.tie = skipping ? kSkippingTie : kPacketTie;
    r.tie_reason = skipping ? "Differences under 1 % are reported as ties: steady-state skipping, on in this run, keeps mean per-flow FCT within 1 % "
                              "of the packet-level run, not closer."
                            : "Differences under 0.5 % are reported as ties: that is how closely Orrery's mean and last completion times agree "
                              "with the reference packet-level simulator.";
    r.summary = replicated_summary(r);
    if (r.summary.empty()) {
        r.summary = summarize({&r.table, r.labels, r.baseline, r.tie, {}, "experiments"});
        if (t.rows.size() > 1)  // one seed per design: how sure a difference is cannot be told from this run
            r.tie_reason += " Each design ran once (one seed): a difference smaller than the model's own seed-to-seed spread is no difference; "
                            "set sweep.replications (5, say) in the scenario to measure that spread and get 95 % intervals.";
    }
    // A failure study's question comes first: what each failure cost its design.
    const std::vector<std::string> failures = failure_sentences(t, r.tie);
    r.summary.insert(r.summary.begin(), failures.begin(), failures.end());
    // Several jobs on one fabric: how much each slowed the others, right after what failures cost.
    const std::vector<std::string> jobs = job_sentences(t, r.labels);
    r.summary.insert(r.summary.begin() + std::ptrdiff_t(failures.size()), jobs.begin(), jobs.end());
}

Report read_report(const std::string& store, int64_t run_id, const std::string& baseline) {
    const std::vector<RunInfo> runs = list_runs(store);
    if (runs.empty()) throw InputError(store, "the results store holds no run yet");
    if (run_id == 0) run_id = runs.front().run_id;
    if (std::none_of(runs.begin(), runs.end(), [&](const RunInfo& x) { return x.run_id == run_id; })) {
        std::string ids;
        for (const RunInfo& x : runs) ids += (ids.empty() ? "" : ", ") + std::to_string(x.run_id);
        throw InputError(store, "no run " + std::to_string(run_id) + " in this store (runs: " + ids + ")");
    }
    Report r;
    r.table = read_results(store, run_id);
    int base = -1;
    if (!baseline.empty()) {
        std::string ids;
        for (size_t i = 0; i < r.table.rows.size(); ++i) {
            if (r.table.rows[i].experiment == baseline) base = int(i);
            ids += (ids.empty() ? "" : ", ") + r.table.rows[i].experiment;
        }
        if (base < 0) throw InputError("--baseline", "run " + std::to_string(run_id) + " has no experiment \"" + baseline + "\" (it has " + ids + ")");
    }
    compose_report(r, base);
    ReadOnlyStore db(store);
    read_reproducibility(db.db, store, run_id, r.repro);
    read_disk_cost(db.db, store, run_id, r);
    if (!r.repro.scenario_json.empty()) {
        const nlohmann::json doc = nlohmann::json::parse(r.repro.scenario_json, nullptr, false);
        if (!doc.is_discarded()) r.simulated = simulated_facts(doc);
    }
    r.fct_cdf = read_fct_cdf(db.db, store, run_id, r);
    r.queue_tiers = read_queue_tiers(db.db, store, run_id, r);
    r.iteration = iteration_breakdown(r);
    r.skip_share = skip_shares(r);
    return r;
}

namespace {

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// "key value, key value" of the object's scalar fields, in `keys` order where present.
std::string fields_of(const nlohmann::json& o, std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys)
        if (o.is_object() && o.contains(k) && !o[k].is_object() && !o[k].is_array()) s += (s.empty() ? "" : ", ") + std::string(k) + " " + text_of(o[k]);
    return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> simulated_facts(const nlohmann::json& d) {
    std::vector<std::pair<std::string, std::string>> out;
    auto at = [&](std::initializer_list<const char*> path) -> const nlohmann::json& {
        static const nlohmann::json none;
        const nlohmann::json* v = &d;
        for (const char* k : path) {
            if (!v->is_object() || !v->contains(k)) return none;
            v = &(*v)[k];
        }
        return *v;
    };
    const nlohmann::json& t = at({"topology"});
    if (t.is_object()) {
        std::string fabric;
        if (t.contains("generator"))
            fabric = text_of(t["generator"]) + ": " +
                     fields_of(t, {"k", "gpus", "gpus_per_server", "tiers", "leaves", "spines", "hosts_per_leaf", "oversubscription", "pods", "tors_per_pod",
                                   "aggs_per_pod", "hosts_per_tor", "cores", "hosts"});
        else if (t.contains("nodes"))
            fabric = "drawn by hand: " + std::to_string(t["nodes"].size()) + " nodes, " + std::to_string(t.contains("links") ? t["links"].size() : 0) + " links";
        else if (t.contains("import"))
            fabric = "imported from " + text_of(t["import"]);
        else if (t.contains("preset"))
            fabric = "preset " + text_of(t["preset"]);
        if (!fabric.empty()) out.push_back({"fabric", fabric});
        std::string rates;
        if (t.contains("link_defaults") && t["link_defaults"].is_object())
            for (const auto& [tier, spec] : t["link_defaults"].items())
                if (spec.is_object() && spec.contains("rate")) rates += (rates.empty() ? "" : ", ") + tier + " " + text_of(spec["rate"]);
        if (!rates.empty()) out.push_back({"link rates", rates});
    }
    const nlohmann::json& w = at({"workload"});
    if (w.is_object() && w.value("kind", "") == "llm") {
        std::string job;
        if (w.contains("import") && w["import"].is_object()) job = text_of(w["import"].value("format", nlohmann::json("?"))) + " workload " + text_of(w["import"].value("path", nlohmann::json("")));
        else if (w.contains("model") && w["model"].is_object()) {
            const nlohmann::json& m = w["model"];
            const std::string name = m.contains("preset") ? text_of(m["preset"]) : m.contains("name") ? text_of(m["name"]) : "model";
            const std::string shape = fields_of(m, {"layers", "hidden", "heads", "ffn", "seq", "experts", "top_k"});
            job = name + (shape.empty() ? "" : " (" + shape + ")");
        }
        if (w.contains("gpu")) job += " on " + text_of(w["gpu"]);
        out.push_back({"training job", job});
        if (w.contains("parallel") && w["parallel"].is_object())
            out.push_back({"parallelism", fields_of(w["parallel"], {"tp", "pp", "dp", "ep", "sp", "zero", "micro_batches", "micro_batch_size", "schedule", "virtual_stages"})});
        const nlohmann::json& c = w.contains("collectives") ? w["collectives"] : nlohmann::json();
        if (c.is_object() && c.value("model", "") == "busbw") out.push_back({"network mode", "SimAI's busbw formula (no network)"});
        else out.push_back({"network mode", w.contains("network_mode") ? text_of(w["network_mode"]) : std::string("packet")});
        if (c.is_object()) {
            const std::string coll = fields_of(c, {"algorithm", "channels", "pxn"});
            if (!coll.empty()) out.push_back({"collectives", coll});
        }
    } else if (w.is_object()) {
        out.push_back({"workload", w.contains("flows") && w["flows"].is_array() ? std::to_string(w["flows"].size()) + " flows"
                                                                                   : "flows from " + text_of(w.value("file", nlohmann::json("a file")))});
    }
    const nlohmann::json& net = at({"network"});
    if (net.is_object() && net.contains("preset")) out.push_back({"network", "preset " + text_of(net["preset"])});
    const nlohmann::json& cc = at({"cc"});
    if (cc.is_object() && (cc.contains("algorithm") || cc.contains("preset")))
        out.push_back({"congestion control", cc.contains("preset") ? "preset " + text_of(cc["preset"]) : text_of(cc["algorithm"])});
    const nlohmann::json& sw = at({"sweep"});
    if (sw.is_object() && sw.contains("parameters") && sw["parameters"].is_array()) {
        std::string paths;
        for (const nlohmann::json& p : sw["parameters"]) paths += (paths.empty() ? "" : ", ") + text_of(p.value("path", nlohmann::json("?")));
        out.push_back({"swept", paths + " (the experiments differ in these; above, the scenario's own values)"});
    }
    return out;
}

}  // namespace orrery::report
