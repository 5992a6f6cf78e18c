// orrery-cli run under mpirun (OpenMPI, --oversubscribe on localhost): a sweep over 2 and 3 ranks stores
// exactly what one process stores (but wall times and the rank count), for a flow sweep and an LLM sweep with
// queue samples and timelines; so does one experiment partitioned over 2 and 3 ranks (k = 8 and k = 16
// fat-trees, --partition), but for rank 0's engine memory; a rank killed mid-run ends the run with the
// experiments lost named and what finished kept.
#include <QtTest>

#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "telemetry/results_store.h"

namespace {

struct Result {
    int code;
    QString out, err;
};

QProcessEnvironment mpi_environment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");  // CI containers run as root; OpenMPI refuses that otherwise
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    env.insert("OMPI_MCA_rmaps_base_oversubscribe", "1");
    return env;
}

Result run(const QStringList& args, const QString& dir, int ranks) {
    QProcess p;
    p.setWorkingDirectory(dir);
    p.setProcessEnvironment(mpi_environment());
    if (ranks == 0) p.start(ORRERY_CLI, args);
    else p.start(ORRERY_MPIEXEC, QStringList{"--oversubscribe", "-n", QString::number(ranks), ORRERY_CLI} + args);
    p.waitForFinished(300000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

std::vector<std::string> query(sqlite3* db, const std::string& sql) {
    std::vector<std::string> rows;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return {"error: " + std::string(sqlite3_errmsg(db))};
    while (sqlite3_step(s) == SQLITE_ROW) {
        std::string row;
        for (int c = 0; c < sqlite3_column_count(s); ++c) {
            const unsigned char* t = sqlite3_column_text(s, c);
            if (c) row += '|';
            row += t ? reinterpret_cast<const char*>(t) : "NULL";
        }
        rows.push_back(row);
    }
    sqlite3_finalize(s);
    return rows;
}

// Every row of every experiment table, sorted, without run ids, wall times, or the run record itself; with
// `engine_memory` false, without that metric either (a partitioned run records rank 0's memory).
std::vector<std::string> contents(const QString& file, bool engine_memory = true) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(file.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    std::vector<std::string> all;
    for (const std::string& table : query(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('runs', 'orrery_store', 'sqlite_sequence') ORDER BY name")) {
        std::vector<std::string> columns;
        for (const std::string& row : query(db, "SELECT name FROM pragma_table_info('" + table + "')"))
            if (row != "run_id" && row != "wall_seconds") columns.push_back(row);
        std::string list;
        for (const std::string& c : columns) list += (list.empty() ? "" : ", ") + c;
        std::string where = table != "metrics" ? "" : engine_memory ? " WHERE name NOT IN ('wall_time', 'wall_time_s')" : " WHERE name NOT IN ('wall_time', 'wall_time_s', 'engine_memory')";
        for (const std::string& row : query(db, "SELECT " + list + " FROM " + table + where + " ORDER BY " + list)) all.push_back(table + ": " + row);
    }
    sqlite3_close(db);
    return all;
}

std::string run_field(const QString& file, const std::string& column) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(file.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    const std::vector<std::string> rows = query(db, "SELECT " + column + " FROM runs");
    sqlite3_close(db);
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
}

nlohmann::json ring_sweep(const std::string& size) {
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < 16; ++i) flows.push_back({{"src", i}, {"dst", (i + 5) % 16}, {"size", size}});
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "ring sweep"},
            {"topology", {{"preset", "fat-tree-k4"}}}, {"network", {{"preset", "reference-100g"}}}, {"cc", {{"preset", "dcqcn-100g"}}},
            {"workload", {{"kind", "flows"}, {"flows", flows}}},
            {"output", {{"record", {"fct", "queues"}}, {"sample_interval", "20us"}}},
            {"sweep", {{"parameters", {{{"path", "cc.algorithm"}, {"values", {"dcqcn", "hpcc", "timely", "dctcp"}}},
                                       {{"path", "cc.min_rate"}, {"values", {"100Mbps", "1Gbps"}}}}}}}};
}

