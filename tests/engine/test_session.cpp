// engine/session: the run sessions every front end drives. An LLM sweep over the three network levels runs its
// analytic and flow experiments at once and its packet-level one in the batch after them, and the observer hears
// every experiment under its index in the scenario; a cancelled session stores nothing it did not run.
#include <QtTest>

#include <atomic>
#include <map>

#include "common/quantity.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "session/llm_session.h"
#include "telemetry/store_reader.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

// TP 8 inside each of two servers, DP 2 across them: data-parallel traffic crosses the network.
nlohmann::json three_levels() {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "levels"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}}},
            {"workload",
             {{"kind", "llm"},
              {"model", {{"layers", 2}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
              {"parallel", {{"tp", 8}, {"dp", 2}}}}},
            {"sweep", {{"parameters", {{{"path", "workload.network_mode"}, {"values", {"packet", "analytic", "flow"}}}}}}}};
}

struct Heard {
    std::vector<uint32_t> started, committed, finished;
    std::vector<size_t> counts;
    std::map<uint32_t, nlohmann::json> summaries;
};

SessionObserver listen(Heard& h) {
    SessionObserver o;
    o.started = [&h](uint32_t e) { h.started.push_back(e); };
    o.committed = [&h](uint32_t e, const std::string&, double) { h.committed.push_back(e); };
    o.finished = [&h](uint32_t e, const ExperimentResult&, const nlohmann::json& summary, size_t n, double) {
        h.finished.push_back(e);
        h.counts.push_back(n);
        h.summaries[e] = summary;
    };
    return o;
}

