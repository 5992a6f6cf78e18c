#include "telemetry/store_reader.h"
#include "telemetry/results_store.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <map>
#include <set>

#include <sqlite3.h>

#include "telemetry/packed_samples.h"
#include "telemetry/sqlite_open.h"
#include "telemetry/sqlite_query.h"

#include "common/diagnostics.h"

namespace orrery {
namespace {

// The store's own tables: a statement that cannot be prepared means the file is not what it claims.
struct Query : SqlQuery {
    Query(sqlite3* db, const char* sql) : SqlQuery(db, sql) {
        if (!ok()) {
            const char* file = sqlite3_db_filename(db, "main");
            throw InputError(file && *file ? file : "results store", "not a complete Orrery results store (" + error() + ")");
        }
    }
};

}  // namespace

StoreReader::StoreReader(const std::filesystem::path& file) : file_(file) {
    if (!std::filesystem::exists(file)) throw InputError(file.string(), "no such results store");
    db_ = open_store_read_only(file.string(), 5000);
}

StoreReader::~StoreReader() {
    if (db_) sqlite3_close(db_);
}

int64_t StoreReader::find_run(const std::string& experiment, int64_t run) const {
    // Without a run number: the newest run in which the experiment came to an end with results (not one still
    // running, interrupted, cancelled before it or failed).
    Query q(db_, run > 0 ? "SELECT run_id FROM experiments WHERE experiment = ? AND run_id = ?"
                         : "SELECT max(run_id) FROM experiments WHERE experiment = ? AND run_id > ? "
                           "AND status NOT IN ('pending', 'running', 'interrupted', 'cancelled', 'failed')");
    q.bind(1, experiment).bind(2, run);
    if (q.next() && !q.is_null(0)) return q.integer(0);
    if (run <= 0) {
        Query unfinished(db_, "SELECT run_id, status FROM experiments WHERE experiment = ? ORDER BY run_id DESC LIMIT 1");
        unfinished.bind(1, experiment);
        if (unfinished.next())
            throw InputError(file_.string(), "experiment \"" + experiment + "\" has no finished run: in run " + std::to_string(unfinished.integer(0)) +
                                                 ", its newest, it is " + unfinished.text(1));
    }
    std::set<std::string> known;
    Query all(db_, run > 0 ? "SELECT experiment FROM experiments WHERE run_id = ?" : "SELECT experiment FROM experiments WHERE run_id > ?");
    all.bind(1, run);
    while (all.next()) known.insert(all.text(0));
    std::string list;
    for (const std::string& e : known) {
        if (list.size() > 200) {
            list += ", …";
            break;
        }
        list += (list.empty() ? "" : ", ") + e;
    }
    const std::string where = run > 0 ? "run " + std::to_string(run) : "any run";
    throw InputError(file_.string(), "experiment \"" + experiment + "\" is not in " + where + (list.empty() ? " (the store is empty)" : "; it has " + list));
}

std::pair<int64_t, std::string> StoreReader::scenario_of(int64_t run) const {
    bool has_column = false;
    {
        Query info(db_, "PRAGMA table_info(runs)");
        while (info.next()) has_column |= info.text(1) == "scenario_json";
    }
    Query q(db_, run > 0 ? "SELECT run_id, scenario_file FROM runs WHERE run_id = ?" : "SELECT run_id, scenario_file FROM runs WHERE run_id > ? ORDER BY run_id DESC LIMIT 1");
    q.bind(1, run);
    if (!q.next()) throw InputError(file_.string(), run > 0 ? "no run " + std::to_string(run) + " in this store" : "the store holds no run yet");
    const int64_t id = q.integer(0);
    const std::string file = q.text(1);
    std::string json;
    if (has_column) {
        Query s(db_, "SELECT coalesce(scenario_json, '') FROM runs WHERE run_id = ?");
        s.bind(1, id);
        if (s.next()) json = s.text(0);
    }
    if (json.empty())
        throw InputError(file_.string(), "run " + std::to_string(id) + " was stored by an Orrery that kept no copy of its scenario: it ran " +
                                              (file.empty() ? std::string("an unnamed scenario") : file));
    return {id, json};
}

bool StoreReader::has_running_run() const {
    Query q(db_, "SELECT count(*) FROM runs WHERE status = 'running'");
    return q.next() && q.integer(0) > 0;
}

std::string StoreReader::experiment_status(int64_t run, const std::string& experiment) const {
    Query q(db_, "SELECT status FROM experiments WHERE run_id = ? AND experiment = ?");
    q.bind(1, run).bind(2, experiment);
    return q.next() ? q.text(0) : "";
}

std::vector<TimelineRow> StoreReader::timeline(int64_t run, const std::string& experiment) const {
    // Spans are written as tasks finish, in batches whose composition follows the run's pace: ordered here by
    // every column (compute before communication at one start), the same whichever way they were batched.
    // Stores written before mixes of jobs have no job column (and no jobs table): every span is job 0's.
    const std::string job = has_table("jobs") ? "job" : "0";
    const std::string sql = "SELECT rank, iteration, stream, task, kind, start_ps, end_ps, bytes, peers, " + job +
                            " FROM timeline WHERE run_id = ? AND experiment = ? "
                            "ORDER BY rank, start_ps, stream <> 'compute', end_ps, stream, task, kind, iteration, bytes, peers";
    Query q(db_, sql.c_str());
    q.bind(1, run).bind(2, experiment);
    std::vector<TimelineRow> rows;
    while (q.next())
        rows.push_back({uint32_t(q.integer(0)), int(q.integer(1)), q.text(2), q.text(3), q.text(4), q.integer(5), q.integer(6), q.integer(7), q.text(8),
                        uint32_t(q.integer(9))});
    return rows;
}

std::vector<JobRow> StoreReader::jobs(int64_t run, const std::string& experiment) const {
    std::vector<JobRow> out;
    if (!has_table("jobs")) return out;
    Query q(db_, "SELECT job, name, first_rank, ranks, hosts, start_ps, iteration_time_s, alone_iteration_time_s, slowdown, first_flow, flows, kind, leaves FROM jobs "
                 "WHERE run_id = ? AND experiment = ? ORDER BY job");
    q.bind(1, run).bind(2, experiment);
    while (q.next())
        out.push_back({uint32_t(q.integer(0)), q.text(1), uint32_t(q.integer(2)), uint32_t(q.integer(3)), q.text(4), q.integer(5), q.real(6), q.real(7),
                       q.real(8), uint32_t(q.integer(9)), uint32_t(q.integer(10)), q.text(11), q.text(12)});
    return out;
}

std::vector<SkippedSpan> StoreReader::skipped_spans(int64_t run, const std::string& experiment) const {
    std::vector<SkippedSpan> out;
    if (!has_table("skips")) return out;  // a store written before skipping existed
    Query q(db_, "SELECT start_ps, end_ps FROM skips WHERE run_id = ? AND experiment = ? ORDER BY start_ps, end_ps");
    q.bind(1, run).bind(2, experiment);
    while (q.next()) {
        const int64_t start = q.integer(0), end = q.integer(1);
        if (!out.empty() && start <= out.back().end_ps) {
            out.back().end_ps = std::max(out.back().end_ps, end);
            ++out.back().skips;
        } else {
            out.push_back({start, end, 1});
        }
    }
    return out;
}

bool StoreReader::has_table(const char* name) const {
    Query t(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
    t.bind(1, std::string(name));
    return t.next() && t.integer(0) > 0;
}

void StoreReader::each_queue_sample(int64_t run, const std::string& experiment,
                                    const std::function<void(int64_t time_ps, const QueueSample&)>& visit) const {
    // Schema 1 wrote a row per port (still read from older stores); schema 2 one packed set per sample time.
    {
        Query q(db_, "SELECT time_ps, node, ifindex, bytes FROM queue_samples WHERE run_id = ? AND experiment = ? ORDER BY time_ps");
        q.bind(1, run).bind(2, experiment);
        while (q.next()) visit(q.integer(0), {uint32_t(q.integer(1)), uint32_t(q.integer(2)), uint64_t(q.integer(3))});
    }
    if (!has_table("queue_sample_sets")) return;
    Query q(db_, "SELECT time_ps, packed FROM queue_sample_sets WHERE run_id = ? AND experiment = ? ORDER BY time_ps");
    q.bind(1, run).bind(2, experiment);
    while (q.next()) {
        std::vector<QueueSample> ports;
        try {
            ports = unpack_queue_samples(q.blob(1));
        } catch (const std::runtime_error& e) {
            throw InputError(file_.string(), std::string("queue_sample_sets of run ") + std::to_string(run) + ", " + experiment + ": " + e.what() +
                                                 ": the store is damaged");
        }
        for (const QueueSample& p : ports) visit(q.integer(0), p);
    }
}

std::vector<PortSeries> StoreReader::busiest_ports(int64_t run, const std::string& experiment, size_t count) const {
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> peaks;
    each_queue_sample(run, experiment, [&](int64_t, const QueueSample& p) {
        uint64_t& peak = peaks[{p.node, p.ifindex}];
        peak = std::max(peak, p.bytes);
    });
    std::vector<PortSeries> ports;
    for (const auto& [port, peak] : peaks) {
        PortSeries p;
        p.node = port.first;
        p.ifindex = port.second;
        p.max_bytes = peak;
        ports.push_back(p);
    }
    // The highest peaks; ties by node, then port.
    std::stable_sort(ports.begin(), ports.end(), [](const PortSeries& a, const PortSeries& b) { return a.max_bytes > b.max_bytes; });
    if (ports.size() > count) ports.resize(count);
    if (ports.empty()) return ports;
    // Samples list non-empty ports only: every sample time of the experiment gives each chosen port a value.
    std::vector<int64_t> times;
    {
        Query q(db_, "SELECT DISTINCT time_ps FROM queue_tiers WHERE run_id = ? AND experiment = ? ORDER BY time_ps");
        q.bind(1, run).bind(2, experiment);
        while (q.next()) times.push_back(q.integer(0));
    }
    std::map<std::pair<uint32_t, uint32_t>, std::map<int64_t, uint64_t>> seen;
    for (const PortSeries& p : ports) seen[{p.node, p.ifindex}];
    each_queue_sample(run, experiment, [&](int64_t time, const QueueSample& p) {
        auto it = seen.find({p.node, p.ifindex});
        if (it != seen.end()) it->second[time] = p.bytes;
    });
    for (PortSeries& p : ports) {
        const std::map<int64_t, uint64_t>& s = seen[{p.node, p.ifindex}];
        if (times.empty())
            for (auto [t, b] : s) times.push_back(t);
        for (int64_t t : times) {
            auto it = s.find(t);
            p.samples.emplace_back(t, it == s.end() ? 0 : it->second);
        }
    }
    return ports;
}

}  // namespace orrery