// A k-ary fat-tree: a shifted permutation of mixed sizes with staggered starts, and an incast to host 0 that
// makes switches pause (PFC); flows, PFC events and queue samples recorded. `ccs` sweeps the CC.
nlohmann::json fat_tree_load(int k, int max_size, const std::vector<std::string>& ccs) {
    const int hosts = k * k * k / 4;
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i)
        flows.push_back({{"src", i}, {"dst", (i + hosts / 2 + 1) % hosts}, {"size", std::to_string(20000 + (i * 7919) % max_size) + "B"},
                         {"start", std::to_string((i * 37) % 500) + "ns"}});
    for (int i = 1; i < hosts; i += 2 * k) flows.push_back({{"src", i}, {"dst", 0}, {"size", "150KB"}, {"start", "2us"}});
    nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "partitioned fat-tree"},
                          {"topology", {{"generator", "fat-tree"}, {"k", k}}}, {"network", {{"buffer_per_switch", std::to_string(75 * k) + "KB"}}},
                          {"cc", {{"algorithm", ccs.front()}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}},
                          {"output", {{"record", {"fct", "pfc", "queues"}}, {"sample_interval", "50us"}}}};
    if (ccs.size() > 1) doc["sweep"] = {{"parameters", {{{"path", "cc.algorithm"}, {"values", ccs}}}}};
    return doc;
}

}  // namespace

class TestMpi : public QObject {
    Q_OBJECT
private slots:
    void flow_sweep_over_ranks_stores_what_one_process_stores() {
        QTemporaryDir tmp;
        std::ofstream(tmp.filePath("ring.json").toStdString()) << ring_sweep("400KB").dump(1);
        const Result one = run({"run", "ring.json", "--out", "one.sqlite"}, tmp.path(), 0);
        QVERIFY2(one.code == 0, qPrintable(one.err));
        // Without engine_memory: one process runs the sweep as one batch, whose HPCC experiments make every packet
        // slot a whole line, while a rank runs each experiment alone, in half-line slots unless it is HPCC's
        // (net/blocks.h); every result is the same either way.
        const std::vector<std::string> expected = contents(tmp.filePath("one.sqlite"), false);
        QVERIFY(expected.size() > 8 * 16);  // 8 experiments' flows, queue samples, metrics
        for (int ranks : {2, 3}) {
            const QString store = QString("ranks%1.sqlite").arg(ranks);
            const Result r = run({"run", "ring.json", "--out", store, "--json"}, tmp.path(), ranks);
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QCOMPARE(contents(tmp.filePath(store), false), expected);
            QCOMPARE(run_field(tmp.filePath(store), "ranks"), std::to_string(ranks));
            QCOMPARE(run_field(tmp.filePath(store), "status"), std::string("finished"));
            // Only rank 0 prints: one summary per experiment, one line per experiment naming its rank.
            QCOMPARE(r.out.count('\n'), 8);
            QCOMPARE(r.err.count(" on rank "), 8);
            QVERIFY2(r.err.contains(QString("8 experiments finished on %1 ranks").arg(ranks)), qPrintable(r.err));
        }
        QCOMPARE(run_field(tmp.filePath("one.sqlite"), "ranks"), std::string("1"));
    }

