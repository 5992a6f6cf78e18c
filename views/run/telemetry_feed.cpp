#include "views/run/telemetry_feed.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <stdexcept>

#include <QTimer>

#include "common/diagnostics.h"

namespace orrery::views {

TelemetryReader::TelemetryReader(const QString& store, int64_t run_id) {
    try {
        tail_ = std::make_unique<StoreTail>(store.toStdString(), run_id);
    } catch (const InputError&) {
        tail_.reset();  // not (yet) a store: ok() says so, and polls give nothing
    }
}

TelemetryReader::~TelemetryReader() = default;

TelemetryChunk TelemetryReader::poll(const std::set<int>& port_nodes) {
    TelemetryChunk out;
    if (!tail_) return out;
    auto seconds = [](int64_t ps) { return double(ps) * 1e-12; };
    for (const TierSampleRow& r : tail_->new_tier_samples()) {
        ExperimentTelemetry& e = out[r.experiment];
        if (r.tier < 1 || r.tier > 3) continue;
        const double t = seconds(r.time_ps);
        e.tier_max[size_t(r.tier - 1)].add(t, double(r.max_bytes));
        e.tier_p99[size_t(r.tier - 1)].add(t, double(r.p99_bytes));
        e.tier_median[size_t(r.tier - 1)].add(t, double(r.median_bytes));
    }
    const bool picked_anew = port_nodes != known_port_nodes_;  // newly picked switches: their history from the start
    known_port_nodes_ = port_nodes;
    for (const PortSampleRow& r : tail_->new_port_samples(port_nodes, picked_anew))
        out[r.experiment].ports[{int(r.node), int(r.ifindex)}].add(seconds(r.time_ps), double(r.bytes));
    for (const UplinkSampleRow& r : tail_->new_uplink_samples()) {
        if (r.tier < 1 || r.tier > 3 || r.permille.empty()) continue;
        ExperimentTelemetry& e = out[r.experiment];
        const double t = seconds(r.time_ps);
        const size_t i = size_t(r.tier - 1);
        double busiest = 0, sum = 0;
        std::vector<float> now;
        for (uint16_t p : r.permille) now.push_back(float(p) / 1000.0f), busiest = std::max(busiest, p / 1000.0), sum += p / 1000.0;
        e.uplink_busiest[i].add(t, busiest);
        e.uplink_mean[i].add(t, sum / double(r.permille.size()));
        if (t >= e.uplinks_at) {
            if (t > e.uplinks_at)
                for (auto& tier : e.uplinks_now) tier.clear();  // a later sample: every tier's bars from it
            e.uplinks_now[i] = std::move(now);
            e.uplinks_at = t;
        }
    }
    for (const CounterRow& r : tail_->new_fabric_counters()) {
        ExperimentTelemetry& e = out[r.experiment];
        const double t = seconds(r.time_ps);
        e.drops.add(t, double(r.counters.drops));
        e.lost_to_failures.add(t, double(r.counters.lost_to_failures));
        e.retransmits.add(t, double(r.counters.retransmits));
        e.timeouts.add(t, double(r.counters.timeouts));
    }
    for (const RateTotalRow& r : tail_->new_rate_totals()) {
        ExperimentTelemetry& e = out[r.experiment];
        e.total_rate.add(seconds(r.time_ps), r.total_bps);
        e.active_flows.add(seconds(r.time_ps), r.flows);
    }
    for (const TimelineTailRow& r : tail_->new_timeline())
        out[r.experiment].spans.push_back({int(r.span.rank), r.span.stream, r.span.task, r.span.kind, r.span.peers, seconds(r.span.start_ps),
                                           seconds(r.span.end_ps), r.span.bytes, r.span.iteration, int(r.span.job)});
    for (const JobNameRow& r : tail_->new_job_names()) {
        std::vector<std::string>& names = out[r.experiment].job_names;
        if (names.size() <= r.job) names.resize(size_t(r.job) + 1);
        names[r.job] = r.name;
    }
    for (const SkipRow& r : tail_->new_skips()) out[r.experiment].skips.push_back({seconds(r.start_ps), seconds(r.end_ps), r.flows, r.from_memo});
    for (const auto& [experiment, status] : tail_->statuses()) out[experiment].status = status;
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
