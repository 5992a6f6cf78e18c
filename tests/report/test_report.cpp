// The comparison report (engine/report): numbers rounded with their units, the summary's ranking and ties, the
// charts drawn from the store's own rows, and `orrery-cli report` writing HTML, PDF and CSV or refusing clearly.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include "cli/cli_process.h"
#include "report/chart.h"
#include "report/report.h"
#include "views/results/report_pdf.h"
#include "report/report_text.h"

using namespace orrery::report;
using namespace orrery::views;

namespace {

using Result = orrery::testing::CliResult;

Result cli(const QStringList& args, const QString& dir) { return orrery::testing::run_cli(args, dir); }

QString read_all(const QString& file) {
    QFile f(file);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// A table of three experiments that differ in one parameter, with an iteration time and its parts.
ResultsTable three_designs(double a, double b, double c) {
    ResultsTable t;
    t.parameter_paths = {"cc.algorithm"};
    t.parameter_differs = {true};
    t.metrics = {{"iteration_time", "s"}, {"exposed_dp_mean_per_rank", "s"}, {"compute_mean_per_rank", "s"}};
    const double it[] = {a, b, c};
    const char* cc[] = {"dcqcn", "hpcc", "timely"};
    for (int i = 0; i < 3; ++i)
        t.rows.push_back({"e000" + std::to_string(i), "ok", "", {cc[i]}, {it[i], it[i] - 0.5, 0.5}, {}, {}});  // the DP part carries the difference
    return t;
}

std::vector<std::string> summary_of(const ResultsTable& t, int baseline, double tie) {
    Report r;
    r.table = t;
    compose_report(r, baseline);
    SummaryInput in;
    in.table = &r.table;
    in.labels = r.labels;
    in.baseline = baseline;
    in.tie = tie;
    return summarize(in);
}

std::vector<std::vector<double>> query_doubles(const QString& store, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
    std::vector<std::vector<double>> rows;
    while (sqlite3_step(s) == SQLITE_ROW) {
        std::vector<double> row;
        for (int c = 0; c < sqlite3_column_count(s); ++c) row.push_back(sqlite3_column_double(s, c));
        rows.push_back(row);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rows;
}

}  // namespace

class TestReport : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;
    QString store_;

private slots:
    // One run of the bundled demo (an incast under four CCs, 0.1 s) serves the tests that read a real store.
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        store_ = tmp_.filePath("demo.sqlite");
        const Result r = cli({"run", QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json", "--out", store_}, tmp_.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
    }

    void values_print_rounded_in_a_unit_that_suits_them() {
        QCOMPARE(format_value(0.061027826001, "s"), std::string("61.03 ms"));
        QCOMPARE(format_value(757.256479, "us"), std::string("757.3 µs"));
        QCOMPARE(format_value(2117.859, "us"), std::string("2.118 ms"));
        QCOMPARE(format_value(3.5e-7, "s"), std::string("350 ns"));
        QCOMPARE(format_value(176, "B"), std::string("176 B"));
        QCOMPARE(format_value(6209536, "B"), std::string("5.922 MiB"));
        QCOMPARE(format_value(1.95, "MiB"), std::string("1.95 MiB"));
        QCOMPARE(format_value(1536, "flows"), std::string("1536 flows"));
        QCOMPARE(format_value(3228160, "events"), std::string("3.228 M events"));
        QCOMPARE(format_value(0.985354953649183, "ratio", "events_skipped_share"), std::string("98.5 %"));
        QCOMPARE(format_value(1.97201555658236, "ratio", "slowdown_mean"), std::string("1.972×"));
        QCOMPARE(format_percent(0.0513921, true), std::string("+5.1 %"));
        QCOMPARE(format_percent(-0.0481), std::string("−4.8 %"));
        QCOMPARE(metric_label("fct_p99"), std::string("p99 FCT"));
        QCOMPARE(metric_label("exposed_dp_mean_per_rank"), std::string("exposed DP communication, mean per rank"));
    }

    // The winner is named with its parameter, by how much it wins (relative to the worst), and the part of the
    // iteration that makes the difference; a baseline sentence gives each experiment's signed difference.
    void the_summary_names_the_winner_by_how_much_and_why() {
        const std::vector<std::string> s = summary_of(three_designs(1.10, 1.00, 1.20), 0, 0.005);
        QVERIFY(s.size() >= 3);
        const QString first = QString::fromStdString(s[0]);
        QVERIFY2(first.startsWith("Best design: hpcc (e0001), with the lowest iteration time (1 s, "), qPrintable(first));
        QVERIFY2(first.contains(QString::fromStdString(format_percent((1.20 - 1.00) / 1.20)) + " below the worst"), qPrintable(first));
        QVERIFY2(QString::fromStdString(s[1]).contains("exposed DP communication differs most: 500 ms against 700 ms in timely (e0002)"),
                 qPrintable(QString::fromStdString(s[1])));
        const QString baseline = QString::fromStdString(s.back());
        QVERIFY2(baseline.startsWith("Against the baseline dcqcn (e0000), iteration time: "), qPrintable(baseline));
        QVERIFY2(baseline.contains("hpcc (e0001) " + QString::fromStdString(format_percent((1.00 - 1.10) / 1.10, true))), qPrintable(baseline));
        QVERIFY2(baseline.contains("timely (e0002) " + QString::fromStdString(format_percent((1.20 - 1.10) / 1.10, true))), qPrintable(baseline));
    }

    // Differences inside the model's resolution are ties: two designs 0.2 % apart share the win, and three within
    // it make no winner at all.
    void differences_within_the_models_resolution_are_ties() {
        std::vector<std::string> s = summary_of(three_designs(1.002, 1.000, 1.20), -1, 0.005);
        QVERIFY2(QString::fromStdString(s[0]).startsWith("Best designs, tied within 0.5 %: hpcc (e0001) and dcqcn (e0000)"), s[0].c_str());
        s = summary_of(three_designs(1.002, 1.000, 1.004), 1, 0.005);
        QVERIFY2(QString::fromStdString(s[0]).startsWith("No design is better: the 3 experiments agree within 0.5 % on iteration time"), s[0].c_str());
        QVERIFY2(QString::fromStdString(s.back()).contains("dcqcn (e0000) the same within 0.5 %"), s.back().c_str());
        // The same spread with a tighter resolution is ranked.
        s = summary_of(three_designs(1.002, 1.000, 1.004), -1, 0.001);
        QVERIFY2(QString::fromStdString(s[0]).startsWith("Best design: hpcc (e0001)"), s[0].c_str());
    }

    // Replications: with the seed swept, designs are ranked by their mean over seeds, and a difference inside a
    // design's own seed-to-seed spread is a tie.
    void seeds_are_averaged_and_their_spread_is_a_tie() {
        auto table = [](double a1, double a2, double b1, double b2) {
            ResultsTable t;
            t.parameter_paths = {"cc.algorithm", "seed"};
            t.parameter_differs = {true, true};
            t.metrics = {{"iteration_time", "s"}};
            t.rows = {{"e0000", "ok", "", {"dcqcn", "1"}, {a1}, {}, {}}, {"e0001", "ok", "", {"dcqcn", "2"}, {a2}, {}, {}},
                      {"e0002", "ok", "", {"hpcc", "1"}, {b1}, {}, {}},  {"e0003", "ok", "", {"hpcc", "2"}, {b2}, {}, {}}};
            return t;
        };
        Report r;
        r.table = table(1.20, 1.22, 1.00, 1.02);
        compose_report(r, -1);
        QVERIFY2(r.summary[0].find("Best design: hpcc (2 seeds), with the lowest iteration time (1.01 s, ") == 0, r.summary[0].c_str());
        QVERIFY2(r.summary[0].find(format_percent((1.21 - 1.01) / 1.21) + " below the worst") != std::string::npos, r.summary[0].c_str());
        QVERIFY(r.summary.back().find("Each design is the mean over its seeds (2 here)") == 0);
        // 95 % intervals (t = 12.706 for two seeds): hpcc 1.01 ± 0.127 s, dcqcn 1.21 ± 0.127 s overlap, so "best"
        // is not claimed with confidence; with four seeds each the intervals stand apart.
        const std::string& ci = r.summary[r.summary.size() - 2];
        QVERIFY2(ci.find("95 % intervals of the mean iteration time over seeds: hpcc 1.01 s ± 127.1 ms; dcqcn 1.21 s ± 127.1 ms.") == 0, ci.c_str());
        QVERIFY2(ci.find("overlaps another's") != std::string::npos, ci.c_str());
        {
            ResultsTable t = table(1.20, 1.22, 1.00, 1.02);
            t.rows.push_back({"e0004", "ok", "", {"dcqcn", "3"}, {1.21}, {}, {}});
            t.rows.push_back({"e0005", "ok", "", {"hpcc", "3"}, {1.01}, {}, {}});
            Report four;
            four.table = t;
            compose_report(four, -1);
            const std::string& sure = four.summary[four.summary.size() - 2];
            QVERIFY2(sure.find("hpcc's interval stands apart from every other design's: it is best on iteration time with 95 % confidence") != std::string::npos,
                     sure.c_str());
        }
        QCOMPARE(r.short_labels[0], std::string("dcqcn, seed 1"));
        // dcqcn's seeds differ by 9 %: hpcc's 0.5 % lower mean is inside that spread.
        r.table = table(1.00, 1.10, 1.045, 1.045);
        compose_report(r, -1);
        QVERIFY2(r.summary[0].find("No design is better: the 2 designs agree") == 0, r.summary[0].c_str());
    }

    // One experiment has nothing to rank: the summary says what it gives and where its iteration goes.
    void one_experiment_says_what_it_gives() {
        ResultsTable t = three_designs(1.10, 1.00, 1.20);
        t.rows.resize(1);
        const std::vector<std::string> s = summary_of(t, -1, 0.005);
        QCOMPARE(s.size(), size_t(1));
        QVERIFY2(QString::fromStdString(s[0]).startsWith("One experiment, so nothing to compare: iteration time 1.1 s."), s[0].c_str());
        QVERIFY2(s[0].find("goes mostly to exposed DP communication (600 ms, mean over ranks)") != std::string::npos, s[0].c_str());
    }

    // The report of a real run: experiments named by the CC they differ in, every CDF ending at the largest FCT the
    // store holds, queue charts for the tiers that queued, and the run's SHA-256 in the reproducibility block.
    void a_report_reads_its_charts_from_the_stores_rows() {
        const Report r = read_report(store_.toStdString(), 0, "e0000");
        QCOMPARE(r.table.rows.size(), size_t(4));
        QCOMPARE(r.short_labels[1], std::string("hpcc-100g"));
        QCOMPARE(r.baseline, 0);
        QCOMPARE(r.fct_cdf.series.size(), size_t(4));
        const auto max_fct = query_doubles(store_, "SELECT experiment, max(fct_ps), count(*) FROM flows GROUP BY experiment ORDER BY experiment");
        QCOMPARE(max_fct.size(), size_t(4));
        const double factor = r.fct_cdf.x_label.find("(ms)") != std::string::npos ? 1e-9 : r.fct_cdf.x_label.find("(µs)") != std::string::npos ? 1e-6 : 1e-12;
        for (size_t i = 0; i < 4; ++i) {
            const auto& pts = r.fct_cdf.series[i].points;
            QCOMPARE(pts.back().second, 1.0);
            QVERIFY(std::is_sorted(pts.begin(), pts.end()));
            QVERIFY(std::fabs(pts.back().first - max_fct[i][1] * factor) < 1e-9 * pts.back().first);
        }
        // The queue chart's peak is the store's largest tier-1 sample, in the chart's unit.
        const auto peak = query_doubles(store_, "SELECT max(max_bytes) FROM queue_tiers WHERE tier = 1");
        QVERIFY(!r.queue_tiers.empty());
        double drawn = 0;
        for (const auto& s : r.queue_tiers[0].series)
            for (const auto& p : s.points) drawn = std::max(drawn, p.second);
        const double unit = r.queue_tiers[0].y_label.find("MiB") != std::string::npos ? 1024.0 * 1024 : r.queue_tiers[0].y_label.find("KiB") != std::string::npos ? 1024 : 1;
        QVERIFY2(std::fabs(drawn * unit - peak[0][0]) < 1e-6 * peak[0][0], qPrintable(QString("%1 against %2").arg(drawn * unit).arg(peak[0][0])));
        // The summary's winner is the experiment with the lowest mean FCT in the store.
        const auto fct = query_doubles(store_, "SELECT CAST(substr(experiment, 2) AS INTEGER), value FROM metrics WHERE name = 'fct_mean' ORDER BY value");
        const std::string winner = r.labels[size_t(fct[0][0])];
        QVERIFY2(r.summary[0].find(winner) != std::string::npos, r.summary[0].c_str());
        const std::string page = report_html(r);
        size_t svgs = 0;
        for (size_t at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) ++svgs;
        QCOMPARE(svgs, report_charts(r).size());
        QVERIFY(page.find(r.repro.scenario_sha256) != std::string::npos && r.repro.scenario_sha256.size() == 64);
        QVERIFY(page.find("+5.13921") == std::string::npos);
    }

    void the_cli_writes_html_pdf_and_csv() {
        Result r = cli({"report", store_, "-o", "r.html", "--baseline", "e0001"}, tmp_.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("Best design"), qPrintable(r.out));
        const QString html = read_all(tmp_.filePath("r.html"));
        QVERIFY(html.contains("<svg") && html.contains("baseline, hpcc-100g (e0001)"));
        // The workbench's report is the same page.
        QCOMPARE(html.toStdString(), report_html(read_report(store_.toStdString(), 0, "e0001")));
        r = cli({"report", store_, "-o", "r.csv"}, tmp_.path());
        QCOMPARE(r.code, 0);
        QVERIFY(read_all(tmp_.filePath("r.csv")).startsWith("experiment,status,cc.preset,"));
        r = cli({"report", store_, "-o", "r.pdf"}, tmp_.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("QStandardPaths"), qPrintable(r.err));
        QProcess info;
        info.start("pdfinfo", {tmp_.filePath("r.pdf")});
        if (!info.waitForFinished(30000) || info.exitCode() != 0) QSKIP("pdfinfo (poppler-utils) is not installed: installers/setup.sh installs it");
        const QString facts = QString::fromUtf8(info.readAllStandardOutput());
        QVERIFY2(facts.contains("595 x 842 pts (A4)"), qPrintable(facts));
        QProcess text;
        text.start("pdftotext", {tmp_.filePath("r.pdf"), "-"});
        QVERIFY(text.waitForFinished(30000));
        const QString words = QString::fromUtf8(text.readAllStandardOutput()).simplified();
        QVERIFY2(words.contains("Best design") && words.contains("Reproducibility"), qPrintable(words.left(400)));
    }

    void the_cli_refuses_what_it_cannot_write_and_keeps_what_exists() {
        Result r = cli({"report", store_, "-o", "r.txt"}, tmp_.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("r.txt") && r.err.contains(".html") && r.err.contains(".pdf"), qPrintable(r.err));
        QFile keep(tmp_.filePath("keep.html"));
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.write("mine");
        keep.close();
        r = cli({"report", store_, "-o", "keep.html"}, tmp_.path());
        QCOMPARE(r.code, 1);
        QCOMPARE(read_all(tmp_.filePath("keep.html")), QString("mine"));
        r = cli({"report", store_, "-o", "b.html", "--baseline", "e0099"}, tmp_.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("--baseline") && r.err.contains("e0099") && r.err.contains("e0000, e0001, e0002, e0003"), qPrintable(r.err));
        r = cli({"report", store_, "-o", "b.html", "--run", "7"}, tmp_.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("no run 7") && r.err.contains("runs: 1"), qPrintable(r.err));
        r = cli({"report", tmp_.filePath("r.csv"), "-o", "b.html"}, tmp_.path());
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("r.csv"), qPrintable(r.err));
        QVERIFY(!QFile::exists(tmp_.filePath("b.html")));
    }

    // A large sweep's line charts overlay a dozen experiments, the best and the worst among them; the tables keep
    // every one. The demo incast under 4 CCs × 4 seeds makes 16.
    void a_large_sweep_overlays_a_dozen_lines() {
        std::ifstream demo(std::string(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json");
        nlohmann::json doc = nlohmann::json::parse(demo);
        doc["sweep"]["seeds"] = {1, 2, 3, 4};
        std::ofstream(tmp_.filePath("sixteen.json").toStdString()) << doc.dump(1);
        const Result run = cli({"run", "sixteen.json", "--out", "sixteen.sqlite"}, tmp_.path());
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const Report r = read_report(tmp_.filePath("sixteen.sqlite").toStdString(), 0);
        QCOMPARE(r.table.rows.size(), size_t(16));
        QCOMPARE(r.fct_cdf.series.size(), size_t(12));
        QVERIFY2(r.fct_cdf.title.find("(12 of 16)") != std::string::npos, r.fct_cdf.title.c_str());
        const auto by_fct = query_doubles(tmp_.filePath("sixteen.sqlite"),
                                          "SELECT e.idx, m.value FROM metrics m JOIN experiments e USING (run_id, experiment) WHERE m.name = 'fct_mean' ORDER BY m.value, e.idx");
        QCOMPARE(by_fct.size(), size_t(16));
        std::set<std::string> drawn;
        for (const ChartSeries& series : r.fct_cdf.series) drawn.insert(series.label);
        QVERIFY(drawn.count(r.short_labels[size_t(by_fct.front()[0])]) && drawn.count(r.short_labels[size_t(by_fct.back()[0])]));
        QVERIFY(report_html(r).find("Line charts overlay 12 of the 16 experiments") != std::string::npos);
        QCOMPARE(r.table.rows.size(), r.labels.size());  // the tables: every experiment
    }

    // A failure study: a pod's permutation on the k=4 fat-tree, healthy and with one aggregation–core link down
    // at 50 µs, under ECMP and adaptive routing. The summary leads with what the failure cost each design (the
    // change its store's metrics give), names the failure as the scenario does and the links as the run resolved
    // them, and the queue charts mark the moment.
    void a_failure_sweep_says_what_the_failure_cost_each_design() {
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "failure"}, {"seed", 1},
                              {"topology", {{"preset", "fat-tree-k4"}}},
                              {"network", {{"preset", "reference-100g"}, {"nic", {{"retransmit_timeout", "200us"}}}, {"routing", {{"convergence", "100us"}}}}},
                              {"cc", {{"preset", "dcqcn-100g"}}},
                              {"output", {{"sample_interval", "5us"}}}};
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 0; h < 16; ++h) flows.push_back({{"src", h}, {"dst", (h + 4) % 16}, {"size", "1MB"}, {"start", "0us"}});
        doc["workload"] = {{"kind", "flows"}, {"flows", flows}};
        const nlohmann::json down = nlohmann::json::array({{{"at", "50us"}, {"link", {{"tiers", {2, 3}}, {"index", 0}}}, {"state", "down"}}});
        doc["sweep"] = {{"mode", "zip"},
                        {"parameters",
                         {{{"path", "topology.events"}, {"values", {nlohmann::json::array(), down, nlohmann::json::array(), down}}},
                          {{"path", "network.load_balancing"}, {"values", {"ecmp", "ecmp", "adaptive", "adaptive"}}},
                          {{"path", "network.nic.delivery"}, {"values", {"in_order", "in_order", "out_of_order", "out_of_order"}}}}}};
        std::ofstream(tmp_.filePath("failure.json").toStdString()) << doc.dump(1);
        const Result run = cli({"run", "failure.json", "--out", "failure.sqlite"}, tmp_.path());
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const Report r = read_report(tmp_.filePath("failure.sqlite").toStdString(), 0);
        QCOMPARE(r.table.rows.size(), size_t(4));
        QVERIFY2(r.short_labels[0].find("healthy fabric") != std::string::npos, r.short_labels[0].c_str());
        QVERIFY2(r.short_labels[1].find("link 0 between tiers 2 and 3 down from 50us") != std::string::npos, r.short_labels[1].c_str());
        // The first sentence: the failure's cost in mean and p99 FCT under each design, from the stored metrics.
        const std::string& first = r.summary.at(0);
        QVERIFY2(first.rfind("Link 0 between tiers 2 and 3 down from 50us: ", 0) == 0, first.c_str());
        const auto fct = query_doubles(tmp_.filePath("failure.sqlite"), "SELECT value FROM metrics WHERE name = 'fct_mean' ORDER BY experiment");
        QCOMPARE(fct.size(), size_t(4));
        for (const auto& [healthy, failed, design] : {std::tuple{0, 1, "ecmp"}, std::tuple{2, 3, "adaptive"}}) {
            const double d = (fct[size_t(failed)][0] - fct[size_t(healthy)][0]) / fct[size_t(healthy)][0];
            const std::string said = std::fabs(d) < r.tie ? "the same within" : format_percent(d, true);
            QVERIFY2(first.find("mean FCT " + said) != std::string::npos && first.find(std::string("with ") + design) != std::string::npos, first.c_str());
        }
        // The links the failure took down, as the run resolved them, and the moment marked on the queue charts.
        const bool named = std::any_of(r.table.notes.begin(), r.table.notes.end(), [](const std::string& n) {
            return n.rfind("e0001's fabric events, as resolved: link ", 0) == 0 && n.find(" down at 50us") != std::string::npos;
        });
        QVERIFY(named);
        // The key metrics add what the fabric went through: each tier's uplink imbalance, the packets lost.
        const std::string page = report_html(r);
        const std::string keys = page.substr(page.find("<h2>Key metrics</h2>"), page.find("<h2>Every metric</h2>") - page.find("<h2>Key metrics</h2>"));
        QVERIFY(keys.find("uplink imbalance, tier 1 to 2 (busiest / mean)") != std::string::npos);
        QVERIFY(keys.find("uplink imbalance, tier 2 to 3 (busiest / mean)") != std::string::npos);
        const auto lost = query_doubles(tmp_.filePath("failure.sqlite"), "SELECT value FROM metrics WHERE name = 'lost_to_failures' ORDER BY experiment");
        QCOMPARE(lost.size(), size_t(4));
        QVERIFY(lost[1][0] > 0);
        QVERIFY(keys.find("lost to failed links") != std::string::npos);
        // What the live inspector reads: uplink utilization per sample (thousandths, some at line rate) and the
        // losses so far, which by the last sample are at most what the run ended with.
        const auto permille = query_doubles(tmp_.filePath("failure.sqlite"), "SELECT max(busiest_permille), min(mean_permille) FROM uplink_tiers");
        QVERIFY(permille[0][0] <= 1000 && permille[0][0] >= 900 && permille[0][1] >= 0);
        const auto counted = query_doubles(tmp_.filePath("failure.sqlite"),
                                           "SELECT lost_to_failures, retransmits FROM fabric_counters WHERE experiment = 'e0001' ORDER BY time_ps DESC LIMIT 1");
        const auto resent = query_doubles(tmp_.filePath("failure.sqlite"), "SELECT value FROM metrics WHERE name = 'retransmits' AND experiment = 'e0001'");
        QVERIFY(counted[0][0] > 0 && counted[0][0] <= lost[1][0]);
        QVERIFY(counted[0][1] > 0 && counted[0][1] <= resent[0][0]);
        QVERIFY(!r.queue_tiers.empty());
        for (const LineChart& c : r.queue_tiers) {
            QCOMPARE(c.marks.size(), size_t(1));
            const double unit = c.x_label.find("(µs)") != std::string::npos ? 1e-6 : c.x_label.find("(ms)") != std::string::npos ? 1e-3 : 1;
            QVERIFY2(std::fabs(c.marks[0].first * unit - 50e-6) < 1e-12, c.x_label.c_str());
            QVERIFY(chart_svg(c, 600, 300).find("stroke-dasharray") != std::string::npos);
        }
    }

