#include "telemetry/store_tail.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <sqlite3.h>

#include "telemetry/packed_samples.h"
#include "telemetry/sqlite_open.h"
#include "telemetry/sqlite_query.h"

namespace orrery {
namespace {

// Every query selects the rows of the run past the table's last rowid seen; column 0 is the rowid (or, grouped,
// the group's largest), column 1 the experiment.
void each_new_row(sqlite3* db, int64_t run, int64_t& since, const char* sql, const std::function<void(const SqlQuery&)>& row) {
    SqlQuery q(db, sql);
    if (!q.ok()) return;  // a store written before that table existed
    q.bind(1, run).bind(2, since);
    int64_t last = since;
    while (q.next()) {
        last = std::max<int64_t>(last, q.integer(0));
        row(q);
    }
    since = last;
}

}  // namespace

StoreTail::StoreTail(const std::filesystem::path& file, int64_t run_id) : db_(open_store_read_only(file.string(), 200)), run_(run_id) {}

StoreTail::~StoreTail() { sqlite3_close(db_); }

std::vector<TierSampleRow> StoreTail::new_tier_samples() {
    std::vector<TierSampleRow> out;
    each_new_row(db_, run_, last_rowid_["queue_tiers"],
                 "SELECT rowid, experiment, time_ps, tier, max_bytes, p99_bytes, median_bytes FROM queue_tiers WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) { out.push_back({q.text(1), q.integer(2), int(q.integer(3)), q.integer(4), q.integer(5), q.integer(6)}); });
    return out;
}

std::vector<PortSampleRow> StoreTail::new_port_samples(const std::set<int>& nodes, bool from_start) {
    std::vector<PortSampleRow> out;
    if (from_start) last_rowid_["queue_samples"] = last_rowid_["queue_sample_sets"] = 0;
    if (nodes.empty()) return out;
    // Schema 1 stores (runs opened from an older project) hold a row per port; schema 2 one packed set per
    // sample time.
    each_new_row(db_, run_, last_rowid_["queue_samples"],
                 "SELECT rowid, experiment, time_ps, node, ifindex, bytes FROM queue_samples WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) {
                     if (nodes.count(int(q.integer(3))))
                         out.push_back({q.text(1), q.integer(2), uint32_t(q.integer(3)), uint32_t(q.integer(4)), uint64_t(q.integer(5))});
                 });
    each_new_row(db_, run_, last_rowid_["queue_sample_sets"],
                 "SELECT rowid, experiment, time_ps, packed FROM queue_sample_sets WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) {
                     std::vector<QueueSample> ports;
                     try {
                         ports = unpack_queue_samples(q.blob(3));
                     } catch (const std::runtime_error&) {
                         return;  // a damaged set gives nothing; `orrery-cli report` names the damage
                     }
                     for (const QueueSample& p : ports)
                         if (nodes.count(int(p.node))) out.push_back({q.text(1), q.integer(2), p.node, p.ifindex, p.bytes});
                 });
    return out;
}

std::vector<UplinkSampleRow> StoreTail::new_uplink_samples() {
    std::vector<UplinkSampleRow> out;
    each_new_row(db_, run_, last_rowid_["uplink_tiers"], "SELECT rowid, experiment, time_ps, tier, packed FROM uplink_tiers WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) {
                     UplinkSampleRow r{q.text(1), q.integer(2), int(q.integer(3)), {}};
                     std::vector<RateSample> entries;
                     try {
                         entries = unpack_rate_samples(q.blob(4));
                     } catch (const std::runtime_error&) {
                         return;  // a damaged set gives nothing
                     }
                     for (const RateSample& s : entries) {
                         if (r.permille.size() <= s.flow) r.permille.resize(s.flow + 1, 0);
                         r.permille[s.flow] = uint16_t(std::min<uint64_t>(s.rate_bps, 1000));
                     }
                     out.push_back(std::move(r));
                 });
    return out;
}

std::vector<CounterRow> StoreTail::new_fabric_counters() {
    std::vector<CounterRow> out;
    each_new_row(db_, run_, last_rowid_["fabric_counters"],
                 "SELECT rowid, experiment, time_ps, drops, lost_to_failures, retransmits, timeouts FROM fabric_counters WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) {
                     out.push_back({q.text(1), q.integer(2), {uint64_t(q.integer(3)), uint64_t(q.integer(4)), uint64_t(q.integer(5)), uint64_t(q.integer(6))}});
                 });
    return out;
}

std::vector<RateTotalRow> StoreTail::new_rate_totals() {
    std::vector<RateTotalRow> out;
    // Schema 1: a row per flow, summed here; schema 2: the total and the flow count are columns of their own.
    each_new_row(db_, run_, last_rowid_["flow_rates"],
                 "SELECT max(rowid), experiment, time_ps, sum(rate_bps), count(*) FROM flow_rates WHERE run_id = ? AND rowid > ? "
                 "GROUP BY experiment, time_ps ORDER BY experiment, time_ps",
                 [&](const SqlQuery& q) { out.push_back({q.text(1), q.integer(2), q.real(3), q.real(4)}); });
    each_new_row(db_, run_, last_rowid_["flow_rate_sets"],
                 "SELECT rowid, experiment, time_ps, total_bps, flows FROM flow_rate_sets WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) { out.push_back({q.text(1), q.integer(2), q.real(3), q.real(4)}); });
    return out;
}

std::vector<TimelineTailRow> StoreTail::new_timeline() {
    std::vector<TimelineTailRow> out;
    each_new_row(db_, run_, last_rowid_["timeline"],
                 "SELECT rowid, experiment, rank, stream, task, kind, start_ps, end_ps, bytes, peers, iteration, job FROM timeline WHERE run_id = ? AND rowid > ? "
                 "ORDER BY rowid",
                 [&](const SqlQuery& q) {
                     out.push_back({q.text(1), TimelineRow{uint32_t(q.integer(2)), int(q.integer(10)), q.text(3), q.text(4), q.text(5), q.integer(6),
                                                           q.integer(7), q.integer(8), q.text(9), uint32_t(q.integer(11))}});
                 });
    return out;
}

std::vector<SkipRow> StoreTail::new_skips() {
    std::vector<SkipRow> out;
    each_new_row(db_, run_, last_rowid_["skips"],
                 "SELECT rowid, experiment, flows, start_ps, end_ps, from_memo FROM skips WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) { out.push_back({q.text(1), q.integer(3), q.integer(4), int(q.integer(2)), q.integer(5) != 0}); });
    return out;
}

std::vector<JobNameRow> StoreTail::new_job_names() {
    std::vector<JobNameRow> out;
    each_new_row(db_, run_, last_rowid_["jobs"], "SELECT rowid, experiment, job, name FROM jobs WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q) { out.push_back({q.text(1), uint32_t(q.integer(2)), q.text(3)}); });
    return out;
}

std::map<std::string, std::string> StoreTail::statuses() const {
    std::map<std::string, std::string> out;
    SqlQuery q(db_, "SELECT experiment, status FROM experiments WHERE run_id = ?");
    q.bind(1, run_);
    while (q.next()) out[q.text(0)] = q.text(1);
    return out;
}

}  // namespace orrery