    void llm_sweep_over_ranks_stores_what_one_process_stores() {
        QTemporaryDir tmp;
        const nlohmann::json doc = {
            {"format", "orrery-scenario"}, {"version", 1}, {"name", "llm sweep"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", 32}, {"gpus_per_server", 8}, {"tiers", 2},
                          {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}}},
            {"network", {{"preset", "reference-400g"}}}, {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", {{"kind", "llm"}, {"network_mode", "packet"},
                          {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
                          {"parallel", {{"tp", 8}, {"pp", 2}, {"dp", 2}, {"micro_batches", 2}}}}},
            {"output", {{"record", {"fct", "queues"}}, {"sample_interval", "10us"}}},
            {"sweep", {{"parameters", {{{"path", "workload.collectives.algorithm"}, {"values", {"ring", "tree"}}},
                                       {{"path", "workload.framework_overhead"}, {"values", {"4GB", "90GB"}}}}}}}};
        std::ofstream(tmp.filePath("llm.json").toStdString()) << doc.dump(1);
        const Result one = run({"run", "llm.json", "--out", "one.sqlite"}, tmp.path(), 0);
        QVERIFY2(one.code == 0, qPrintable(one.err));
        const std::vector<std::string> expected = contents(tmp.filePath("one.sqlite"));
        bool has_timeline = false, has_oom = false;
        for (const std::string& row : expected) has_timeline |= row.rfind("timeline: ", 0) == 0, has_oom |= row.find("|oom|") != std::string::npos;
        QVERIFY(has_timeline && has_oom);
        const Result two = run({"run", "llm.json", "--out", "two.sqlite"}, tmp.path(), 2);
        QVERIFY2(two.code == 0, qPrintable(two.err));
        QCOMPARE(contents(tmp.filePath("two.sqlite")), expected);
    }

    void partitioned_runs_store_what_one_process_stores() {
        // k = 8 (a sweep of two CCs in one batch) and k = 16, each on 2 and 3 ranks: every stored row equal
        // to one process's but the engine memory (rank 0's), and each rank's share printed.
        struct Case {
            int k, max_size;
            std::vector<std::string> ccs;
        };
        for (const Case& c : {Case{8, 180000, {"dcqcn", "hpcc"}}, Case{16, 60000, {"timely"}}}) {
            QTemporaryDir tmp;
            std::ofstream(tmp.filePath("fat.json").toStdString()) << fat_tree_load(c.k, c.max_size, c.ccs).dump();
            const Result one = run({"run", "fat.json", "--out", "one.sqlite"}, tmp.path(), 0);
            QVERIFY2(one.code == 0, qPrintable(one.err));
            const std::vector<std::string> expected = contents(tmp.filePath("one.sqlite"), false);
            size_t pfc = 0, samples = 0;
            for (const std::string& row : expected) pfc += row.rfind("pfc", 0) == 0, samples += row.rfind("queue", 0) == 0;
            QVERIFY2(pfc > 0 && samples > 0, qPrintable(QString("%1 PFC rows, %2 queue rows").arg(pfc).arg(samples)));
            for (int ranks : {2, 3}) {
                const QString store = QString("partitioned%1.sqlite").arg(ranks);
                const Result r = run({"run", "fat.json", "--partition", "--out", store}, tmp.path(), ranks);
                QVERIFY2(r.code == 0, qPrintable(r.err));
                QCOMPARE(contents(tmp.filePath(store), false), expected);
                QCOMPARE(run_field(tmp.filePath(store), "ranks"), std::to_string(ranks));
                QCOMPARE(run_field(tmp.filePath(store), "status"), std::string("finished"));
                for (int rank = 0; rank < ranks; ++rank)
                    QVERIFY2(r.err.contains(QRegularExpression(QString("rank %1: \\d+ nodes, \\d+ boundary rings").arg(rank))), qPrintable(r.err));
                QVERIFY2(r.err.contains("KiB per step") && r.err.contains("waiting at step boundaries"), qPrintable(r.err));
            }
        }
    }

    void partition_refuses_what_it_does_not_split() {
        QTemporaryDir tmp;
        nlohmann::json skipping = fat_tree_load(4, 50000, {"dcqcn"});
        skipping["skipping"] = {{"enabled", true}};
        std::ofstream(tmp.filePath("skip.json").toStdString()) << skipping.dump();
        std::ofstream(tmp.filePath("fat.json").toStdString()) << fat_tree_load(4, 50000, {"dcqcn"}).dump();
        struct Refusal {
            QStringList args;
            const char* names;
        };
        for (const Refusal& c : {Refusal{{"run", "workbench-demo", "--partition", "--out", "x.sqlite"}, "workload.kind"},
                                 Refusal{{"run", "skip.json", "--partition", "--out", "x.sqlite"}, "skipping.enabled"},
                                 Refusal{{"run", "fat.json", "--partition", "--threads", "2", "--out", "x.sqlite"}, "--threads"}}) {
            const Result r = run(c.args, tmp.path(), 2);
            QVERIFY2(r.code != 0, qPrintable(c.args.join(' ')));
            QVERIFY2(r.err.contains(c.names) && r.err.contains("--partition"), qPrintable(r.err));
            QVERIFY(!QFile::exists(tmp.filePath("x.sqlite")));
        }
        // The Slurm script takes the same choice and the same refusals.
        Result w = run({"slurm", "fat.json", "--partition", "--threads", "2"}, tmp.path(), 0);
        QVERIFY2(w.code == 1 && w.err.contains("--threads"), qPrintable(w.err));
        w = run({"slurm", "fat.json", "--partition", "--nodes", "4"}, tmp.path(), 0);
        QVERIFY2(w.code == 0 && w.out.contains(" --threads 1 --partition\n") && w.out.contains("#SBATCH --nodes=4\n"), qPrintable(w.out + w.err));
    }

    void slurm_script_runs_the_sweep_with_srun() {
        // The script `orrery-cli slurm` writes, run by bash with an `srun` that launches its command line with
        // mpirun on this machine, as Slurm would on two nodes of one rank each.
        QTemporaryDir tmp;
        std::ofstream(tmp.filePath("ring.json").toStdString()) << ring_sweep("200KB").dump(1);
        Result w = run({"slurm", "ring.json", "--nodes", "2", "--ranks-per-node", "1", "--time", "00:10:00", "-o", "job.sh", "--out", "s.sqlite"}, tmp.path(), 0);
        QVERIFY2(w.code == 0, qPrintable(w.err));
        QFile file(tmp.filePath("job.sh"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString script = QString::fromUtf8(file.readAll());
        for (const char* line : {"#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=1\n", "#SBATCH --time=00:10:00\n", "srun --mpi=pmix "})
            QVERIFY2(script.contains(line), qPrintable(script));
        QVERIFY2(script.contains(tmp.filePath("ring.json")) && script.contains(tmp.filePath("s.sqlite")), qPrintable(script));
        // A second time without --force: the script is kept.
        w = run({"slurm", "ring.json", "-o", "job.sh"}, tmp.path(), 0);
        QCOMPARE(w.code, 1);
        std::ofstream(tmp.filePath("srun").toStdString()) << "#!/bin/bash\nshift\nexec " << ORRERY_MPIEXEC << " --oversubscribe -n 2 \"$@\"\n";
        QFile::setPermissions(tmp.filePath("srun"), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QProcess bash;
        QProcessEnvironment env = mpi_environment();
        env.insert("PATH", tmp.path() + ":" + env.value("PATH"));
        bash.setProcessEnvironment(env);
        bash.setWorkingDirectory(tmp.path());
        bash.start("bash", {"job.sh"});
        QVERIFY(bash.waitForFinished(120000));
        QVERIFY2(bash.exitCode() == 0, qPrintable(QString::fromUtf8(bash.readAllStandardError())));
        QCOMPARE(run_field(tmp.filePath("s.sqlite"), "ranks"), std::string("2"));
        QCOMPARE(run_field(tmp.filePath("s.sqlite"), "status"), std::string("finished"));
    }

    void a_rank_that_dies_ends_the_run_naming_what_was_lost() {
        // Eight experiments of 1-2 s each on 3 ranks; rank 2 is killed once the first has been stored. (With
        // 20 MB flows, 0.25-0.45 s each on a faster machine, the other ranks had finished the sweep by then.)
        QTemporaryDir tmp;
        std::ofstream(tmp.filePath("ring.json").toStdString()) << ring_sweep("100MB").dump(1);
        QProcess p;
        p.setWorkingDirectory(tmp.path());
        p.setProcessEnvironment(mpi_environment());
        p.start(ORRERY_MPIEXEC, {"--oversubscribe", "-n", "3", ORRERY_CLI, "run", "ring.json", "--out", "s.sqlite"});
        QVERIFY(p.waitForStarted());
        QString err;
        QElapsedTimer clock;
        clock.start();
        while (!err.contains("[1/8]") && p.state() == QProcess::Running && clock.elapsed() < 120000) {
            p.waitForReadyRead(200);
            err += QString::fromUtf8(p.readAllStandardError());
        }
        QVERIFY2(err.contains("[1/8]"), qPrintable(err));
        // The ranks are mpirun's children; the last started is rank 2 (OpenMPI starts them in rank order).
        QProcess children;
        children.start("pgrep", {"-P", QString::number(p.processId()), "-f", "orrery-cli"});
        children.waitForFinished();
        const QStringList pids = QString::fromUtf8(children.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(pids.size(), 3);
        ::kill(pids.last().toInt(), SIGKILL);
        p.waitForFinished(60000);
        err += QString::fromUtf8(p.readAllStandardError());
        QVERIFY(p.exitCode() != 0);
        QVERIFY2(err.contains("error: the MPI job was stopped") && err.contains("lost:"), qPrintable(err));
        QVERIFY2(err.contains("(rank 2)"), qPrintable(err));
        // What finished before is stored, and the run does not stay "running".
        sqlite3* db = nullptr;
        sqlite3_open_v2(tmp.filePath("s.sqlite").toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
        const std::vector<std::string> finished = query(db, "SELECT count(*) FROM experiments WHERE status = 'finished'");
        const std::vector<std::string> with_flows =
            query(db, "SELECT count(*) FROM experiments e WHERE status = 'finished' AND (SELECT count(*) FROM flows f WHERE f.experiment = e.experiment) = 16");
        sqlite3_close(db);
        QVERIFY(std::stoi(finished.at(0)) >= 1);
        QCOMPARE(with_flows.at(0), finished.at(0));
        // Rank 0 marks the run cancelled, unless mpirun's SIGKILL (milliseconds after its SIGTERM once a second
        // rank is gone) comes first: then the next writer finds its process gone and marks it interrupted.
        const std::string status = run_field(tmp.filePath("s.sqlite"), "status");
        QVERIFY2(status == "cancelled" || status == "running", status.c_str());
        if (status == "running") {
            // The killed rank 0 may still be a zombie for a moment (mpirun's child, reaped once mpirun is gone).
            for (int tries = 0; tries < 30 && run_field(tmp.filePath("s.sqlite"), "status") == "running"; ++tries) {
                { orrery::ResultsStore reopened(tmp.filePath("s.sqlite").toStdString()); }
                QTest::qWait(100);
            }
            QCOMPARE(run_field(tmp.filePath("s.sqlite"), "status"), std::string("interrupted"));
        }
    }
};

QTEST_GUILESS_MAIN(TestMpi)
#include "test_mpi.moc"
