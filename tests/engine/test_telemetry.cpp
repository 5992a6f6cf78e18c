// engine/telemetry: the results store holds what a run measured, keeps earlier runs, refuses foreign
// databases; samples and cancellation through the runner's hooks.
#include <QtTest>

#include <fstream>

#include <sqlite3.h>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/hpcc_job.h"
#include "telemetry/results_store.h"
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
