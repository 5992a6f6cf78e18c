#pragma once
// Reads a run's telemetry from the project's store while the engine writes it, on its own thread, so the
// GUI never waits on the disk: every 250 ms it fetches the rows added since the last poll (rowid order) and
// hands them over as a chunk per experiment. Read-only: the store is the engine's (WAL lets both work).
#include <map>
#include <memory>
#include <set>

#include <QObject>
#include <QString>
#include <QThread>

#include "telemetry/store_tail.h"
#include "views/run/telemetry_data.h"

namespace orrery::views {

using TelemetryChunk = std::map<std::string, ExperimentTelemetry>;

// One poll's worth of reading, usable without a thread (tests, loading a finished run).
class TelemetryReader {
public:
    TelemetryReader(const QString& store, int64_t run_id);
    ~TelemetryReader();
    // Rows added since the previous call. `ports`: switch nodes whose per-port queues are wanted.
    TelemetryChunk poll(const std::set<int>& port_nodes);
    bool ok() const { return tail_ != nullptr; }

private:
    std::unique_ptr<StoreTail> tail_;
    std::set<int> known_port_nodes_;
};

class TelemetryFeed : public QObject {
    Q_OBJECT
public:
    TelemetryFeed(QObject* parent = nullptr);
    ~TelemetryFeed() override;
    void watch(const QString& store, int64_t run_id);  // starts polling (replaces a previous watch)
    void set_port_nodes(std::set<int> nodes);
    void stop();

signals:
    void chunk(std::shared_ptr<const TelemetryChunk> data);

private:
    QThread thread_;
    QObject* worker_ = nullptr;
};

}  // namespace orrery::views
