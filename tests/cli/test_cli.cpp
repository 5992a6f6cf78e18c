// orrery-cli end to end: exit codes, every malformed input's exact error, stats, conversions that
// never overwrite what the user had.
#include <QtTest>
#include <QElapsedTimer>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <signal.h>
#include <sys/stat.h>

#include "cli/cli_process.h"
#include "telemetry/results_store.h"

namespace {
using Result = orrery::testing::CliResult;

Result run(const QStringList& args, const QString& dir = ORRERY_TEST_DIR) { return orrery::testing::run_cli(args, dir); }

// The ring of 16 x 10 MB flows on the k = 4 fat-tree under DCTCP, with `skipping` as given.
nlohmann::json skipping_ring(const nlohmann::json& skipping) {
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < 16; ++i) flows.push_back({{"src", i}, {"dst", (i + 1) % 16}, {"size", "10MB"}, {"start", "0us"}});
    return {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"preset", "fat-tree-k4"}}}, {"network", {{"preset", "reference-100g"}}},
            {"cc", {{"preset", "dctcp-100g"}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}, {"skipping", skipping}};
}

// `run --json` prints one summary per line as each experiment finishes; ordered here by experiment id.
nlohmann::json summary_lines(const QString& out) {
    nlohmann::json all = nlohmann::json::array();
    for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) all.push_back(nlohmann::json::parse(line.toStdString()));
    std::sort(all.begin(), all.end(), [](const nlohmann::json& a, const nlohmann::json& b) { return a["experiment"] < b["experiment"]; });
    return all;
}

