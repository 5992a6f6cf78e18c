// engine/runtime/device: the device backend gives the CPU backend's results byte for byte — every reference
// scenario of tests/reference/ns3-hpcc, a 64-experiment sweep, an LLM job with steady-state skipping — and
// does so when its packet storage starts tiny, so that nodes stop within steps for want of blocks and are
// resumed after the pool grows. Run under the build's device system (CI: OpenMP on CPU cores); skipped
// where that system has no device here (the CUDA build on a machine without a GPU).
#include <QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <filesystem>
#include <set>
#include <sstream>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/device/device_runner.h"
#include "runtime/hpcc_job.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "workload/llm_driver.h"
#include "workload/llm_job.h"

using namespace orrery;

namespace {
const std::filesystem::path kRef = std::filesystem::path(ORRERY_TEST_DIR) / "reference/ns3-hpcc";

// Everything a run reports, as text: flows, PFC events, queue snapshots, counters, skips.
std::string fingerprint(const std::vector<ExperimentResult>& results) {
    std::ostringstream s;
    for (const ExperimentResult& r : results) {
        s << r.id << " events " << r.events << " hops " << r.packet_hops << " steps " << r.steps << " end " << r.end_time << " drops " << r.drops
          << " lost " << r.lost << " stalled " << r.stalled << "\n";
        for (const FlowResult& f : r.flows) s << "f " << f.flow << " " << f.finish << "\n";
        for (const net::PfcEvent& p : r.pfc) s << "p " << p.time << " " << p.node << " " << p.ifindex << " " << int(p.node_type) << " " << int(p.pause) << "\n";
        for (const QueueSnapshot& q : r.queues) {
            s << "q " << q.time;
            for (const auto& port : q.ports) {
                s << " " << port.node << "/" << port.ifindex << ":";
                for (uint32_t c : port.counts) s << c << ",";
            }
            s << "\n";
        }
        s << "skips " << r.skipping.skips.size() << " credited " << r.skipping.bytes_credited << " memo " << r.skipping.memo_hits << " finishing "
          << r.skipping.completion_skips << "\n";
    }
    return s.str();
}

bool device_here(QString* why) {
    try {
        Batch empty;
        run_device(empty, RunOptions{});
        return true;
    } catch (const std::exception& e) {
        *why = e.what();
        return false;
    }
}

#define SKIP_WITHOUT_DEVICE()                            \
    do {                                                 \
        QString why;                                     \
        if (!device_here(&why)) QSKIP(qPrintable(why));  \
    } while (0)

DeviceOptions tiny_storage(DeviceReport* report) {
    DeviceOptions d;
    d.initial_blocks = 40;
    d.growth = 1.2;
    d.report = report;
    return d;
}

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

LoadedScenario load(const nlohmann::json& doc) { return load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false}); }

// An LLM job (DP all-reduce over 8 GPUs on one switch) with skipping, on both backends.
void llm_job_with_skipping_run() {
    nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"},
                          {"topology", {{"generator", "single-switch"}, {"hosts", 8}}},
                          {"cc", {{"algorithm", "dcqcn"}}},
                          {"skipping", {{"enabled", true}}},
                          {"workload", {{"kind", "llm"}, {"network_mode", "packet"},
                                        {"model", {{"layers", 4}, {"hidden", 4096}, {"heads", 32}, {"ffn", 16384}, {"seq", 2048}, {"vocab", 1024}}},
                                        {"parallel", {{"tp", 1}, {"dp", 8}, {"micro_batches", 1}}}}}};
    const LoadedScenario sc = load(doc);
    const Scenario& s = sc.scenarios[0];
    const Fabric f = build_fabric(s.topology);
    const WorkloadTables tables = load_workload_tables(kPresets);
    const LlmJob job = prepare_llm_job(*s.workload.llm, f, tables);
    std::vector<std::string> prints;
    std::vector<double> iteration;
    for (int backend = 0; backend < 2; ++backend) {
        Batch batch = compile_batch({{"e0", &s, &f, llm_flows(job, s.workload.llm->collectives.priority)}});
        LlmDriver driver(job, batch, 0, f, tables);
        RunOptions o;
        o.threads = 2;
        o.drive = [&](uint32_t, int64_t now, uint32_t done) { return driver.drive(now, done); };
        const auto results = backend ? run_device(batch, o) : run_cpu(batch, o);
        QVERIFY2(driver.executor().finished(), qPrintable(QString("backend %1: %2 tasks unfinished, stalled %3, end %4 ps, %5 flows").arg(backend).arg(driver.executor().unfinished()).arg(results[0].stalled).arg(results[0].end_time).arg(results[0].flows.size())));
        prints.push_back(fingerprint(results));
        iteration.push_back(summarize_llm(job, driver.executor()).iteration_time_s);
        if (!backend) QVERIFY2(!results[0].skipping.skips.empty(), "the job skips nothing: it tests nothing of the skipper");
        // Skips that finish their flows take packets out of the fabric: on the device their blocks go back to its pool.
        if (!backend) QVERIFY2(results[0].skipping.completion_skips > 0, "no skip finishes its flows: the device's side of it goes untested");
    }
    QCOMPARE(prints[1], prints[0]);
    QCOMPARE(iteration[1], iteration[0]);
}
}  // namespace

