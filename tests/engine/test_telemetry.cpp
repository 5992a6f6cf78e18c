// engine/telemetry: the results store holds what a run measured, keeps earlier runs, refuses foreign
// databases; samples and cancellation through the runner's hooks.
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <map>
#include <tuple>

#include <sqlite3.h>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/hpcc_job.h"
#include "telemetry/packed_samples.h"
#include "telemetry/results_store.h"
#include "telemetry/store_reader.h"
#include "telemetry/samples.h"

using namespace orrery;

namespace {
const std::filesystem::path kRef = std::filesystem::path(ORRERY_TEST_DIR) / "reference/ns3-hpcc";

int64_t query(const std::filesystem::path& db_file, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open(db_file.string().c_str(), &db);
    sqlite3_stmt* s = nullptr;
    int64_t value = -1;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) value = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return value;
}
}  // namespace

class TestTelemetry : public QObject {
    Q_OBJECT
private slots:
    void store_keeps_runs_flows_and_samples() {
        QTemporaryDir dir;
        const std::filesystem::path file = dir.filePath("results.sqlite").toStdString();
        Diagnostics w;
        auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), w);
        for (int run = 1; run <= 2; ++run) {
            ResultsStore store(file);
            store.begin_run(RunRecord{"incast", "config_incast_dcqcn.txt", "abc", "cpu", "test", 1, 1, ""}, {{"e0000", 0, 1, "abc", nlohmann::json::array()}});
            Batch batch = compile_batch({job->input});
            int samples = 0;
            RunOptions options;
            options.on_sample = [&](uint32_t e, int64_t t) {
                SampleSet s = take_samples(batch, e, true, true);
                ++samples;
                store.samples("e0000", t, std::move(s.queues), std::move(s.tiers), std::move(s.rates));
            };
            batch.params[0].sample_interval = 10'000'000;  // 10 us
            options.on_experiment_done = [&](uint32_t, const ExperimentResult& r) {
                std::vector<FlowRow> rows;
                for (const FlowResult& f : r.flows)
                    rows.push_back({f.flow, 0, 0, 0, 0, 3, batch.flow[f.flow].size, batch.flow[f.flow].start, f.finish, 1});
                store.experiment_finished(r.id, "finished", "", r.end_time, r.events, r.packet_hops, 0.1, rows, {}, {{"fct_mean", 1.0, "us"}});
            };
            const auto results = run_cpu(batch, options);
            store.end_run("finished", 0.2);
            QVERIFY(samples > 100);  // the incast lasts about 1.4 ms: one sample every 10 us
            QCOMPARE(query(file, "SELECT count(*) FROM runs"), int64_t(run));
            QCOMPARE(query(file, "SELECT count(*) FROM flows WHERE run_id = " + std::to_string(run)), int64_t(15));
            QCOMPARE(query(file, "SELECT count(DISTINCT time_ps) FROM queue_tiers WHERE run_id = " + std::to_string(run)), int64_t(samples));
            // The deepest queue of tier 1 (ToRs) is the incast's bottleneck and reaches megabytes.
            QVERIFY(query(file, "SELECT max(max_bytes) FROM queue_tiers WHERE tier = 1 AND run_id = " + std::to_string(run)) > 1'000'000);
            QCOMPARE(query(file, "SELECT max(finish_ps) FROM flows WHERE run_id = " + std::to_string(run)), results[0].end_time);
        }
        QCOMPARE(query(file, "SELECT count(*) FROM runs WHERE status = 'finished'"), int64_t(2));
    }
    void samples_are_packed_and_read_back_whole() {
        // Round trip, in id order whatever order they came in, the extremes included.
        const std::vector<QueueSample> ports = {{7, 3, 1}, {0, 0, 0}, {UINT32_MAX, UINT32_MAX, UINT64_MAX}, {7, 1, 4'000'000}, {1'000'000, 2, 123}};
        const std::vector<QueueSample> back = unpack_queue_samples(pack_queue_samples(ports));
        QCOMPARE(back.size(), ports.size());
        for (size_t i = 1; i < back.size(); ++i) QVERIFY(std::tie(back[i - 1].node, back[i - 1].ifindex) < std::tie(back[i].node, back[i].ifindex));
        for (const QueueSample& p : ports)
            QVERIFY(std::any_of(back.begin(), back.end(), [&](const QueueSample& b) { return b.node == p.node && b.ifindex == p.ifindex && b.bytes == p.bytes; }));
        const std::vector<RateSample> rates = {{5, 400'000'000'000}, {0, 1}, {UINT32_MAX, UINT64_MAX}};
        const std::vector<RateSample> rates_back = unpack_rate_samples(pack_rate_samples(rates));
        QCOMPARE(rates_back.size(), size_t(3));
        QVERIFY(rates_back[0].flow == 0 && rates_back[0].rate_bps == 1 && rates_back[1].flow == 5 && rates_back[1].rate_bps == 400'000'000'000 &&
                rates_back[2].flow == UINT32_MAX && rates_back[2].rate_bps == UINT64_MAX);
        QVERIFY(unpack_queue_samples("").empty());
        // What is not a packed set is refused, never read as fewer entries.
        std::string cut = pack_queue_samples(ports);
        cut.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, unpack_queue_samples(cut));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, unpack_rate_samples(std::string(10, char(0xff)) + char(1)));
        std::string beyond;
        for (uint64_t v : {uint64_t(UINT32_MAX), uint64_t(5), uint64_t(1), uint64_t(1)})  // flow UINT32_MAX, then one more
            for (uint64_t x = v;; x >>= 7) {
                beyond.push_back(char((x & 0x7f) | (x >= 0x80 ? 0x80 : 0)));
                if (x < 0x80) break;
            }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, unpack_rate_samples(beyond));

        // In a store: one set per sample time holding exactly the ports and flows taken, a few bytes each.
        QTemporaryDir dir;
        const std::filesystem::path file = dir.filePath("packed.sqlite").toStdString();
        Diagnostics w;
        auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), w);
        std::map<int64_t, std::vector<QueueSample>> taken;
        uint64_t port_samples = 0, rate_samples = 0, rate_total = 0;
        {
            ResultsStore store(file);
            store.begin_run(RunRecord{"incast", "config_incast_dcqcn.txt", "abc", "cpu", "test", 1, 1, ""}, {{"e0000", 0, 1, "abc", nlohmann::json::array()}});
            Batch batch = compile_batch({job->input});
            batch.params[0].sample_interval = 10'000'000;
            RunOptions options;
            options.on_sample = [&](uint32_t e, int64_t t) {
                SampleSet s = take_samples(batch, e, true, true);
                if (!s.queues.empty()) taken[t] = s.queues;
                port_samples += s.queues.size();
                rate_samples += s.rates.size();
                for (const RateSample& r : s.rates) rate_total += r.rate_bps;
                store.samples("e0000", t, std::move(s.queues), std::move(s.tiers), std::move(s.rates));
            };
            run_cpu(batch, options);
            store.end_run("finished", 0.1);
        }
        qInfo("%llu port samples, %llu flow rate samples", (unsigned long long)port_samples, (unsigned long long)rate_samples);
        QVERIFY(port_samples > 100 && rate_samples > 1000);
        QCOMPARE(query(file, "SELECT sum(ports) FROM queue_sample_sets"), int64_t(port_samples));
        QCOMPARE(query(file, "SELECT count(*) FROM queue_sample_sets"), int64_t(taken.size()));
        QCOMPARE(query(file, "SELECT sum(flows) FROM flow_rate_sets"), int64_t(rate_samples));
        QCOMPARE(query(file, "SELECT sum(total_bps) FROM flow_rate_sets"), int64_t(rate_total));
        const double bytes_per_port = double(query(file, "SELECT sum(length(packed)) FROM queue_sample_sets")) / double(port_samples);
        const double bytes_per_flow = double(query(file, "SELECT sum(length(packed)) FROM flow_rate_sets")) / double(rate_samples);
        qInfo("packed: %.2f B per port sample, %.2f B per flow rate sample", bytes_per_port, bytes_per_flow);
        QVERIFY(bytes_per_port < 8 && bytes_per_flow < 8);
        std::map<int64_t, std::vector<QueueSample>> read;
        StoreReader(file).each_queue_sample(1, "e0000", [&](int64_t t, const QueueSample& p) { read[t].push_back(p); });
        QCOMPARE(read.size(), taken.size());
        for (auto& [t, list] : taken) {
            std::sort(list.begin(), list.end(), [](const QueueSample& a, const QueueSample& b) { return std::tie(a.node, a.ifindex) < std::tie(b.node, b.ifindex); });
            const std::vector<QueueSample>& r = read[t];
            QVERIFY(std::equal(list.begin(), list.end(), r.begin(), r.end(),
                               [](const QueueSample& a, const QueueSample& b) { return a.node == b.node && a.ifindex == b.ifindex && a.bytes == b.bytes; }));
        }

        // A schema 1 store (a row per port, no packed sets) is read as it is, and gains the sets and version 2
        // when it is next written to.
        const std::filesystem::path old = dir.filePath("old.sqlite").toStdString();
        std::filesystem::copy_file(file, old);
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(old.string().c_str(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "INSERT INTO queue_samples SELECT 1, 'e0000', time_ps, 9999, 1, 5 FROM queue_tiers WHERE tier = 1; "
                                  "DROP TABLE queue_sample_sets; DROP TABLE flow_rate_sets; UPDATE orrery_store SET value = '1' WHERE key = 'schema_version'; "
                                  "PRAGMA wal_checkpoint(TRUNCATE);",
                              nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        const std::vector<PortSeries> legacy = StoreReader(old).busiest_ports(1, "e0000", 1);
        QCOMPARE(legacy.size(), size_t(1));
        QVERIFY(legacy[0].node == 9999 && legacy[0].max_bytes == 5);
        { ResultsStore reopened(old); }
        QCOMPARE(query(old, "SELECT value FROM orrery_store WHERE key = 'schema_version'"), int64_t(ResultsStore::schema_version()));
        QCOMPARE(query(old, "SELECT count(*) FROM sqlite_master WHERE name IN ('queue_sample_sets', 'flow_rate_sets')"), int64_t(2));
    }
    void store_refuses_a_foreign_database() {
        QTemporaryDir dir;
        const std::string file = dir.filePath("other.sqlite").toStdString();
        sqlite3* db = nullptr;
        sqlite3_open(file.c_str(), &db);
        sqlite3_exec(db, "CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('kept');", nullptr, nullptr, nullptr);
        sqlite3_close(db);
        QVERIFY_THROWS_EXCEPTION(InputError, ResultsStore store(file));
        QCOMPARE(query(file, "SELECT count(*) FROM customers"), int64_t(1));
        QCOMPARE(query(file, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), int64_t(0));
        // A file that is no database at all: an input error naming it, and its bytes untouched.
        const std::string notes = dir.filePath("notes.txt").toStdString();
        const std::string text = "my notes, not a database\n";
        std::ofstream(notes) << text;
        try {
            ResultsStore store(notes);
            QFAIL("a text file was accepted as a results store");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("notes.txt") != std::string::npos, e.what());
        }
        std::ifstream back(notes);
        QCOMPARE(std::string(std::istreambuf_iterator<char>(back), {}), text);
    }
    void cancel_stops_every_experiment_and_keeps_finished_flows() {
        Diagnostics w;
        auto ring = load_hpcc_job(kRef / "config_ring_hpcc.txt", kRef, PresetLibrary(), w);
        Batch batch = compile_batch({ring->input, ring->input});
        std::atomic<bool> cancel{false};
        RunOptions options;
        options.threads = 1;
        options.cancel = &cancel;
        options.on_sample = [&](uint32_t, int64_t t) {
            if (t >= 2'000'500'000'000) cancel = true;  // half a millisecond into the ring
        };
        batch.params[0].sample_interval = batch.params[1].sample_interval = 100'000'000;
        const auto results = run_cpu(batch, options);
        for (const ExperimentResult& r : results) {
            QVERIFY(r.cancelled);
            for (const FlowResult& f : r.flows) QCOMPARE(f.finish, net::kNever);  // the ring's flows need 0.87 ms
            QVERIFY(r.end_time <= 2'000'600'000'000);
        }
    }
};

QTEST_GUILESS_MAIN(TestTelemetry)
#include "test_telemetry.moc"