QString first_error_line(const QString& err) {
    for (const QString& line : err.split('\n'))
        if (line.contains(": error: ")) return line;
    return {};
}
}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void exit_codes() {
        QCOMPARE(run({"--help"}).code, 0);
        QCOMPARE(run({"validate", "--help"}).code, 0);
        Result v = run({"--version"});
        QCOMPARE(v.code, 0);
        QVERIFY(v.out.startsWith("orrery-cli 0.1.0 (git "));
        QCOMPARE(run({}).code, 2);
        QCOMPARE(run({"simulate-everything"}).code, 2);
        QCOMPARE(run({"validate"}).code, 2);
        QCOMPARE(run({"fabric", "fat-tree:k=8", "--no-such-flag"}).code, 2);
        QCOMPARE(run({"validate", "no/such/file.json"}).code, 1);
        QCOMPARE(run({"validate", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json"}).code, 0);
    }
    void malformed_inputs_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QFile table(QString(ORRERY_TEST_DIR) + "/malformed/expected.tsv");
        QVERIFY(table.open(QIODevice::ReadOnly));
        int rows = 0;
        for (const QString& line : QString::fromUtf8(table.readAll()).split('\n', Qt::SkipEmptyParts)) {
            const QStringList parts = line.split('\t');
            QTest::newRow(parts[0].toUtf8().constData()) << parts[0] << parts[1];
            ++rows;
        }
        QVERIFY(rows >= 30);
    }
    void malformed_inputs() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const QString dir = QString(ORRERY_TEST_DIR) + "/malformed";
        Result r = run({"validate", file}, dir);
        QCOMPARE(r.code, 1);
        QCOMPARE(first_error_line(r.err), QString(expected).replace("{cwd}", dir));
    }
    void a_packet_run_inside_one_server_says_so() {
        // TP 8 on one server of 8 GPUs: nothing crosses the network, so there are no packets to simulate; the
        // summary's notes say it ran on the flow level (where NVLink still contends) and network_mode says so.
        QTemporaryDir tmp;
        const nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "tp8"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", 8}, {"gpus_per_server", 8}}},
            {"workload", {{"kind", "llm"}, {"network_mode", "packet"},
                          {"model", {{"layers", 2}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
                          {"parallel", {{"tp", 8}}}}}};
        std::ofstream(tmp.filePath("tp8.json").toStdString()) << doc.dump(1);
        Result r = run({"run", "tp8.json", "--out", "r.sqlite", "--json"}, tmp.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const nlohmann::json j = summary_lines(r.out).at(0);
        QVERIFY2(j["notes"].get<std::string>().find("no traffic leaves a server") != std::string::npos, j.dump().c_str());
        QCOMPARE(j["network_mode"].get<std::string>(), std::string("flow"));
    }

    void simai_busbw_runs_the_9216_gpu_moe_file() {
        // The MoE sample SimAI_analytical estimates at 7,545,619 µs (tests/reference/simai-analytical/moe.summary.csv):
        // the same from `run`, as one JSON line, without building a task graph; validate passes it too.
        QTemporaryDir tmp;
        const nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "moe"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", 9216}, {"gpus_per_server", 8}}},
            {"workload", {{"kind", "llm"}, {"gpu", "A100"}, {"collectives", {{"model", "busbw"}}},
                          {"import", {{"format", "simai"}, {"path", std::string(ORRERY_TEST_DIR) + "/reference/formats/simai-workload/workload_analytical.txt"}}}}}};
        std::ofstream(tmp.filePath("moe.json").toStdString()) << doc.dump(1);
        QCOMPARE(run({"validate", "moe.json"}, tmp.path()).code, 0);
        Result r = run({"run", "moe.json", "--out", "r.sqlite", "--json"}, tmp.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const nlohmann::json j = summary_lines(r.out).at(0);
        QCOMPARE(j["network_mode"].get<std::string>(), std::string("busbw"));
        QVERIFY2(std::abs(j["iteration_time_s"].get<double>() - 7.545619) < 1e-5, j.dump().c_str());
        QCOMPARE(j["ops"].get<int>(), 0);
    }

    void a_lockstep_run_says_what_its_rows_are() {
        // The AICB GPT-13B file in lockstep lanes on 128 GPUs: the notes say so, and the store's timeline holds
        // the one lane's spans under its first rank.
        QTemporaryDir tmp;
        const nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "lanes"}, {"topology", {{"preset", "roft-128"}}},
            {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", {{"kind", "llm"}, {"network_mode", "flow"}, {"granularity", "stage"},
                          {"import", {{"format", "simai"}, {"path", std::string(ORRERY_TEST_DIR) +
                                                                       "/reference/formats/simai-workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt"}}}}}};
        std::ofstream(tmp.filePath("lanes.json").toStdString()) << doc.dump(1);
        Result r = run({"run", "lanes.json", "--out", "r.sqlite", "--json"}, tmp.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const nlohmann::json j = summary_lines(r.out).at(0);
        QVERIFY2(j["notes"].get<std::string>().find("lockstep lanes: one per pipeline stage (128 ranks each") != std::string::npos, j.dump().c_str());
        QVERIFY2(j["network_flows"].get<int64_t>() == 15360, j.dump().c_str());  // as the per-rank graph counts them (bench_flow row 2)
        Result t = run({"export", "timeline", "r.sqlite", "--experiment", "e0000", "--output", "t.json"}, tmp.path());
        QVERIFY2(t.code == 0, qPrintable(t.err));
        std::ifstream in(tmp.filePath("t.json").toStdString());
        const nlohmann::json trace = nlohmann::json::parse(in);
        std::set<int> pids;
        for (const nlohmann::json& e : trace["traceEvents"])
            if (e.value("ph", "") == "X") pids.insert(e.value("pid", -1));
        QCOMPARE(pids, std::set<int>{0});
    }

    void ecn_thresholds_for_missing_rates_are_derived_and_said() {
        // Switch ports of a rate the ECN table lacks take the nearest rate's thresholds scaled to theirs (the
        // reference's run.py rule), with a warning naming the table and the numbers.
        const QString dir = QString(ORRERY_TEST_DIR) + "/cli";
        Result r = run({"validate", "ecn_missing_rate.json"}, dir);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("network.ecn.thresholds: warning: no ECN threshold for 100 Gb/s switch ports: using 400 Gb/s's scaled to the rate") &&
                     r.err.contains("kmin 250000 B, kmax 500000 B"),
                 qPrintable(r.err));
        r = run({"validate", "config_missing_ecn_rate.txt"}, dir);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("no ECN threshold for 100 Gb/s switch ports: using"), qPrintable(r.err));
    }
    void fabric_stats() {
        Result r = run({"fabric", "fat-tree:k=8", "--stats", "--json"});
        QCOMPARE(r.code, 0);
        nlohmann::json s = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(s["hosts"].get<int>(), 128);
        QCOMPARE(s["switches"].get<int>(), 80);
        QCOMPARE(s["links"].get<int>(), 384);
        QVERIFY(s["routing"]["all_host_pairs_reachable"].get<bool>());
        r = run({"fabric", "leaf-spine:leaves=2,spines=2,hosts-per-leaf=8,oversubscription=4", "--json"});
        s = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(s["links"].get<int>(), 16 + 4);
        r = run({"fabric", "roft:gpus=128,gpus-per-server=8", "--json"});
        s = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(s["hosts"].get<int>(), 128);
        QCOMPARE(s["nvswitches"].get<int>(), 16);
        r = run({"fabric", "fat-tree:k=9"});
        QCOMPARE(r.code, 1);
        QCOMPARE(first_error_line(r.err), QString("fat-tree:k=9: k: error: expected an even switch radix k (a fat-tree has k/2 down and k/2 up ports), found 9"));
        QCOMPARE(run({"fabric", "fat-three:k=8"}).code, 1);
    }
    void expand_lists_experiments() {
        Result r = run({"expand", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json", "--json"});
        QCOMPARE(r.code, 0);
        nlohmann::json e = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(e.size(), size_t(4));
        QCOMPARE(e[1]["id"].get<std::string>(), std::string("e0001"));
        QCOMPARE(e[1]["parameters"]["cc.preset"].get<std::string>(), std::string("hpcc-100g"));
        QCOMPARE(e[1]["sha256"].get<std::string>().size(), size_t(64));
        // With seeds: 4 presets × 2 seeds, the last parameter fastest, then the seed; the text form names
        // each experiment's seed once.
        QTemporaryDir tmp;
        std::ifstream demo(std::string(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json");
        nlohmann::json doc = nlohmann::json::parse(demo);
        doc["sweep"]["seeds"] = {3, 9};
        std::ofstream(tmp.filePath("seeded.json").toStdString()) << doc.dump(1);
        r = run({"expand", "seeded.json"}, tmp.path());
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 9);
        QCOMPARE(lines[0], QString("8 experiments from seeded.json"));
        QVERIFY2(lines[4].startsWith("e0003 ") && lines[4].contains("  seed=9  cc.preset=\"hpcc-100g\""), qPrintable(lines[4]));
        for (const QString& line : lines.mid(1)) QCOMPARE(line.count("seed="), 1);
    }
    void run_stores_every_experiment() {
        QTemporaryDir tmp;
        const QString store = tmp.filePath("demo.sqlite");
        Result r = run({"run", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json", "--out", store, "--threads", "2", "--json"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.count('\n'), 4);  // one line per experiment
        nlohmann::json summary = summary_lines(r.out);
        QCOMPARE(summary.size(), size_t(4));
        for (const auto& e : summary) {
            QCOMPARE(e["status"].get<std::string>(), std::string("finished"));
            QCOMPARE(e["flows_finished"]["value"].get<double>(), 15.0);
            QCOMPARE(e["fct_mean"]["unit"].get<std::string>(), std::string("us"));
        }
        // The HPCC experiment (e0001) is the reference incast: its mean FCT is the reference's within 2 %.
        QVERIFY(std::abs(summary[1]["fct_mean"]["value"].get<double>() - 1190.847) / 1190.847 < 0.02);
        QVERIFY(QFile::exists(store));
        // A second run into the same store appends; a scenario with a bad topology changes nothing.
        QCOMPARE(run({"run", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json", "--out", store}).code, 0);
        QCOMPARE(run({"run", QString(ORRERY_TEST_DIR) + "/malformed/odd_k.json", "--out", store}).code, 1);
    }
    // Every bundled scenario is valid and is found by its name; the Wormhole rows expand to their four sizes.
    void bundled_scenarios_run_by_name() {
        Result list = run({"presets", "scenarios"});
        QCOMPARE(list.code, 0);
        QDir dir(QString(ORRERY_SOURCE_DIR) + "/presets/scenarios");
        const QStringList files = dir.entryList({"*.json"});
        QVERIFY(files.size() >= 6);
        for (const QString& f : files) {
            const QString name = f.chopped(5);
            QVERIFY2(list.out.contains("  " + name), qPrintable(name));
            Result v = run({"validate", name});
            QVERIFY2(v.code == 0, qPrintable(name + ": " + v.err));
        }
        Result e = run({"expand", "wormhole-moe", "--json"});
        QCOMPARE(e.code, 0);
        const nlohmann::json x = nlohmann::json::parse(e.out.toStdString());
        QCOMPARE(x.size(), size_t(4));
        QCOMPARE(x[3]["parameters"]["topology.preset"].get<std::string>(), std::string("roft-1024"));
        QCOMPARE(x[3]["parameters"]["workload.model.preset"].get<std::string>(), std::string("gpt-moe-32x22b"));
        QCOMPARE(run({"validate", "no-such-bundled-scenario"}).code, 1);
    }
    void llm_sweep_with_oom_and_timeline_export() {
        QTemporaryDir tmp;
        // A 32-GPU job swept over the framework overhead: 4 GB fits an H100, 90 GB cannot.
        nlohmann::json doc = {
            {"format", "orrery-scenario"},
            {"version", 1},
            {"name", "llm sweep"},
            {"topology",
             {{"generator", "rail-optimized"}, {"gpus", 32}, {"gpus_per_server", 8}, {"tiers", 2}, {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}}},
            {"network", {{"preset", "reference-400g"}}},
            {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload",
             {{"kind", "llm"},
              {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
              {"parallel", {{"tp", 8}, {"pp", 2}, {"dp", 2}, {"micro_batches", 4}}},
              {"iterations", 2}}},
            {"output", {{"record", {"fct", "queues"}}, {"sample_interval", "5us"}}},
            {"sweep", {{"parameters", {{{"path", "workload.framework_overhead"}, {"values", {"4GB", "90GB"}}}}}}}};
        std::ofstream(tmp.filePath("llm.json").toStdString()) << doc.dump(1);
        Result r = run({"run", "llm.json", "--out", "r.sqlite", "--json", "--threads", "2"}, tmp.path());
        QCOMPARE(r.code, 0);
        const nlohmann::json summary = summary_lines(r.out);
        QCOMPARE(summary.size(), size_t(2));
        QCOMPARE(summary[0]["status"].get<std::string>(), std::string("ok"));
        QVERIFY(summary[0]["iteration_time_s"].get<double>() > 0);
        QCOMPARE(summary[1]["status"].get<std::string>(), std::string("oom"));
        QVERIFY2(summary[1]["message"].get<std::string>().find("needs") != std::string::npos, summary[1].dump().c_str());
        QVERIFY(summary[1]["message"].get<std::string>().find("but a H100 has") != std::string::npos);

        // The timeline as Chrome trace JSON: a process per rank, a thread per stream, spans nested per lane.
        r = run({"export", "timeline", "r.sqlite", "--experiment", "e0000", "-o", "trace.json.gz"}, tmp.path());
        QCOMPARE(r.code, 0);
        QProcess gunzip;
        gunzip.start("gzip", {"-dc", tmp.filePath("trace.json.gz")});
        QVERIFY(gunzip.waitForFinished());
        const nlohmann::json trace = nlohmann::json::parse(gunzip.readAllStandardOutput().toStdString());
        std::set<int> ranks;
        std::map<std::pair<int, int>, std::string> threads;
        std::map<std::pair<int, int>, double> lane_end;
        size_t spans = 0, counters = 0;
        std::set<int> iterations;
        for (const auto& e : trace["traceEvents"]) {
            const std::string ph = e["ph"];
            if (ph == "M" && e["name"] == "process_name" && e["args"]["name"].get<std::string>().rfind("rank ", 0) == 0) ranks.insert(e["pid"].get<int>());
            if (ph == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
            if (ph == "C") ++counters;
            if (ph != "X") continue;
            ++spans;
            const std::pair<int, int> lane{e["pid"], e["tid"]};
            QVERIFY(threads.count(lane));
            QVERIFY(e["dur"].get<double>() >= 0);
            QVERIFY2(e["ts"].get<double>() >= lane_end[lane] - 1e-9, "spans on one lane overlap");
            lane_end[lane] = e["ts"].get<double>() + e["dur"].get<double>();
            iterations.insert(e["args"]["iteration"].get<int>());
        }
        QCOMPARE(ranks.size(), size_t(32));
        for (const char* stream : {"compute", "tp", "pp", "dp"})
            QVERIFY2(std::count_if(threads.begin(), threads.end(), [&](const auto& t) { return t.second == stream; }) == 32, stream);
        QVERIFY(spans > 1000);
        QVERIFY(counters > 0);
        QCOMPARE(iterations, (std::set<int>{0, 1}));
        // One file per iteration on request; the OOM experiment has no timeline; nothing is overwritten.
        r = run({"export", "timeline", "r.sqlite", "--experiment", "e0000", "-o", "t.json", "--split-above", "10"}, tmp.path());
        QCOMPARE(r.code, 0);
        QVERIFY(QFile::exists(tmp.filePath("t.it0.json")) && QFile::exists(tmp.filePath("t.it1.json")));
        r = run({"export", "timeline", "r.sqlite", "--experiment", "e0001", "-o", "oom.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("has no timeline (status oom"), qPrintable(r.err));
        QCOMPARE(run({"export", "timeline", "r.sqlite", "--experiment", "e0000", "-o", "trace.json.gz"}, tmp.path()).code, 1);
    }
    void run_refuses_existing_reference_files_before_running() {
        QTemporaryDir tmp;
        std::ifstream demo(std::string(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json");
        nlohmann::json doc = nlohmann::json::parse(demo);
        doc["output"]["store"] = "results.sqlite";
        doc["output"]["hpcc_files"] = {{"fct", "fct.txt"}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        QFile taken(tmp.filePath("fct_e0001.txt"));  // one experiment's file already there
        QVERIFY(taken.open(QIODevice::WriteOnly));
        taken.write("kept\n");
        taken.close();
        Result r = run({"run", "s.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("fct_e0001.txt: error: already exists"), qPrintable(r.err));
        // Refused before anything ran: no store, no other experiment's file, and the user's file untouched.
        QVERIFY(!QFile::exists(tmp.filePath("results.sqlite")));
        QVERIFY(!QFile::exists(tmp.filePath("fct_e0000.txt")));
        QVERIFY(taken.open(QIODevice::ReadOnly));
        QCOMPARE(taken.readAll(), QByteArray("kept\n"));
        taken.close();
        // With --force every experiment writes its file.
        QCOMPARE(run({"run", "s.json", "--force"}, tmp.path()).code, 0);
        for (const char* id : {"e0000", "e0001", "e0002", "e0003"}) QVERIFY(QFile::exists(tmp.filePath(QString("fct_%1.txt").arg(id))));
    }
    void run_with_skipping_persists_the_memo() {
        // The ring of 16 x 10 MB flows with skipping on and a memo file: the first run stores transients, the
        // second reuses them; skips, memo events and the skipped share are in the store and the JSON summary.
        QTemporaryDir tmp;
        std::ofstream(tmp.filePath("s.json").toStdString()) << skipping_ring({{"enabled", true}, {"memo_file", "memo.sqlite"}}).dump(1);
        std::vector<nlohmann::json> summaries;
        for (const char* store : {"a.sqlite", "b.sqlite"}) {
            Result r = run({"run", "s.json", "--out", store, "--json"}, tmp.path());
            QVERIFY2(r.code == 0, qPrintable(r.err));
            summaries.push_back(summary_lines(r.out)[0]);
        }
        QVERIFY(QFile::exists(tmp.filePath("memo.sqlite")));
        QCOMPARE(summaries[0]["memo_hits"]["value"].get<double>(), 0.0);
        QVERIFY(summaries[1]["memo_hits"]["value"].get<double>() > 0);
        for (const auto& s : summaries) {
            QVERIFY(s["skips"]["value"].get<double>() >= 1);
            const double share = s["events_skipped_share"]["value"].get<double>();
            QVERIFY2(share > 0.3 && share < 1, qPrintable(QString::number(share)));
            QCOMPARE(s["events_skipped_share"]["unit"].get<std::string>(), std::string("ratio"));
        }
        // A memo file from before each flow's CC state was kept: its rows are set aside (and say so), their
        // transients measured again and saved beside them.
        auto count_rows = [&](const char* where) {
            sqlite3* db = nullptr;
            sqlite3_open(tmp.filePath("memo.sqlite").toUtf8().constData(), &db);
            int rows = -1;
            sqlite3_exec(db, (std::string("SELECT count(*) FROM wormhole_memo WHERE ") + where).c_str(), [](void* out, int, char** v, char**) {
                *static_cast<int*>(out) = std::atoi(v[0]);
                return 0;
            }, &rows, nullptr);
            sqlite3_close(db);
            return rows;
        };
        const int stored = count_rows("1");
        QVERIFY(stored > 0);
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(tmp.filePath("memo.sqlite").toUtf8().constData(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "UPDATE wormhole_memo SET end_cc_state = NULL", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        Result old = run({"run", "s.json", "--out", "c.sqlite", "--json"}, tmp.path());
        QVERIFY2(old.code == 0, qPrintable(old.err));
        QVERIFY2(old.err.contains(QString("memo: %1 transients in ").arg(stored)) &&
                     old.err.contains("memo.sqlite were written by an older Orrery (without each flow's congestion-control state or its bytes in flight at "
                                     "the key): set aside, measured again"),
                 qPrintable(old.err));
        QCOMPARE(summary_lines(old.out)[0]["memo_hits"]["value"].get<double>(), 0.0);
        QCOMPARE(count_rows("end_cc_state IS NULL"), stored);
        QCOMPARE(count_rows("end_cc_state IS NOT NULL"), stored);
    }
    void run_with_share_memo_reuses_transients_along_the_sweep() {
        // The same ring swept over three seeds with skipping.share_memo: the first experiment measures its
        // transients, the later ones reuse them; the summaries are the same on one thread and on two.
        QTemporaryDir tmp;
        nlohmann::json doc = skipping_ring({{"enabled", true}, {"share_memo", true}});
        doc["sweep"] = {{"seeds", {1, 2, 3}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        std::vector<std::map<std::string, nlohmann::json>> runs;
        for (const char* threads : {"1", "2"}) {
            Result r = run({"run", "s.json", "--out", (std::string("t") + threads + ".sqlite").c_str(), "--json", "--threads", threads}, tmp.path());
            QVERIFY2(r.code == 0, qPrintable(r.err));
            std::map<std::string, nlohmann::json> by_id;
            for (nlohmann::json& line : summary_lines(r.out)) {
                line.erase("wall_time");
                by_id[line["experiment"].get<std::string>()] = line;
            }
            QCOMPARE(by_id.size(), size_t(3));
            runs.push_back(by_id);
        }
        const auto& one = runs[0];
        QCOMPARE(one.at("e0000")["memo_hits"]["value"].get<double>(), 0.0);
        for (const char* later : {"e0001", "e0002"}) {
            QVERIFY(one.at(later)["memo_hits"]["value"].get<double>() > 0);
            QVERIFY(one.at(later)["events"]["value"].get<double>() < one.at("e0000")["events"]["value"].get<double>());
        }
        for (const auto& [id, line] : one) QCOMPARE(runs[1].at(id)["fct_mean"], line["fct_mean"]);
    }
    void run_hpcc_writes_reference_files_and_the_store() {
        QTemporaryDir tmp;
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference/ns3-hpcc";
        for (const char* f : {"config_ring_dctcp.txt", "topology.txt", "flow_ring.txt", "trace.txt"})
            QVERIFY(QFile::copy(ref + "/" + f, tmp.filePath(f)));
        Result r = run({"run-hpcc", "config_ring_dctcp.txt", "--out", "results.sqlite"}, tmp.path());
        QCOMPARE(r.code, 0);
        // The FCT file equals the reference's, line for line (the ring runs are exact).
        QFile ours(tmp.filePath("fct_ring_dctcp.txt")), theirs(ref + "/fct_ring_dctcp.txt");
        QVERIFY(ours.open(QIODevice::ReadOnly) && theirs.open(QIODevice::ReadOnly));
        QStringList a = QString::fromUtf8(ours.readAll()).split('\n'), b = QString::fromUtf8(theirs.readAll()).split('\n');
        a.sort();
        b.sort();
        QCOMPARE(a, b);
        QVERIFY(QFile::exists(tmp.filePath("results.sqlite")));
        // Running again refuses to overwrite the outputs.
        QCOMPARE(run({"run-hpcc", "config_ring_dctcp.txt"}, tmp.path()).code, 1);
    }
    void force_replaces_regular_files_only() {
        // FCT_OUTPUT_FILE /dev/null with --force once turned /dev/null into a regular file (as root).
        QTemporaryDir tmp;
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference/ns3-hpcc";
        for (const char* f : {"topology.txt", "flow_ring.txt", "trace.txt"}) QVERIFY(QFile::copy(ref + "/" + f, tmp.filePath(f)));
        QFile in(ref + "/config_ring_dctcp.txt");
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QString config = QString::fromUtf8(in.readAll());
        auto write_config = [&](const QString& name, const QString& text) {
            QFile out(tmp.filePath(name));
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(text.toUtf8());
        };
        write_config("to_null.txt", QString(config).replace("FCT_OUTPUT_FILE fct_ring_dctcp.txt", "FCT_OUTPUT_FILE /dev/null"));
        Result r = run({"run-hpcc", "to_null.txt", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).startsWith("/dev/null: error: is a character device, not a regular file"), qPrintable(r.err));
        QVERIFY(QFileInfo("/dev/null").exists() && !QFileInfo("/dev/null").isFile());
        // Two outputs of one run under one name: refused before the run, and nothing is written.
        write_config("twice.txt", QString(config).replace("PFC_OUTPUT_FILE pfc_ring_dctcp.txt", "PFC_OUTPUT_FILE fct_ring_dctcp.txt"));
        r = run({"run-hpcc", "twice.txt", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("is named twice among this command's outputs"), qPrintable(r.err));
        QVERIFY(!QFile::exists(tmp.filePath("fct_ring_dctcp.txt")));
        // The store is appended to, so a device is refused as a store too; so are a pipe and a folder as outputs.
        QVERIFY(QFile::copy(ref + "/config_ring_dctcp.txt", tmp.filePath("config_ring_dctcp.txt")));
        r = run({"run-hpcc", "config_ring_dctcp.txt", "--out", "/dev/zero"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).startsWith("/dev/zero: error: is a character device"), qPrintable(r.err));
        const QByteArray fifo = tmp.filePath("pipe").toUtf8();
        QCOMPARE(::mkfifo(fifo.constData(), 0600), 0);
        r = run({"fabric", "fat-tree:k=4", "-o", "pipe", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("is a named pipe, not a regular file"), qPrintable(r.err));
        QVERIFY(QDir(tmp.path()).mkdir("folder.json"));
        r = run({"convert", ref + "/topology.txt", "-o", "folder.json", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("is a folder, not a regular file"), qPrintable(r.err));
        // A regular file is still replaced with --force.
        QVERIFY(QFile::copy(ref + "/topology.txt", tmp.filePath("old.json")));
        QCOMPARE(run({"convert", ref + "/topology.txt", "-o", "old.json", "--force"}, tmp.path()).code, 0);
    }
    void damaged_and_newer_stores_are_refused() {
        QTemporaryDir tmp;
        nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "timeline"},
            {"topology", {{"generator", "single-switch"}, {"hosts", 16}}},
            {"cc", {{"algorithm", "dcqcn"}}},
            {"workload", {{"kind", "llm"}, {"network_mode", "analytic"},
                          {"model", {{"layers", 8}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
                          {"parallel", {{"tp", 4}, {"pp", 2}, {"dp", 2}, {"micro_batches", 8}}}, {"iterations", 4}}}};
        std::ofstream(tmp.filePath("llm.json").toStdString()) << doc.dump(1);
        QCOMPARE(run({"run", "llm.json", "--out", "r.sqlite"}, tmp.path()).code, 0);
        QCOMPARE(run({"export", "timeline", "r.sqlite", "--experiment", "e0000", "-o", "whole.json"}, tmp.path()).code, 0);
        // A damaged store: three quarters of it overwritten. Export must fail (not write a short trace), and a run
        // must not append to it.
        QVERIFY(QFile::copy(tmp.filePath("r.sqlite"), tmp.filePath("damaged.sqlite")));
        {
            QFile f(tmp.filePath("damaged.sqlite"));
            QVERIFY(f.open(QIODevice::ReadWrite));
            const qint64 size = f.size();
            QVERIFY(size > 100000);
            QVERIFY(f.seek(size / 8));  // most of it: the timeline's pages, whatever the other tables hold
            f.write(QByteArray(int(size * 3 / 4), char(0xA5)));
        }
        Result r = run({"export", "timeline", "damaged.sqlite", "--experiment", "e0000", "-o", "short.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("damaged.sqlite: error: SQLite: "), qPrintable(r.err));
        QVERIFY(!QFile::exists(tmp.filePath("short.json")));
        const qint64 damaged_size = QFileInfo(tmp.filePath("damaged.sqlite")).size();
        r = run({"run", "llm.json", "--out", "damaged.sqlite"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("the results store is damaged"), qPrintable(r.err));
        QCOMPARE(QFileInfo(tmp.filePath("damaged.sqlite")).size(), damaged_size);
        // A store from a newer Orrery: refused by both, not appended to.
        QVERIFY(QFile::copy(tmp.filePath("r.sqlite"), tmp.filePath("newer.sqlite")));
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(tmp.filePath("newer.sqlite").toUtf8().constData(), &db), SQLITE_OK);
        const std::string newer = std::to_string(orrery::ResultsStore::schema_version() + 1);
        QCOMPARE(sqlite3_exec(db, ("UPDATE orrery_store SET value = '" + newer + "' WHERE key = 'schema_version'").c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
        r = run({"run", "llm.json", "--out", "newer.sqlite"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains(QString::fromStdString("was written by a newer Orrery (results store schema version " + newer)), qPrintable(r.err));
        r = run({"export", "timeline", "newer.sqlite", "--experiment", "e0000", "-o", "newer.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("was written by a newer Orrery"), qPrintable(r.err));
        // A store missing a table (exit 3 "internal error" once): an input error naming the file.
        QVERIFY(QFile::copy(tmp.filePath("r.sqlite"), tmp.filePath("partial.sqlite")));
        QCOMPARE(sqlite3_open(tmp.filePath("partial.sqlite").toUtf8().constData(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "DROP TABLE timeline", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
        r = run({"export", "timeline", "partial.sqlite", "--experiment", "e0000", "-o", "partial.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("partial.sqlite: error: not a complete Orrery results store (no such table: timeline)"), qPrintable(r.err));
    }
    void runs_that_end_badly_are_marked() {
        QTemporaryDir tmp;
        auto statuses = [&](const QString& store) {
            std::vector<std::string> out;
            sqlite3* db = nullptr;
            sqlite3_open_v2(tmp.filePath(store).toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
            sqlite3_stmt* q = nullptr;
            sqlite3_prepare_v2(db, "SELECT r.status || '/' || group_concat(e.status) FROM runs r JOIN experiments e USING (run_id) GROUP BY r.run_id ORDER BY r.run_id", -1, &q, nullptr);
            while (sqlite3_step(q) == SQLITE_ROW) out.push_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
            sqlite3_finalize(q);
            sqlite3_close(db);
            return out;
        };
        // A long packet-level run, killed with SIGKILL once its experiment has started.
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 128; ++i) flows.push_back({{"src", i}, {"dst", (i + 1) % 128}, {"size", "20MB"}});
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "long"},
                              {"topology", {{"generator", "fat-tree"}, {"k", 8}}}, {"cc", {{"algorithm", "dcqcn"}}},
                              {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        std::ofstream(tmp.filePath("long.json").toStdString()) << doc.dump(1);
        QProcess p;
        p.setWorkingDirectory(tmp.path());
        p.start(ORRERY_CLI, {"run", "long.json", "--out", "s.sqlite", "--progress-json"});
        QVERIFY(p.waitForStarted());
        QByteArray err;
        while (!err.contains("\"event\":\"progress\"") && p.state() == QProcess::Running) {
            p.waitForReadyRead(100);
            err += p.readAllStandardError();
        }
        QVERIFY2(err.contains("\"event\":\"progress\""), err.constData());
        p.kill();  // SIGKILL: nothing of the process runs after it
        QVERIFY(p.waitForFinished());
        QCOMPARE(statuses("s.sqlite"), std::vector<std::string>{"running/running"});
        // Without --run, export does not pick the killed run.
        Result r = run({"export", "timeline", "s.sqlite", "--experiment", "e0000", "-o", "t.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("has no finished run: in run 1, its newest, it is running"), qPrintable(r.err));
        // A run refused before its first step (its FCT file's folder is missing) stores nothing, and the store
        // is left as it was.
        doc["workload"]["flows"] = {{{"src", 0}, {"dst", 1}, {"size", "10KB"}}};
        doc["output"] = {{"hpcc_files", {{"fct", "no/such/folder/fct.txt"}}}};
        std::ofstream(tmp.filePath("fails.json").toStdString()) << doc.dump(1);
        r = run({"run", "fails.json", "--out", "s.sqlite"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("no/such/folder/fct.txt: error: cannot be written: the folder"), qPrintable(r.err));
        QCOMPARE(statuses("s.sqlite"), std::vector<std::string>{"running/running"});
        // The next process to open the store finds the killed run's process gone and marks it.
        doc.erase("output");
        std::ofstream(tmp.filePath("next.json").toStdString()) << doc.dump(1);
        QCOMPARE(run({"run", "next.json", "--out", "s.sqlite"}, tmp.path()).code, 0);
        QCOMPARE(statuses("s.sqlite"), (std::vector<std::string>{"interrupted/interrupted", "finished/finished"}));
    }
    void an_input_is_never_an_output() {
        // `report r.csv -o r.csv --force` once replaced the results store with its report; a scenario's
        // output.hpcc_files naming the scenario, and a config's FCT_OUTPUT_FILE naming its FLOW_FILE, likewise.
        QTemporaryDir tmp;
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference/ns3-hpcc";
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 5}, {"size", "100KB"}}}}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        QCOMPARE(run({"run", "s.json", "--out", "r.csv"}, tmp.path()).code, 0);
        const qint64 store_size = QFileInfo(tmp.filePath("r.csv")).size();
        for (const QStringList& args : {QStringList{"report", "r.csv", "-o", "r.csv", "--force"},
                                        QStringList{"report", "r.csv", "-o", "./r.csv", "--force"},
                                        QStringList{"export", "timeline", "r.csv", "--experiment", "e0000", "-o", "r.csv", "--force"}}) {
            Result r = run(args, tmp.path());
            QCOMPARE(r.code, 1);
            QVERIFY2(first_error_line(r.err).contains("is also an input of this command"), qPrintable(r.err));
            QCOMPARE(QFileInfo(tmp.filePath("r.csv")).size(), store_size);
        }
        // The store named as the scenario, and an FCT file named as the scenario: refused by validate and run.
        Result r = run({"run", "s.json", "--out", "s.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("is also an input of this command"), qPrintable(r.err));
        doc["output"] = {{"hpcc_files", {{"fct", "s2.json"}}}};
        std::ofstream(tmp.filePath("s2.json").toStdString()) << doc.dump(1);
        const QByteArray before = QFileInfo(tmp.filePath("s2.json")).lastModified().toString().toUtf8();
        for (const char* command : {"validate", "run"}) {
            r = run(command == std::string("run") ? QStringList{"run", "s2.json", "--force"} : QStringList{"validate", "s2.json"}, tmp.path());
            QCOMPARE(r.code, 1);
            QVERIFY2(first_error_line(r.err).contains("s2.json: error: is also an input of this command"), qPrintable(r.err));
        }
        QVERIFY(QFile(tmp.filePath("s2.json")).open(QIODevice::ReadOnly));
        QVERIFY(nlohmann::json::parse(std::ifstream(tmp.filePath("s2.json").toStdString())) == doc);
        // run-hpcc: FCT_OUTPUT_FILE naming its own FLOW_FILE.
        for (const char* f : {"topology.txt", "flow_ring.txt", "trace.txt"}) QVERIFY(QFile::copy(ref + "/" + f, tmp.filePath(f)));
        QFile in(ref + "/config_ring_dctcp.txt");
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QString config = QString::fromUtf8(in.readAll()).replace("FCT_OUTPUT_FILE fct_ring_dctcp.txt", "FCT_OUTPUT_FILE flow_ring.txt");
        QFile out(tmp.filePath("c.txt"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(config.toUtf8());
        out.close();
        const qint64 flows_size = QFileInfo(tmp.filePath("flow_ring.txt")).size();
        r = run({"run-hpcc", "c.txt", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("flow_ring.txt: error: is also an input of this command"), qPrintable(r.err));
        QCOMPARE(QFileInfo(tmp.filePath("flow_ring.txt")).size(), flows_size);
        // convert onto its own input.
        r = run({"convert", "s.json", "-o", "s.json", "--force"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("is also an input of this command"), qPrintable(r.err));
    }
    void outputs_are_checked_before_the_first_step() {
        // A missing folder or a name too long for the file system once failed after the simulation, half the
        // files written; a 250-character name failed for the temporary name's suffix.
        QTemporaryDir tmp;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 5}, {"size", "100KB"}}}}}},
                              {"output", {{"hpcc_files", {{"fct", "fct.txt"}, {"pfc", "no/such/folder/pfc.txt"}}}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        for (const char* command : {"validate", "run"}) {
            Result r = run({command, "s.json"}, tmp.path());
            QCOMPARE(r.code, 1);
            QVERIFY2(first_error_line(r.err).contains("no/such/folder/pfc.txt: error: cannot be written: the folder"), qPrintable(r.err));
        }
        QVERIFY(!QFile::exists(tmp.filePath("fct.txt")));
        QVERIFY(!QFile::exists(tmp.filePath("results.sqlite")));
        const std::string long_name = std::string(250, 'a') + ".txt", too_long = std::string(300, 'b') + ".txt";
        doc["output"] = {{"hpcc_files", {{"fct", long_name}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        Result r = run({"run", "s.json"}, tmp.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(tmp.filePath(QString::fromStdString(long_name))).size() > 0);
        doc["output"] = {{"hpcc_files", {{"fct", too_long}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        r = run({"validate", "s.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("its name is 304 bytes long, and the file system of"), qPrintable(r.err));
        r = run({"fabric", "fat-tree:k=4", "-o", QString::fromStdString(too_long)}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("its name is 304 bytes long"), qPrintable(r.err));
        // An imported file whose name the system refuses names the scenario's field.
        doc.erase("output");
        doc["topology"] = {{"import", std::string(300, 'c') + ".txt"}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        r = run({"validate", "s.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).startsWith("s.json: topology.import: error: "), qPrintable(r.err));
        doc["topology"] = {{"import", "."}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        r = run({"validate", "s.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).startsWith("s.json: topology.import: error: ") && r.err.contains("is a folder, expected a file"), qPrintable(r.err));
    }
    void stores_are_created_once_and_checked() {
        QTemporaryDir tmp;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 5}, {"size", "100KB"}}}}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        // Two runs creating the same new store at once: both succeed, the store holds both runs (ten times).
        for (int trial = 0; trial < 10; ++trial) {
            const QString store = QString("same%1.sqlite").arg(trial);
            QProcess a, b;
            for (QProcess* p : {&a, &b}) {
                p->setWorkingDirectory(tmp.path());
                p->start(ORRERY_CLI, {"run", "s.json", "--out", store});
            }
            for (QProcess* p : {&a, &b}) {
                QVERIFY(p->waitForFinished(60000));
                QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
            }
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open_v2(tmp.filePath(store).toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
            sqlite3_stmt* q = nullptr;
            QCOMPARE(sqlite3_prepare_v2(db, "SELECT count(*) FROM runs WHERE status = 'finished'", -1, &q, nullptr), SQLITE_OK);
            QCOMPARE(sqlite3_step(q), SQLITE_ROW);
            QCOMPARE(sqlite3_column_int(q, 0), 2);
            sqlite3_finalize(q);
            sqlite3_close(db);
        }
        // A schema_version no Orrery writes, and a store cut short by one byte: refused, not appended to.
        QCOMPARE(run({"run", "s.json", "--out", "good.sqlite"}, tmp.path()).code, 0);
        for (const char* version : {"abc", "-1", "1.9"}) {
            const QString name = QString("v%1.sqlite").arg(QString(version).replace('.', '_'));
            QVERIFY(QFile::copy(tmp.filePath("good.sqlite"), tmp.filePath(name)));
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(tmp.filePath(name).toUtf8().constData(), &db), SQLITE_OK);
            const std::string sql = std::string("UPDATE orrery_store SET value = '") + version + "' WHERE key = 'schema_version'";
            QCOMPARE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
            const qint64 size = QFileInfo(tmp.filePath(name)).size();
            for (const QStringList& args : {QStringList{"run", "s.json", "--out", name}, QStringList{"report", name, "-o", name + ".html"}}) {
                Result r = run(args, tmp.path());
                QCOMPARE(r.code, 1);
                QVERIFY2(first_error_line(r.err).contains(QString("has the schema_version \"%1\", which no Orrery writes").arg(version)), qPrintable(r.err));
            }
            QCOMPARE(QFileInfo(tmp.filePath(name)).size(), size);
        }
        QVERIFY(QFile::copy(tmp.filePath("good.sqlite"), tmp.filePath("short.sqlite")));
        QVERIFY(QFile::resize(tmp.filePath("short.sqlite"), QFileInfo(tmp.filePath("short.sqlite")).size() - 1));
        Result r = run({"run", "s.json", "--out", "short.sqlite"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("the results store is damaged") && r.err.contains("cut short"), qPrintable(r.err));
    }
    void a_run_under_an_address_space_limit() {
        // Packet storage once reserved the machine's whole memory in address space, so under `ulimit -v` every
        // packet-level run failed with an internal error.
        QTemporaryDir tmp;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 5}, {"size", "1MB"}}}}}}};
        std::ofstream(tmp.filePath("s.json").toStdString()) << doc.dump(1);
        QProcess p;
        p.setWorkingDirectory(tmp.path());
        p.start("/bin/sh", {"-c", QString("ulimit -v 3000000 && exec '%1' run s.json --out r.sqlite").arg(ORRERY_CLI)});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }
    void a_killed_run_not_yet_reaped_is_interrupted() {
        // The run's process killed while its parent does not reap it (a zombie): the next writer marks it.
        QTemporaryDir tmp;
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 128; ++i) flows.push_back({{"src", i}, {"dst", (i + 1) % 128}, {"size", "20MB"}});
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 8}}},
                              {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        std::ofstream(tmp.filePath("long.json").toStdString()) << doc.dump(1);
        QProcess parent;  // a shell that starts the run, then becomes `sleep`, which never reaps it
        parent.setWorkingDirectory(tmp.path());
        parent.start("/bin/sh", {"-c", QString("'%1' run long.json --out z.sqlite --progress-json 2>err.txt & echo $!; exec sleep 120").arg(ORRERY_CLI)});
        QVERIFY(parent.waitForReadyRead(10000));
        const qint64 pid = parent.readLine().trimmed().toLongLong();
        QVERIFY(pid > 0);
        QElapsedTimer t;
        t.start();
        auto started = [&] {
            QFile err(tmp.filePath("err.txt"));
            return err.open(QIODevice::ReadOnly) && err.readAll().contains("\"event\":\"progress\"");
        };
        while (!started() && t.elapsed() < 60000) QThread::msleep(50);
        QVERIFY(started());
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QThread::msleep(200);
        QVERIFY(QFile(QString("/proc/%1/stat").arg(pid)).exists());  // a zombie: gone, not reaped
        doc["workload"]["flows"] = {{{"src", 0}, {"dst", 1}, {"size", "10KB"}}};
        std::ofstream(tmp.filePath("short.json").toStdString()) << doc.dump(1);
        QCOMPARE(run({"run", "short.json", "--out", "z.sqlite"}, tmp.path()).code, 0);
        parent.kill();
        parent.waitForFinished();
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open_v2(tmp.filePath("z.sqlite").toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
        sqlite3_stmt* q = nullptr;
        QCOMPARE(sqlite3_prepare_v2(db, "SELECT status FROM runs ORDER BY run_id", -1, &q, nullptr), SQLITE_OK);
        QStringList statuses;
        while (sqlite3_step(q) == SQLITE_ROW) statuses << reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
        sqlite3_close(db);
        QCOMPARE(statuses, (QStringList{"interrupted", "finished"}));
    }
    void inputs_too_big_for_the_machine_are_refused_at_once() {
        QTemporaryDir tmp;
        auto write = [&](const char* name, const nlohmann::json& doc) { std::ofstream(tmp.filePath(name).toStdString()) << doc.dump(); };
        const nlohmann::json base = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                                     {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 5}, {"size", "1MB"}}}}}}};
        // A sweep of 10^9 experiments: refused before expanding (it once spent 16-40 s and 5-7 GB on the way to bad_alloc).
        nlohmann::json sweep = base;
        for (const char* path : {"workload.flows[0].size", "cc.dcqcn.rate_ai", "network.buffer_per_switch"}) {
            nlohmann::json values = nlohmann::json::array();
            for (int i = 1; i <= 1000; ++i) values.push_back(std::to_string(i) + (std::string(path) == "cc.dcqcn.rate_ai" ? "Mbps" : "KB"));
            sweep["sweep"]["parameters"].push_back({{"path", path}, {"values", values}});
        }
        write("sweep.json", sweep);
        QElapsedTimer t;
        t.start();
        Result r = run({"validate", "sweep.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(first_error_line(r.err).contains("the sweep makes 1000000000 experiments"), qPrintable(r.err));
        // A 65,536-leaf leaf-spine: its routing tables are estimated (20 GiB) and refused when they exceed
        // three quarters of this machine's memory (on a machine with more, it would be built).
        nlohmann::json wide = base;
        wide["topology"] = {{"generator", "leaf-spine"}, {"leaves", 65536}, {"spines", 2}, {"hosts_per_leaf", 2}};
        write("wide.json", wide);
        r = run({"validate", "wide.json"}, tmp.path());
        if (r.code == 1) QVERIFY2(first_error_line(r.err).contains("routing tables for 65538 forwarding nodes × 65536 destination groups would need about 20.0 GiB"), qPrintable(r.err));
        else qInfo("this machine has memory for the 65,536-leaf fabric's routing tables");
        // 100,000 micro-batches: the task graph is estimated from two small builds and refused at once (it once
        // ran a minute to std::bad_alloc at 10 GB), by validate and by run.
        nlohmann::json many = {{"format", "orrery-scenario"}, {"version", 1},
                               {"topology", {{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}}},
                               {"workload", {{"kind", "llm"}, {"model", {{"preset", "gpt3-13b"}}}, {"network_mode", "flow"},
                                             {"parallel", {{"tp", 8}, {"pp", 2}, {"micro_batches", 100000}}}}}};
        write("many.json", many);
        for (const char* command : {"validate", "run"}) {
            r = run({command, "many.json"}, tmp.path());
            QCOMPARE(r.code, 1);
            QVERIFY2(first_error_line(r.err).startsWith("many.json: workload.parallel.micro_batches: error: the task graph of 100000 micro-batches (about ") ||
                         first_error_line(r.err).startsWith("workload.parallel.micro_batches: error: the task graph of 100000 micro-batches (about "),
                     qPrintable(r.err));
        }
        QVERIFY(!QFile::exists(tmp.filePath("results.sqlite")));
        QVERIFY2(t.elapsed() < 20000, qPrintable(QString::number(t.elapsed()) + " ms"));
        // A 10^18-byte flow: beyond the 32-bit sequence numbers, and a warning that no stop time ends the run.
        nlohmann::json huge = base;
        huge["workload"]["flows"][0]["size"] = "1000000000000000000B";
        write("huge.json", huge);
        r = run({"validate", "huge.json"}, tmp.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("huge.json: workload: warning: no stop time (workload.stop_time)"), qPrintable(r.err));
        QVERIFY2(first_error_line(r.err).contains("the packet model's sequence numbers are 32-bit"), qPrintable(r.err));
    }
    void run_hpcc_seed_draws_another_sample_of_random_marks() {
        // DCQCN incast (marks at random between Kmin and Kmax): the same seed gives the same files, byte for
        // byte; another seed another sample. The seed is stored with the run.
        QTemporaryDir tmp;
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference/ns3-hpcc";
        for (const char* f : {"config_incast_dcqcn.txt", "topology.txt", "flow_incast.txt", "trace.txt"})
            QVERIFY(QFile::copy(ref + "/" + f, tmp.filePath(f)));
        auto fct_after = [&](const QStringList& extra) {
            Result r = run(QStringList{"run-hpcc", "config_incast_dcqcn.txt", "--force"} + extra, tmp.path());
            if (r.code != 0) qWarning("%s", qPrintable(r.err));
            QFile f(tmp.filePath("fct_incast_dcqcn.txt"));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray first = fct_after({}), seed1 = fct_after({"--seed", "1"}), seed2 = fct_after({"--seed", "2"});
        QCOMPARE(first.count('\n'), 15);
        QCOMPARE(seed1, first);  // 1 is the default
        QCOMPARE(seed2.count('\n'), 15);
        QVERIFY(seed2 != first);
        QCOMPARE(fct_after({"--seed", "2"}), seed2);
        Result stored = run({"run-hpcc", "config_incast_dcqcn.txt", "--force", "--seed", "7", "--out", "s.sqlite"}, tmp.path());
        QCOMPARE(stored.code, 0);
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(tmp.filePath("s.sqlite").toUtf8().constData(), &db), SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        QCOMPARE(sqlite3_prepare_v2(db, "SELECT seed FROM experiments", -1, &st, nullptr), SQLITE_OK);
        QCOMPARE(sqlite3_step(st), SQLITE_ROW);
        QCOMPARE(sqlite3_column_int64(st, 0), sqlite3_int64(7));
        sqlite3_finalize(st);
        sqlite3_close(db);
        QCOMPARE(run({"run-hpcc", "config_incast_dcqcn.txt", "--force", "--seed", "-1"}, tmp.path()).code, 2);
    }
    void drops_with_pfc_on_are_explained() {
        // test_net's paused senders that keep receiving (acks_in_the_control_queue_stay_out_of_a_paused_class): with ACKs
        // in the data's class the leaf drops, and the run says why and what setting stops it; with "control" nothing
        // drops and nothing is said.
        QTemporaryDir tmp;
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 7; ++i) flows.push_back({{"src", i}, {"dst", 8}, {"size", "4MB"}});
        for (int i = 0; i < 6; ++i) flows.push_back({{"src", 9 + i}, {"dst", i}, {"size", "4MB"}});
        const nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "acks"},
            {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 8},
                          {"link_defaults", {{"all", {{"rate", "100Gbps"}, {"delay", "1us"}}}}}}},
            {"network", {{"buffer_per_switch", "1MiB"}, {"pfc", {{"resume_offset", "1MB"}}}}},
            {"cc", {{"algorithm", "fixed"}, {"ack_high_priority", true}}},
            {"workload", {{"kind", "flows"}, {"flows", flows}}},
            {"sweep", {{"parameters", {{{"path", "network.ack.switch_queue"}, {"values", {"data", "control"}}}}}}}};
        std::ofstream(tmp.filePath("acks.json").toStdString()) << doc.dump(1);
        const Result r = run({"run", "acks.json", "--out", "r.sqlite", "--json"}, tmp.path());
        QCOMPARE(r.code, 0);
        const nlohmann::json summary = summary_lines(r.out);
        QVERIFY(summary[0]["drops"]["value"].get<double>() > 0);
        QCOMPARE(summary[1]["drops"]["value"].get<double>(), 0.0);
        QVERIFY2(r.err.contains("e0000: ") && r.err.contains("dropped although PFC is on") && r.err.contains("network.ack.switch_queue"), qPrintable(r.err));
        QVERIFY2(!r.err.contains("e0001: "), qPrintable(r.err));
    }
    void conversions_round_trip_and_never_overwrite() {
        QTemporaryDir tmp;
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference/ns3-hpcc";
        const QString json = tmp.filePath("incast.json"), config = tmp.filePath("again.txt");
        QCOMPARE(run({"convert", ref + "/config_incast_hpcc.txt", "-o", json}, ref).code, 0);
        QCOMPARE(run({"validate", json}).code, 0);
        QCOMPARE(run({"convert", json, "-o", config}).code, 0);
        QVERIFY(QFile::exists(tmp.filePath("again_topology.txt")));
        QCOMPARE(run({"validate", config}, tmp.path()).code, 0);
        {  // What the reference's config.txt cannot say is refused by its field, and nothing is written.
            std::ifstream in(json.toStdString());
            nlohmann::json doc = nlohmann::json::parse(in);
            doc["network"]["ack"]["switch_queue"] = "control";
            std::ofstream(tmp.filePath("acks.json").toStdString()) << doc.dump();
            const Result refused = run({"convert", tmp.filePath("acks.json"), "-o", tmp.filePath("acks.txt")});
            QCOMPARE(refused.code, 1);
            QVERIFY2(refused.err.contains("network.ack.switch_queue"), qPrintable(refused.err));
            QVERIFY(!QFile::exists(tmp.filePath("acks.txt")));
        }
        // The topology written back is the reference file, byte for byte.
        QFile a(ref + "/topology.txt"), b(tmp.filePath("again_topology.txt"));
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(b.readAll(), a.readAll());
        // A second conversion to the same name refuses and leaves the file as it was.
        QFile before(json);
        QVERIFY(before.open(QIODevice::ReadOnly));
        const QByteArray original = before.readAll();
        before.close();
        Result again = run({"convert", ref + "/config_incast_dcqcn.txt", "-o", json}, ref);
        QCOMPARE(again.code, 1);
        QVERIFY(again.err.contains("already exists; not overwriting it"));
        QVERIFY(before.open(QIODevice::ReadOnly));
        QCOMPARE(before.readAll(), original);
        for (const char* ext : {"graphml", "dot", "json"}) {
            const QString out = tmp.filePath(QString("fabric.") + ext);
            QCOMPARE(run({"convert", ref + "/topology.txt", "-o", out}).code, 0);
            const QString txt = tmp.filePath(QString("back_") + ext + ".txt");
            QCOMPARE(run({"convert", out, "-o", txt, "--to", "hpcc"}).code, 0);
            QFile c(txt);
            QVERIFY(c.open(QIODevice::ReadOnly));
            QVERIFY(a.seek(0));
            QCOMPARE(c.readAll(), a.readAll());
        }
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