class TestDevice : public QObject {
    Q_OBJECT
private slots:
    void reference_scenarios_data() {
        QTest::addColumn<QString>("config");
        for (const auto& entry : std::filesystem::directory_iterator(kRef)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind("config_", 0) == 0) QTest::newRow(name.c_str()) << QString::fromStdString(name);
        }
    }
    void reference_scenarios() {
        SKIP_WITHOUT_DEVICE();
        QFETCH(QString, config);
        Diagnostics warnings;
        const auto job = load_hpcc_job(kRef / config.toStdString(), kRef, PresetLibrary(), warnings);
        RunOptions o;
        o.threads = 2;
        Batch cpu = compile_batch({job->input});
        const std::string expected = fingerprint(run_cpu(cpu, o));
        Batch device = compile_batch({job->input});
        DeviceReport plain;
        DeviceOptions d;
        d.report = &plain;
        QCOMPARE(fingerprint(run_device(device, o, d)), expected);
        // Storage that starts at 40 blocks: nodes stop within steps and resume after the pool grows.
        Batch small = compile_batch({job->input});
        DeviceReport report;
        QCOMPARE(fingerprint(run_device(small, o, tiny_storage(&report))), expected);
        QVERIFY2(report.passes > report.steps, qPrintable(QString("%1 passes over %2 steps").arg(report.passes).arg(report.steps)));
        qInfo("%s: %llu steps; %llu passes with 40 blocks to start, %llu with %llu", qPrintable(config), (unsigned long long)report.steps,
              (unsigned long long)report.passes, (unsigned long long)plain.passes, (unsigned long long)DeviceOptions{}.initial_blocks);
    }

    void sweep_of_64_experiments() {
        SKIP_WITHOUT_DEVICE();
        // 64 ECN threshold pairs on a k = 4 fat-tree ring of 1 MB flows, one batch, every congestion control in turn.
        std::vector<LoadedScenario> loaded;
        std::vector<Fabric> fabrics;
        for (int i = 0; i < 64; ++i) {
            nlohmann::json flows = nlohmann::json::array();
            for (int h = 0; h < 16; ++h) flows.push_back({{"src", h}, {"dst", (h + 5) % 16}, {"size", "1MB"}});
            loaded.push_back(load({{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                                   {"network", {{"ecn", {{"thresholds", {{{"rate", "100Gbps"}, {"kmin", std::to_string(20 + 10 * (i % 8)) + "KB"},
                                                                          {"kmax", std::to_string(100 + 50 * (i / 8)) + "KB"}, {"pmax", 0.2}}}}}}}},
                                   {"cc", {{"algorithm", cc_algorithm_names()[size_t(i) % cc_algorithm_names().size()]}}},  // every CC
                                   {"workload", {{"kind", "flows"}, {"flows", flows}}}}));
        }
        for (const LoadedScenario& l : loaded) fabrics.push_back(build_fabric(l.scenarios[0].topology));
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < loaded.size(); ++i)
            inputs.push_back({"e" + std::to_string(i), &loaded[i].scenarios[0], &fabrics[i], workload_flows(loaded[i].scenarios[0])});
        RunOptions o;
        o.threads = 2;
        Batch cpu = compile_batch(inputs);
        const auto expected = run_cpu(cpu, o);
        Batch device = compile_batch(inputs);
        QCOMPARE(fingerprint(run_device(device, o)), fingerprint(expected));
        // The thresholds matter: the experiments do not all finish alike.
        std::set<int64_t> ends;
        for (const ExperimentResult& r : expected) ends.insert(r.end_time);
        QVERIFY(ends.size() > 8);
    }

    void every_load_balancing_mode() {
        SKIP_WITHOUT_DEVICE();
        // ECMP, spraying, adaptive routing (in order and out of order) and flowlets in one batch on a k = 4 fat-tree permutation with an
        // incast beside it: the per-packet choices (queue readings, flowlet tables) are the CPU's.
        const std::vector<std::string> modes = {"ecmp", "spray", "adaptive", "flowlet", "adaptive"};
        std::vector<LoadedScenario> loaded;
        std::vector<Fabric> fabrics;
        for (size_t m = 0; m < modes.size(); ++m) {
            const std::string& lb = modes[m];
            const std::string delivery = m == 4 ? "out_of_order" : "in_order";
            nlohmann::json flows = nlohmann::json::array();
            for (int h = 0; h < 16; ++h) flows.push_back({{"src", h}, {"dst", (h + 9) % 16}, {"size", "300KB"}, {"start", std::to_string(h * 50) + "ns"}});
            for (int h = 1; h < 16; h += 3) flows.push_back({{"src", h}, {"dst", 0}, {"size", "100KB"}, {"start", "3us"}});
            loaded.push_back(load({{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                                   {"network", {{"load_balancing", lb}, {"nic", {{"delivery", delivery}}}}},
                                   {"workload", {{"kind", "flows"}, {"flows", flows}}}}));
        }
        for (const LoadedScenario& l : loaded) fabrics.push_back(build_fabric(l.scenarios[0].topology));
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < loaded.size(); ++i)
            inputs.push_back({modes[i] + std::to_string(i), &loaded[i].scenarios[0], &fabrics[i], workload_flows(loaded[i].scenarios[0])});
        RunOptions o;
        o.threads = 2;
        Batch cpu = compile_batch(inputs);
        const std::string expected = fingerprint(run_cpu(cpu, o));
        Batch device = compile_batch(inputs);
        QCOMPARE(fingerprint(run_device(device, o)), expected);
        Batch small = compile_batch(inputs);
        DeviceReport report;
        QCOMPARE(fingerprint(run_device(small, o, tiny_storage(&report))), expected);
    }

    void llm_job_with_skipping() {
        SKIP_WITHOUT_DEVICE();
        try {
            llm_job_with_skipping_run();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }
    void cli_backend_device_writes_the_same_files() {
        if (QString(ORRERY_CLI).isEmpty()) QSKIP("this build has no orrery-cli");
        SKIP_WITHOUT_DEVICE();
        const QString ref = QString::fromStdString(kRef.string());
        QTemporaryDir cpu, device;
        for (const QTemporaryDir* dir : {&cpu, &device})
            for (const char* f : {"config_incast_dcqcn.txt", "topology.txt", "flow_incast.txt", "trace.txt"})
                QVERIFY(QFile::copy(ref + "/" + f, dir->filePath(f)));
        auto run = [](const QTemporaryDir& dir, const QStringList& backend) {
            QProcess p;
            p.setWorkingDirectory(dir.path());
            p.start(ORRERY_CLI, QStringList{"run-hpcc", "config_incast_dcqcn.txt", "--threads", "2"} + backend);
            p.waitForFinished(120000);
            return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
        };
        const auto on_cpu = run(cpu, {});
        QCOMPARE(on_cpu.first, 0);
        const auto on_device = run(device, {"--backend", "device"});
        QVERIFY2(on_device.first == 0, qPrintable(on_device.second));
        QVERIFY2(on_device.second.contains("device backend (OpenMP device system, 2 threads)") || on_device.second.contains("device backend (CUDA"),
                 qPrintable(on_device.second));
        for (const char* f : {"fct_incast_dcqcn.txt", "pfc_incast_dcqcn.txt", "qlen_incast_dcqcn.txt"}) {
            QFile a(cpu.filePath(f)), b(device.filePath(f));
            QVERIFY2(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly), f);
            const QByteArray text = a.readAll();
            QVERIFY2(!text.isEmpty(), f);
            QVERIFY2(text == b.readAll(), f);
        }
        // An LLM scenario with no packet-level experiment: the device backend would change nothing, so the
        // option is refused before anything runs or is stored.
        QProcess analytic;
        analytic.setWorkingDirectory(device.path());
        analytic.start(ORRERY_CLI, {"run", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/multiverse-2-collectives-llama65b.json", "--out", "llm.sqlite",
                                    "--backend", "device"});
        analytic.waitForFinished(120000);
        QCOMPARE(analytic.exitCode(), 1);
        QVERIFY(QString::fromUtf8(analytic.readAllStandardError()).contains("--backend: error: device steps the packet level"));
        QVERIFY(!QFile::exists(device.filePath("llm.sqlite")));
    }

    void experiments_divided_over_devices_by_memory() {
        SKIP_WITHOUT_DEVICE();
        // Six reference scenarios as one batch (the rings with skipping), on two devices that each hold about a
        // third of it: groups in turn on the two, the same bytes as the CPU backend.
        std::vector<std::unique_ptr<HpccJob>> jobs;
        std::vector<ExperimentInput> inputs;
        Diagnostics warnings;
        for (const char* c : {"config_ring_dcqcn.txt", "config_incast_hpcc.txt", "config_ring_timely.txt", "config_incast_dctcp.txt",
                              "config_mixed_hpcc.txt", "config_staggered_timely.txt"}) {
            jobs.push_back(load_hpcc_job(kRef / c, kRef, PresetLibrary(), warnings));
            // The rings skip: their skippers pull packets on two devices at once.
            if (std::string(c).find("ring") != std::string::npos) jobs.back()->loaded.scenarios[0].skipping.enabled = true;
            inputs.push_back(jobs.back()->input);
            char id[16];
            std::snprintf(id, sizeof id, "e%zu", inputs.size());
            inputs.back().id = id;
        }
        RunOptions o;
        o.threads = 2;
        Batch cpu = compile_batch(inputs);
        const std::string expected = fingerprint(run_cpu(cpu, o));
        Batch device = compile_batch(inputs);
        const uint64_t all = plan_device_groups(device, UINT64_MAX / 2, 1)[0].bytes;
        DeviceOptions d;
        d.devices = 2;
        d.memory_limit_bytes = all / 3;
        const auto groups = plan_device_groups(device, d.memory_limit_bytes, d.devices);
        QVERIFY2(groups.size() >= 3, qPrintable(QString::number(groups.size())));
        for (const DeviceGroup& g : groups) QVERIFY(g.bytes <= d.memory_limit_bytes);
        QCOMPARE(groups[1].device, 1);
        DeviceReport report;
        d.report = &report;
        const auto on_devices = run_device(device, o, d);
        QCOMPARE(fingerprint(on_devices), expected);
        QVERIFY(!on_devices[0].skipping.skips.empty());
        QCOMPARE(report.groups, uint64_t(groups.size()));
        QVERIFY(report.device_bytes <= d.memory_limit_bytes);
        // An experiment that alone needs more than a device holds is refused before the run, by name.
        Batch again = compile_batch(inputs);
        d.memory_limit_bytes = all / 100;
        try {
            run_device(again, o, d);
            QFAIL("an experiment larger than a device ran");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("experiment e1") && QString(e.what()).contains("CPU backend"), e.what());
        }
    }

    void sharing_transients_between_experiments_is_refused() {
        SKIP_WITHOUT_DEVICE();
        // Device groups run experiments side by side, so they cannot read what an earlier one learned: two rings
        // with skipping.share_memo are refused by name, before anything runs.
        Diagnostics warnings;
        auto job = load_hpcc_job(kRef / "config_ring_dcqcn.txt", kRef, PresetLibrary(), warnings);
        Scenario& s = job->loaded.scenarios[0];
        s.skipping.enabled = s.skipping.share_memo = true;
        ExperimentInput second = job->input;
        second.id = "e1";
        Batch b = compile_batch({job->input, second});
        try {
            run_device(b, RunOptions{});
            QFAIL("share_memo ran on the device backend");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("experiment e1") && QString(e.what()).contains("share_memo") && QString(e.what()).contains("CPU backend"),
                     e.what());
        }
        // One experiment alone has nobody to share with: it runs.
        Batch one = compile_batch({job->input});
        QVERIFY(!run_device(one, RunOptions{})[0].flows.empty());
    }

    void storage_bound_is_an_error_not_a_drop() {
        SKIP_WITHOUT_DEVICE();
        Diagnostics warnings;
        const auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), warnings);
        Batch b = compile_batch({job->input});
        DeviceOptions d;
        d.initial_blocks = 64;
        // What the plan gives an experiment before packets, and 16 blocks more: far below what the incast queues.
        d.memory_limit_bytes = plan_device_groups(b, UINT64_MAX / 2, 1)[0].bytes + 16 * BlockArena::kBytesPerBlock;
        try {
            run_device(b, RunOptions{}, d);
            QFAIL("a run that needs more packet storage than allowed ran");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("packet storage exhausted on the device"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestDevice)
#include "test_device.moc"