    void the_pdf_shows_every_experiment_and_keeps_headings_with_their_tables() {
        // With a baseline the 4-experiment demo's "Every metric" table was cut at the page's edge (its last
        // experiment lost), a heading sat alone at a page's foot, and the reproducibility table was clipped.
        // Read back with pdftotext, page by page: 4 experiments (a column each) and 16 (a row each).
        if (QProcess::execute("pdftotext", {"-v"}) < 0) QSKIP("pdftotext (poppler-utils) is not installed: installers/setup.sh installs it");
        if (!QFile::exists(tmp_.filePath("sixteen.sqlite"))) a_large_sweep_overlays_a_dozen_lines();
        // The workbench's demo (an LLM job under four CCs), timed analytically: its metrics' long names
        // ("exposed DP communication, mean per rank") once left the experiments' columns too little room.
        std::ifstream demo(std::string(ORRERY_SOURCE_DIR) + "/presets/scenarios/workbench-demo.json");
        nlohmann::json doc = nlohmann::json::parse(demo);
        doc["workload"]["network_mode"] = "analytic";
        std::ofstream(tmp_.filePath("llm4.json").toStdString()) << doc.dump(1);
        const Result llm = cli({"run", "llm4.json", "--out", "llm4.sqlite"}, tmp_.path());
        QVERIFY2(llm.code == 0, qPrintable(llm.err));
        {   // A manager's first question, what was simulated, is answered at the top, and the run is reproducible from
            // the store alone: the scenario it ran is kept there (the workbench runs a temporary copy).
            const Report r = read_report(tmp_.filePath("llm4.sqlite").toStdString(), 0);
            std::map<std::string, std::string> facts(r.simulated.begin(), r.simulated.end());
            QVERIFY2(facts["fabric"] == "leaf-spine: leaves 4, spines 4, hosts_per_leaf 8", facts["fabric"].c_str());
            QVERIFY2(facts["parallelism"].find("tp 8, pp 2, dp 2") == 0, facts["parallelism"].c_str());
            QVERIFY2(facts["training job"] == "gpt3-6.7b (layers 4) on H100",
                     facts["training job"].c_str());
            QCOMPARE(facts["network mode"], std::string("analytic"));
            QVERIFY(facts["link rates"].find("all 400Gbps") != std::string::npos);
            QVERIFY(facts["swept"].find("cc.preset") == 0);
            const std::string html = report_html(r);
            QVERIFY(html.find("What was simulated") < html.find("Summary"));
            QVERIFY(html.find("orrery-cli export scenario " + tmp_.filePath("llm4.sqlite").toStdString() + " --run 1 -o scenario.json") != std::string::npos);
            const Result exported = cli({"export", "scenario", "llm4.sqlite", "-o", "again.json"}, tmp_.path());
            QVERIFY2(exported.code == 0, qPrintable(exported.err));
            QCOMPARE(cli({"run", "again.json", "--out", "again.sqlite"}, tmp_.path()).code, 0);
            const Report again = read_report(tmp_.filePath("again.sqlite").toStdString(), 0);
            QCOMPARE(facts["congestion control"], std::string("preset dcqcn-400g"));
            // What the run costs on disk, by table (the Results view shows the sentence): the timeline is most of an LLM run.
            QVERIFY(!r.disk_by_table.empty());
            QCOMPARE(r.disk_by_table.front().first, std::string("timeline"));
            uint64_t sum = 0;
            for (const auto& [table, bytes] : r.disk_by_table) sum += bytes;
            QVERIFY(sum > 0 && sum <= r.store_bytes);
            QVERIFY2(disk_cost_sentence(r).find("On disk, this run takes about ") == 0, disk_cost_sentence(r).c_str());
            {  // A store with pages in its write-ahead log, as the workbench's open project is: they count.
                const std::string file = tmp_.filePath("llm4.sqlite").toStdString();
                sqlite3* db = nullptr;
                QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
                QCOMPARE(sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 0; CREATE TABLE pad (x); INSERT INTO pad VALUES (zeroblob(4000000));", nullptr, nullptr,
                                      nullptr),
                         SQLITE_OK);
                const Report padded = read_report(file, 0);
                sqlite3_exec(db, "DROP TABLE pad", nullptr, nullptr, nullptr);
                sqlite3_close(db);
                QVERIFY2(padded.store_bytes >= r.store_bytes + 4000000,
                         qPrintable(QString("%1 B with 4 MB in the log, %2 B before").arg(padded.store_bytes).arg(r.store_bytes)));
            }
            // One seed per design: the note says a difference within the seed-to-seed spread is none, and how to measure it.
            QVERIFY2(r.tie_reason.find("set sweep.replications (5, say) in the scenario") != std::string::npos, r.tie_reason.c_str());
            QCOMPARE(again.repro.experiments.size(), r.repro.experiments.size());
            for (size_t i = 0; i < r.repro.experiments.size(); ++i) QCOMPARE(again.repro.experiments[i].sha256, r.repro.experiments[i].sha256);
        }
        for (const QString& store : {tmp_.filePath("llm4.sqlite"), tmp_.filePath("sixteen.sqlite")}) {
            const Report r = read_report(store.toStdString(), 0, "e0001");
            const QString pdf = store + ".pdf";
            const Result written = cli({"report", store, "-o", pdf, "--baseline", "e0001", "--force"}, tmp_.path());  // the CLI's Qt GUI application has fonts
            QVERIFY2(written.code == 0, qPrintable(written.err));
            auto text_of = [&](QStringList args) {
                QProcess p;
                p.start("pdftotext", args << pdf << "-");
                p.waitForFinished(30000);
                return QString::fromUtf8(p.readAllStandardOutput());
            };
            const QString all = text_of({});
            const QString every = all.section("Every metric", 1).section("Reproducibility", 0, 0);
            QVERIFY(!every.isEmpty());
            for (size_t i = 0; i < r.table.rows.size(); ++i) {
                const QString name = QString::fromStdString(r.table.rows.size() <= 8 ? r.short_labels[i] : r.table.rows[i].experiment);
                QVERIFY2(every.contains(name), qPrintable(name + " is missing from Every metric of " + pdf));
            }
            // Every experiment's wall time, the reproducibility table's last column, is on the page.
            const QString repro = all.section("Reproducibility", 1);
            for (const ExperimentFacts& e : r.repro.experiments)
                QVERIFY2(repro.contains(QString::fromStdString(format_value(e.wall_seconds, "s"))), qPrintable(QString::fromStdString(e.experiment)));
            QProcess info;
            info.start("pdfinfo", {pdf});
            info.waitForFinished(30000);
            const int pages = QString::fromUtf8(info.readAllStandardOutput()).section("Pages:", 1).section('\n', 0, 0).trimmed().toInt();
            QVERIFY(pages > 1);
            for (int page = 1; page <= pages; ++page) {
                QStringList lines = text_of({"-f", QString::number(page), "-l", QString::number(page)}).split('\n', Qt::SkipEmptyParts);
                while (!lines.isEmpty() && (lines.back().trimmed().isEmpty() || lines.back().contains(" / "))) lines.removeLast();  // the page number
                QVERIFY(!lines.isEmpty());
                const QString last = lines.back().trimmed();
                for (const char* heading : {"Summary", "What differs", "Key metrics", "Notes", "Every metric", "Reproducibility"})
                    QVERIFY2(last != heading, qPrintable(QString("page %1 of %2 ends with the heading \"%3\"").arg(page).arg(pdf, heading)));
            }
        }
    }

    void the_pdf_writer_leaves_a_file_it_cannot_replace_alone() {
        const Report r = read_report(store_.toStdString(), 0);
        std::string why;
        QVERIFY(!write_report_pdf(r, tmp_.filePath("no-such-folder/r.pdf").toStdString(), &why));
        QVERIFY2(why.find("no-such-folder/r.pdf") != std::string::npos, why.c_str());
    }

    void ticks_are_round_numbers_that_cover_the_range() {
        for (auto [lo, hi] : {std::pair{0.0, 1.0}, {0.0, 63.43}, {12.5, 13.1}, {0.0, 5.9e6}}) {
            const std::vector<double> t = nice_ticks(lo, hi, 5);
            QVERIFY(t.size() >= 3 && t.size() <= 11);
            QVERIFY(t.front() >= lo - 1e-9 && t.front() - lo < t[1] - t[0] + 1e-9);
            QVERIFY(t.back() <= hi + (t[1] - t[0]) * 1e-6 && hi - t.back() < t[1] - t[0]);
            const double step = t[1] - t[0], mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
            QVERIFY2(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 || std::fabs(mantissa - 5) < 1e-9, qPrintable(QString::number(step)));
        }
    }
};

QTEST_MAIN(TestReport)
#include "test_report.moc"
