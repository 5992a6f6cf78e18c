#include "views/telemetry_feed.h"

#include <functional>
#include <mutex>
#include <stdexcept>

#include <QTimer>
#include <sqlite3.h>

#include "telemetry/packed_samples.h"
#include "telemetry/sqlite_query.h"

namespace orrery::views {

TelemetryReader::TelemetryReader(const QString& store, int64_t run_id) : run_(run_id) {
    if (sqlite3_open_v2(store.toStdString().c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(db_);
        db_ = nullptr;
        return;
    }
    sqlite3_busy_timeout(db_, 200);
}

TelemetryReader::~TelemetryReader() { sqlite3_close(db_); }

TelemetryChunk TelemetryReader::poll(const std::set<int>& port_nodes) {
    TelemetryChunk out;
    if (!db_) return out;
    // Every query selects the rows of this run past the table's last rowid seen; column 0 is the rowid
    // (or, grouped, the group's largest), column 1 the experiment.
    auto each_new_row = [&](const char* table, const char* sql, const std::function<void(const SqlQuery&, ExperimentTelemetry&)>& row) {
        SqlQuery q(db_, sql);
        if (!q.ok()) return;  // a store written before that table existed
        int64_t& since = last_rowid_[table];
        q.bind(1, run_).bind(2, since);
        int64_t last = since;
        while (q.next()) {
            last = std::max<int64_t>(last, q.integer(0));
            row(q, out[q.text(1)]);
        }
        since = last;
    };
    auto seconds = [](const SqlQuery& q, int i) { return q.integer(i) * 1e-12; };
    each_new_row("queue_tiers", "SELECT rowid, experiment, time_ps, tier, max_bytes, p99_bytes, median_bytes FROM queue_tiers WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q, ExperimentTelemetry& e) {
                     const int tier = int(q.integer(3));
                     if (tier < 1 || tier > 3) return;
                     const double t = seconds(q, 2);
                     e.tier_max[size_t(tier - 1)].add(t, double(q.integer(4)));
                     e.tier_p99[size_t(tier - 1)].add(t, double(q.integer(5)));
                     e.tier_median[size_t(tier - 1)].add(t, double(q.integer(6)));
                 });
    if (port_nodes != known_port_nodes_) {  // newly picked switches: their history from the start
        last_rowid_["queue_samples"] = 0;
        last_rowid_["queue_sample_sets"] = 0;
        known_port_nodes_ = port_nodes;
    }
    // Schema 1 stores (runs opened from an older project) hold a row per port and per flow; schema 2 one
    // packed set per sample time, whose rate total and flow count are columns of their own.
    if (!port_nodes.empty()) {
        each_new_row("queue_samples", "SELECT rowid, experiment, time_ps, node, ifindex, bytes FROM queue_samples WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                     [&](const SqlQuery& q, ExperimentTelemetry& e) {
                         const int node = int(q.integer(3));
                         if (port_nodes.count(node)) e.ports[{node, int(q.integer(4))}].add(seconds(q, 2), double(q.integer(5)));
                     });
        each_new_row("queue_sample_sets", "SELECT rowid, experiment, time_ps, packed FROM queue_sample_sets WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                     [&](const SqlQuery& q, ExperimentTelemetry& e) {
                         std::vector<QueueSample> ports;
                         try {
                             ports = unpack_queue_samples(q.blob(3));
                         } catch (const std::runtime_error&) {
                             return;  // a damaged set draws nothing; `orrery-cli report` names the damage
                         }
                         for (const QueueSample& p : ports)
                             if (port_nodes.count(int(p.node))) e.ports[{int(p.node), int(p.ifindex)}].add(seconds(q, 2), double(p.bytes));
                     });
    }
    each_new_row("flow_rates", "SELECT max(rowid), experiment, time_ps, sum(rate_bps), count(*) FROM flow_rates WHERE run_id = ? AND rowid > ? "
                               "GROUP BY experiment, time_ps ORDER BY experiment, time_ps",
                 [&](const SqlQuery& q, ExperimentTelemetry& e) {
                     e.total_rate.add(seconds(q, 2), q.real(3));
                     e.active_flows.add(seconds(q, 2), q.real(4));
                 });
    each_new_row("flow_rate_sets", "SELECT rowid, experiment, time_ps, total_bps, flows FROM flow_rate_sets WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q, ExperimentTelemetry& e) {
                     e.total_rate.add(seconds(q, 2), q.real(3));
                     e.active_flows.add(seconds(q, 2), q.real(4));
                 });
    each_new_row("timeline", "SELECT rowid, experiment, rank, stream, task, kind, start_ps, end_ps, bytes, peers, iteration FROM timeline WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q, ExperimentTelemetry& e) {
                     e.spans.push_back({int(q.integer(2)), q.text(3), q.text(4), q.text(5), q.text(9), seconds(q, 6), seconds(q, 7),
                                        q.integer(8), int(q.integer(10))});
                 });
    each_new_row("skips", "SELECT rowid, experiment, flows, start_ps, end_ps, from_memo FROM skips WHERE run_id = ? AND rowid > ? ORDER BY rowid",
                 [&](const SqlQuery& q, ExperimentTelemetry& e) {
                     e.skips.push_back({seconds(q, 3), seconds(q, 4), int(q.integer(2)), int(q.integer(5)) != 0});
                 });
    SqlQuery q(db_, "SELECT experiment, status FROM experiments WHERE run_id = ?");
    q.bind(1, run_);
    while (q.next()) out[q.text(0)].status = q.text(1);
    return out;
}

// ---- TelemetryFeed ------------------------------------------------------------------------------------
namespace {

class FeedWorker : public QObject {
public:
    FeedWorker(TelemetryFeed* feed) : feed_(feed), timer_(this) {
        QObject::connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
    }
    void watch(const QString& store, int64_t run) {
        reader_ = std::make_unique<TelemetryReader>(store, run);
        timer_.start(250);
        tick();
    }
    void stop() {
        timer_.stop();
        if (reader_) tick();  // the last rows the engine wrote before it ended
        reader_.reset();
    }
    void set_nodes(std::set<int> nodes) {
        std::lock_guard<std::mutex> g(lock_);
        nodes_ = std::move(nodes);
    }

private:
    void tick() {
        if (!reader_) return;
        std::set<int> nodes;
        {
            std::lock_guard<std::mutex> g(lock_);
            nodes = nodes_;
        }
        auto data = std::make_shared<TelemetryChunk>(reader_->poll(nodes));
        if (!data->empty()) emit feed_->chunk(data);
    }
    TelemetryFeed* feed_;
    QTimer timer_;
    std::unique_ptr<TelemetryReader> reader_;
    std::mutex lock_;
    std::set<int> nodes_;
};

}  // namespace

TelemetryFeed::TelemetryFeed(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const TelemetryChunk>>("std::shared_ptr<const TelemetryChunk>");
    worker_ = new FeedWorker(this);
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.start();
}

TelemetryFeed::~TelemetryFeed() {
    thread_.quit();
    thread_.wait();
}

void TelemetryFeed::watch(const QString& store, int64_t run_id) {
    auto* w = static_cast<FeedWorker*>(worker_);
    QMetaObject::invokeMethod(worker_, [w, store, run_id] { w->watch(store, run_id); });
}

void TelemetryFeed::set_port_nodes(std::set<int> nodes) { static_cast<FeedWorker*>(worker_)->set_nodes(std::move(nodes)); }

void TelemetryFeed::stop() {
    auto* w = static_cast<FeedWorker*>(worker_);
    QMetaObject::invokeMethod(worker_, [w] { w->stop(); });
}

}  // namespace orrery::views