struct Setup {
    LoadedScenario loaded;
    std::vector<Fabric> fabrics;
    std::vector<const Fabric*> pointers;
    explicit Setup(const nlohmann::json& doc) : loaded(load_scenario_document(doc, "levels.json", ".", kPresets, LoadOptions{false})) {
        fabrics.reserve(loaded.scenarios.size());
        for (const Scenario& s : loaded.scenarios) fabrics.push_back(build_fabric(s.topology));
        for (const Fabric& f : fabrics) pointers.push_back(&f);
    }
    void begin(ResultsStore& store) const {
        std::vector<ExperimentRecord> records;
        for (const Experiment& x : loaded.experiments) records.push_back({x.id, x.index, x.seed, x.sha256, x.parameters});
        store.begin_run(RunRecord{}, records);
    }
};

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private slots:
    void llm_sweep_runs_without_packets_first_and_reports_in_scenario_order() {
        QTemporaryDir tmp;
        const Setup setup(three_levels());
        QCOMPARE(setup.loaded.experiments.size(), size_t(3));
        ResultsStore store(tmp.filePath("r.sqlite").toStdString());
        setup.begin(store);
        Heard heard;
        std::atomic<bool> cancel{false};
        const LlmSessionResult r = run_llm_session(setup.loaded, setup.pointers, kPresets, store, SessionBackend{}, listen(heard), cancel);
        QVERIFY(!r.cancelled);
        // Analytic (1) and flow (2) end as they run; the packet-level experiment (0) ends with its batch, last.
        QCOMPARE(heard.finished, (std::vector<uint32_t>{1, 2, 0}));
        QCOMPARE(heard.counts, (std::vector<size_t>{1, 2, 3}));
        QCOMPARE(heard.started, (std::vector<uint32_t>{1, 2, 0}));
        QCOMPARE(heard.committed, (std::vector<uint32_t>{1, 2, 0}));
        const char* modes[] = {"packet", "analytic", "flow"};
        for (uint32_t e = 0; e < 3; ++e) {
            const nlohmann::json& s = r.summaries[e];
            QCOMPARE(s["status"].get<std::string>(), std::string("ok"));
            QCOMPARE(s["network_mode"].get<std::string>(), std::string(modes[e]));
            QCOMPARE(s["id"].get<std::string>(), setup.loaded.experiments[e].id);
            QCOMPARE(heard.summaries[e], s);
            QVERIFY(s["iteration_time_s"].get<double>() > 0);
        }
        // The contention-free bound is no slower than the levels that share links.
        QVERIFY(r.summaries[1]["iteration_time_s"].get<double>() <= r.summaries[2]["iteration_time_s"].get<double>());
        store.flush();
        const StoreReader reader(tmp.filePath("r.sqlite").toStdString());
        for (const Experiment& x : setup.loaded.experiments) {
            QCOMPARE(reader.experiment_status(store.run_id(), x.id), std::string("ok"));
            QVERIFY2(!reader.timeline(store.run_id(), x.id).empty(), x.id.c_str());
        }
    }

    void the_flow_level_takes_the_fabric_as_it_starts() {
        // TP 2 DP 8 on two servers: data-parallel rings cross rails, so through the spines. Every leaf-spine
        // link at a quarter of its rate from the start slows the flow level's iteration; so, less, does the same
        // later in the run, and a failure costs what its routing convergence holds transfers on it.
        nlohmann::json doc = three_levels();
        doc["workload"]["parallel"] = {{"tp", 2}, {"dp", 8}};
        doc["workload"]["network_mode"] = "flow";
        doc.erase("sweep");
        const Fabric f = build_fabric(load_scenario_document(doc, "levels.json", ".", kPresets, LoadOptions{false}).scenarios[0].topology);
        nlohmann::json slow = nlohmann::json::array();
        for (LinkId l = 0; l < f.link_count(); ++l)
            if (f.node_tier[f.link_a[l]] + f.node_tier[f.link_b[l]] == 3 && f.node_kind[f.link_a[l]] == NodeKind::network_switch &&
                f.node_kind[f.link_b[l]] == NodeKind::network_switch)
                slow.push_back({{"at", "0us"}, {"link", l}, {"rate", format_rate(BitsPerSecond(f.link_rate[l].count / 4))}});
        QVERIFY(!slow.empty());
        doc["sweep"] = {{"parameters", {{{"path", "topology.events"}, {"values", {nlohmann::json::array(), slow}}}}}};
        QTemporaryDir tmp;
        const Setup setup(doc);
        ResultsStore store(tmp.filePath("r.sqlite").toStdString());
        setup.begin(store);
        Heard heard;
        std::atomic<bool> cancel{false};
        const LlmSessionResult r = run_llm_session(setup.loaded, setup.pointers, kPresets, store, SessionBackend{}, listen(heard), cancel);
        const double healthy = r.summaries[0]["iteration_time_s"].get<double>(), degraded = r.summaries[1]["iteration_time_s"].get<double>();
        qInfo("flow level, TP2 DP8 on 16 GPUs: %.3f ms healthy, %.3f ms with every leaf-spine link at a quarter rate", healthy * 1e3, degraded * 1e3);
        QVERIFY(degraded > healthy);
        // Spraying at the flow level spreads each transfer over its equal-cost paths, ECMP hashes each onto one:
        // the even spread is never slower on this symmetric fabric.
        nlohmann::json sprayed = doc;
        sprayed.erase("sweep");
        sprayed["sweep"] = {{"parameters", {{{"path", "network.load_balancing"}, {"values", {"ecmp", "spray"}}}}}};
        const Setup both(sprayed);
        ResultsStore store2(tmp.filePath("s.sqlite").toStdString());
        both.begin(store2);
        Heard heard2;
        const LlmSessionResult rs = run_llm_session(both.loaded, both.pointers, kPresets, store2, SessionBackend{}, listen(heard2), cancel);
        const double ecmp_s = rs.summaries[0]["iteration_time_s"].get<double>(), spray_s = rs.summaries[1]["iteration_time_s"].get<double>();
        qInfo("flow level, TP2 DP8: %.3f ms with ECMP, %.3f ms sprayed", ecmp_s * 1e3, spray_s * 1e3);
        QVERIFY(spray_s <= ecmp_s * (1 + 1e-9));
        QVERIFY(spray_s != ecmp_s);
        // Later events at the flow level: capacities change at their times, routes after the convergence. The
        // same slowdown from 1 us costs more than none and no more than from the start; every leaf-spine link of
        // one spine down at 5 us costs more the longer routing takes to move its transfers off them.
        nlohmann::json later = doc;
        later.erase("sweep");
        nlohmann::json slow_later = slow;
        for (auto& ev : slow_later) ev["at"] = "1us";
        const LinkId first = slow[0]["link"].get<LinkId>();
        const NodeId spine = f.node_tier[f.link_a[first]] == 2 ? f.link_a[first] : f.link_b[first];
        nlohmann::json down = nlohmann::json::array();
        for (const auto& ev : slow)
            if (f.link_a[ev["link"].get<LinkId>()] == spine || f.link_b[ev["link"].get<LinkId>()] == spine)
                down.push_back({{"at", "5us"}, {"link", ev["link"]}, {"state", "down"}});
        QVERIFY(down.size() >= 2);
        later["sweep"] = {{"mode", "zip"},
                          {"parameters",
                           {{{"path", "topology.events"}, {"values", {slow_later, down, down}}},
                            {{"path", "network.routing.convergence"}, {"values", {"1ms", "100us", "20ms"}}}}}};
        const Setup during(later);
        ResultsStore store3(tmp.filePath("l.sqlite").toStdString());
        during.begin(store3);
        Heard heard3;
        const LlmSessionResult rl = run_llm_session(during.loaded, during.pointers, kPresets, store3, SessionBackend{}, listen(heard3), cancel);
        const double slowed_later = rl.summaries[0]["iteration_time_s"].get<double>(), quick = rl.summaries[1]["iteration_time_s"].get<double>(),
                     slow_converging = rl.summaries[2]["iteration_time_s"].get<double>();
        qInfo("flow level, TP2 DP8: %.3f ms with every leaf-spine link at a quarter rate from 1 us; %zu links down at 5 us: %.3f ms converging in 100 us, "
              "%.3f ms in 20 ms", slowed_later * 1e3, down.size(), quick * 1e3, slow_converging * 1e3);
        QVERIFY(slowed_later > healthy && slowed_later <= degraded * (1 + 1e-9));
        QVERIFY(slow_converging > quick);
        QVERIFY(slow_converging > 0.020);  // a transfer on the failed links waits out the convergence
        // The analytic level times each transfer alone on the fabric as it starts: later events are refused there.
        nlohmann::json analytic = doc;
        analytic.erase("sweep");
        analytic["workload"]["network_mode"] = "analytic";
        analytic["topology"]["events"] = down;
        try {
            load_scenario_document(analytic, "levels.json", ".", kPresets);
            QFAIL("the analytic level accepted a failure during the run");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("topology.events[0].at") != std::string::npos, e.what());
        }
    }

    void a_cancelled_llm_session_runs_nothing_and_ends_its_run_cancelled() {
        QTemporaryDir tmp;
        const Setup setup(three_levels());
        ResultsStore store(tmp.filePath("r.sqlite").toStdString());
        setup.begin(store);
        Heard heard;
        std::atomic<bool> cancel{true};
        const LlmSessionResult r = run_llm_session(setup.loaded, setup.pointers, kPresets, store, SessionBackend{}, listen(heard), cancel);
        QVERIFY(r.cancelled);
        QVERIFY(heard.started.empty() && heard.finished.empty());
        for (const nlohmann::json& s : r.summaries) QVERIFY(s.is_null());
        store.flush();
        const StoreReader reader(tmp.filePath("r.sqlite").toStdString());
        for (const Experiment& x : setup.loaded.experiments) QCOMPARE(reader.experiment_status(store.run_id(), x.id), std::string("cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
