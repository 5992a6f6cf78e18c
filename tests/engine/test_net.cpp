// engine/net + engine/runtime: the packet engine against the HPCC reference simulator's results
// (tests/reference/ns3-hpcc), analytic cases, and determinism across threads and batch composition.
#include <QtTest>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "net/ns3_arith.h"
#include "net/port_events.h"
#include "net/switch.h"
#include "runtime/batch.h"
#include "runtime/chunk_shares.h"
#include "runtime/cpu_runner.h"
#include "runtime/hpcc_job.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "telemetry/hpcc_files.h"
#include "telemetry/uplink_load.h"
#include "topology/generators.h"
#include "topology/routing.h"

using namespace orrery;

namespace {
const std::filesystem::path kRef = std::filesystem::path(ORRERY_TEST_DIR) / "reference/ns3-hpcc";
// The staggered incast (k = 4 fat-tree, 36 nodes) rests little: all 16 hosts take part (15 senders into one), and
// the queue monitor samples every switch every 100 ns, ten times a 1 µs step, so switches never rest. 2,338 of
// its 63,000 node-steps rest (3.7 %, measured 2026-11-27): hosts between their packets.
constexpr double kRestedShareAtLeast = 0.02;

struct Run {
    std::unique_ptr<HpccJob> job;
    Batch batch;
    std::vector<ExperimentResult> results;
};

// A reference config run as it is, or with `change` applied to its scenario first (settings the
// reference's config.txt has no key for), on `seed`'s random draws.
Run run_reference(const std::string& scenario, const std::string& cc, int threads = 1,
                  const std::function<void(Scenario&)>& change = {}, uint64_t seed = 1) {
    Run r;
    Diagnostics warnings;
    r.job = load_hpcc_job(kRef / ("config_" + scenario + "_" + cc + ".txt"), kRef, PresetLibrary(), warnings, seed);
    if (change) change(r.job->loaded.scenarios[0]);
    r.batch = compile_batch({r.job->input});
    RunOptions options;
    options.threads = threads;
    r.results = run_cpu(r.batch, options);
    return r;
}

// Reference FCTs keyed by "sip dip sport".
std::map<std::string, double> reference_fcts(const std::string& scenario, const std::string& cc) {
    std::map<std::string, double> out;
    std::ifstream in(kRef / ("fct_" + scenario + "_" + cc + ".txt"));
    std::string sip, dip, sport, dport, size, start, fct, standalone;
    while (in >> sip >> dip >> sport >> dport >> size >> start >> fct >> standalone) out[sip + " " + dip + " " + sport] = std::stod(fct);
    return out;
}

std::map<std::string, double> our_fcts(const Run& r) {
    std::map<std::string, double> out;
    char key[64];
    for (const FlowResult& fr : r.results[0].flows) {
        if (fr.finish == net::kNever) continue;
        const net::FlowInfo& f = r.batch.flow[fr.flow];
        std::snprintf(key, sizeof key, "%08x %08x %u", f.sip, f.dip, unsigned(f.sport));
        out[key] = double(fr.finish - f.start) / 1000.0;
    }
    return out;
}

// A reference file's whole text.
QString reference_text(const std::string& name) {
    std::ifstream in(kRef / name);
    std::stringstream text;
    text << in.rdbuf();
    return QString::fromStdString(text.str());
}

size_t reference_pfc_lines(const std::string& scenario, const std::string& cc) {
    std::ifstream in(kRef / ("pfc_" + scenario + "_" + cc + ".txt"));
    return size_t(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }

// How far each flow's mean FCT over a set of perturbed runs is from the reference's (runs_*.txt: per run `run N`,
// the start times, then a line per CC of the reference's FCT of each flow in ns).
struct Agreement {
    double mean_diff = 0, max_diff = 0;  // |ours / reference − 1| of a flow's mean FCT: mean over flows, worst
    double ref_sd = 0, our_sd = 0;       // a flow's spread over the runs (SD / mean), mean over flows
};

Agreement agreement_over_perturbed_starts(const std::string& runs_file, const std::string& config, const std::string& cc, size_t expected_runs) {
    std::ifstream in(kRef / runs_file);
    std::vector<std::vector<std::string>> starts;
    std::map<std::string, std::vector<std::vector<double>>> reference;  // cc → run → flow
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string first;
        words >> first;
        if (first == "run") {
            std::getline(in, line);
            std::istringstream times(line);
            starts.emplace_back(std::istream_iterator<std::string>(times), std::istream_iterator<std::string>());
        } else {
            reference[first].emplace_back(std::istream_iterator<double>(words), std::istream_iterator<double>());
        }
    }
    Agreement a;
    if (starts.size() != expected_runs || reference[cc].size() != expected_runs) {
        qWarning("%s: %zu runs, %zu of them for %s; expected %zu", runs_file.c_str(), starts.size(), reference[cc].size(), cc.c_str(), expected_runs);
        a.mean_diff = a.max_diff = 1;
        return a;
    }
    Diagnostics warnings;
    const auto job = load_hpcc_job(kRef / config, kRef, PresetLibrary(), warnings);
    std::vector<ExperimentInput> runs(starts.size(), job->input);
    for (size_t n = 0; n < starts.size(); ++n) {
        runs[n].id = "e" + std::to_string(1000 + n);
        for (size_t i = 0; i < starts[n].size() && i < runs[n].flows.size(); ++i)  // read as the reference reads them (hpcc_flows.h)
            runs[n].flows[i].start = Picoseconds(net::ns3_seconds_to_ns(std::strtod(starts[n][i].c_str(), nullptr)) * 1000);
    }
    Batch b = compile_batch(runs);
    RunOptions two;
    two.threads = 2;
    run_cpu(b, two);
    const size_t flows = starts[0].size(), count = starts.size();
    for (size_t i = 0; i < flows; ++i) {
        std::vector<double> ours(count), ref(count);
        for (size_t n = 0; n < count; ++n) {
            const ExperimentSlice& x = b.experiments[n];
            ours[n] = double(b.qp[x.flow_begin + i].finish - b.flow[x.flow_begin + i].start) / 1000.0;  // ns
            ref[n] = reference[cc][n][i];
        }
        const double m_ours = mean(ours), m_ref = mean(ref);
        auto sd = [](const std::vector<double>& v, double m) {
            double s = 0;
            for (double x : v) s += (x - m) * (x - m);
            return std::sqrt(s / double(v.size())) / m;
        };
        const double diff = std::abs(m_ours / m_ref - 1);
        a.mean_diff += diff / double(flows);
        a.max_diff = std::max(a.max_diff, diff);
        a.ref_sd += sd(ref, m_ref) / double(flows);
        a.our_sd += sd(ours, m_ours) / double(flows);
    }
    qInfo("%s, %s: per-flow mean FCT over %zu runs, ours against the reference: %.3f %% mean, %.2f %% max; spread of a flow "
          "over the runs (SD / mean): reference %.2f %%, ours %.2f %%",
          runs_file.c_str(), cc.c_str(), count, 100 * a.mean_diff, 100 * a.max_diff, 100 * a.ref_sd, 100 * a.our_sd);
    return a;
}


// FCTs given in ns, as µs in ascending order.
std::vector<double> ascending_us(const std::map<std::string, double>& fcts_ns) {
    std::vector<double> out;
    for (const auto& [key, fct] : fcts_ns) out.push_back(fct / 1000.0);
    std::sort(out.begin(), out.end());
    return out;
}

// One run's FCTs against a reference run's, both sorted ascending: the relative errors of the mean FCT, of
// the last FCT and, on average, of the FCTs rank by rank.
struct SortedErrors {
    double mean, last, by_rank;
};
SortedErrors sorted_errors(const std::vector<double>& ours, const std::vector<double>& ref) {
    double by_rank = 0;
    for (size_t i = 0; i < ref.size(); ++i) by_rank += std::abs(ours[i] - ref[i]) / ref[i] / double(ref.size());
    return {std::abs(mean(ours) - mean(ref)) / mean(ref), std::abs(ours.back() - ref.back()) / ref.back(), by_rank};
}

// A small scenario in code: `hosts` on one switch or a k = 4 fat-tree, with the given flows.
LoadedScenario scenario_with_flows(const nlohmann::json& topology, const nlohmann::json& flows, const std::string& cc) {
    nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology},
                          {"cc", {{"algorithm", cc}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
    return load_scenario_document(doc, "test.json", ".", PresetLibrary());
}

std::vector<ExperimentResult> run_loaded(const LoadedScenario& s, const Fabric& f, int threads = 1) {
    Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
    RunOptions o;
    o.threads = threads;
    return run_cpu(b, o);
}
}  // namespace

// ---- topology.events ---------------------------------------------------------------------------------------
// A k = 4 fat-tree permutation of 500 KB flows (the go-back-N test's), under `network` and `events`; the link
// an ECMP path of the permutation takes from an aggregation switch up to a core, found from the routes.
struct FailureRun {
    nlohmann::json flows = nlohmann::json::array();
    uint32_t core_link = 0, host_link = 0;
    NodeId agg = 0;  // the aggregation switch whose uplink core_link is
    FailureRun() {
        std::vector<int> perm(16);
        std::iota(perm.begin(), perm.end(), 0);
        std::mt19937_64 rng(1);
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int i = 0; i < 16; ++i)
            if (perm[size_t(i)] != i) flows.push_back({{"src", i}, {"dst", perm[size_t(i)]}, {"size", "500000B"}});
        const LoadedScenario s = load({});
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const Routes routes = build_routes(f);
        for (LinkId l = 0; l < f.link_count(); ++l)
            if (f.is_host(f.link_a[l]) || f.is_host(f.link_b[l])) host_link = l;
        for (const FlowSpec& fs : workload_flows(s.scenarios[0]))
            for (const Hop& h : flow_path(f, routes, fs.src, fs.dst, fs.sport, fs.dport)) {
                const LinkId l = f.port_link[f.port_begin[h.node] + h.port];
                if (f.node_tier[h.node] == 2 && f.node_tier[f.port_peer[f.port_begin[h.node] + h.port]] == 3) {
                    core_link = l;
                    agg = h.node;
                    return;
                }
            }
    }
    LoadedScenario load(const nlohmann::json& events, const nlohmann::json& network = nlohmann::json::object(), bool skipping = false) const {
        nlohmann::json net = network;
        net["nic"]["retransmit_timeout"] = "300us";
        nlohmann::json topology = {{"generator", "fat-tree"}, {"k", 4}};
        if (!events.empty()) topology["events"] = events;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology}, {"network", net},
                              {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        if (skipping) doc["skipping"] = {{"enabled", true}};
        return load_scenario_document(doc, "failure.json", ".", PresetLibrary());
    }
    ExperimentResult run(const nlohmann::json& events, const nlohmann::json& network = nlohmann::json::object(), int threads = 1) const {
        const LoadedScenario s = load(events, network);
        const Fabric f = build_fabric(s.scenarios[0].topology);
        return run_loaded(s, f, threads)[0];
    }
};
std::vector<int64_t> finishes(const ExperimentResult& r) {
    std::vector<int64_t> out;
    for (const FlowResult& x : r.flows) out.push_back(x.finish);
    return out;
}

class TestNet : public QObject {
    Q_OBJECT
private slots:
    void reference_scenarios_data() {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("cc");
        for (const char* s : {"ring", "incast"})
            for (const char* c : {"dcqcn", "hpcc", "timely", "dctcp"}) QTest::newRow((std::string(s) + " " + c).c_str()) << s << c;
    }
    void reference_scenarios() {
        QFETCH(QString, scenario);
        QFETCH(QString, cc);
        const Run r = run_reference(scenario.toStdString(), cc.toStdString());
        const auto ref = reference_fcts(scenario.toStdString(), cc.toStdString());
        const auto ours = our_fcts(r);
        QCOMPARE(ours.size(), ref.size());  // every flow present, keyed by the reference's addresses and ports
        std::vector<double> errors, ref_sorted, our_sorted;
        for (const auto& [key, fct] : ref) {
            QVERIFY2(ours.count(key), ("flow missing: " + key).c_str());
            errors.push_back(std::abs(ours.at(key) - fct) / fct);
            ref_sorted.push_back(fct);
            our_sorted.push_back(ours.at(key));
        }
        std::sort(ref_sorted.begin(), ref_sorted.end());
        std::sort(our_sorted.begin(), our_sorted.end());
        const auto [mean_error, last_error, sorted_error] = sorted_errors(our_sorted, ref_sorted);
        qInfo("%s %s: mean FCT %.0f ns vs %.0f ns (%.2f%%), last %.0f vs %.0f ns (%.2f%%), per flow mean %.2f%% max %.2f%%, sorted %.2f%%, PFC lines %zu vs %zu",
              qPrintable(scenario), qPrintable(cc), mean(our_sorted), mean(ref_sorted), 100 * mean_error, our_sorted.back(), ref_sorted.back(),
              100 * last_error, 100 * mean(errors), 100 * *std::max_element(errors.begin(), errors.end()), 100 * sorted_error,
              r.results[0].pfc.size(), reference_pfc_lines(scenario.toStdString(), cc.toStdString()));
        QCOMPARE(r.results[0].drops, 0u);
        QCOMPARE(r.results[0].pfc.empty(), reference_pfc_lines(scenario.toStdString(), cc.toStdString()) == 0);
        QVERIFY(last_error <= 0.02);
        if (cc == "dcqcn" && scenario == "incast") {
            // The one scenario that marks at random: one run is one sample of a distribution whose mean FCT
            // has a standard deviation of 2.7 % over the reference's own reruns, and fewer than half of those
            // reruns meet 2 % against its published run. Its mean and sorted FCTs are compared as
            // distributions, in dcqcn_incast_against_the_reference_reruns.
            return;
        }
        if (cc == "dcqcn") {
            QVERIFY(mean_error <= 0.02);
            QVERIFY(sorted_error <= 0.05);
        } else {
            QVERIFY(mean_error <= 0.02);
            QVERIFY(mean(errors) <= 0.02);
            QVERIFY(*std::max_element(errors.begin(), errors.end()) <= 0.05);
        }
    }
    void ring_runs_reproduce_the_reference_exactly() {
        // No packet is ever marked in the ring, so the model is deterministic there: every FCT to the nanosecond.
        for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) {
            const Run r = run_reference("ring", cc);
            QCOMPARE(our_fcts(r), reference_fcts("ring", cc));
        }
    }
    void staggered_starts_reproduce_the_reference_byte_for_byte_data() {
        QTest::addColumn<QString>("cc");
        QTest::newRow("dcqcn with threshold marking") << "dcqcn_threshold";
        QTest::newRow("timely") << "timely";
    }
    void staggered_starts_reproduce_the_reference_byte_for_byte() {
        // The incast with its 15 starts 13 ns apart (flow_incast_staggered.txt), so that no two packets of the
        // run meet at a switch in the same nanosecond; DCQCN with kmin = kmax (every mark decided by the queue
        // alone). Without same-nanosecond ties our model is the reference's, to the byte in all three files.
        QFETCH(QString, cc);
        const Run r = run_reference("staggered", cc.toStdString());
        const std::string suffix = "_staggered_" + cc.toStdString() + ".txt";
        QCOMPARE(QString::fromStdString(format_hpcc_fct(r.batch, r.results[0])), reference_text("fct" + suffix));
        QCOMPARE(QString::fromStdString(format_hpcc_pfc(r.results[0])), reference_text("pfc" + suffix));
        QCOMPARE(QString::fromStdString(format_hpcc_qlen(r.results[0])), reference_text("qlen" + suffix));
    }
    void quiet_nodes_rest_and_the_files_stay_the_references() {
        // A node with nothing to do in a step is left as it stands (net/node.h: process_node): no arrival refresh,
        // no tree rebuild. The three files must still be the reference's to the byte, with some node-steps
        // rested, or this tests nothing.
        const Run r = run_reference("staggered", "dcqcn_threshold");
        const ExperimentResult& x = r.results[0];
        const double node_steps = double(x.steps) * double(r.batch.node_role.size());
        const double share = double(x.node_steps_rested) / node_steps;
        qInfo("%llu of %.0f node-steps rested (%.1f %%)", (unsigned long long)x.node_steps_rested, node_steps, 100 * share);
        QVERIFY2(share > kRestedShareAtLeast, qPrintable(QString("only %1 % of node-steps rested").arg(100 * share)));
        const std::string suffix = "_staggered_dcqcn_threshold.txt";
        QCOMPARE(QString::fromStdString(format_hpcc_fct(r.batch, x)), reference_text("fct" + suffix));
        QCOMPARE(QString::fromStdString(format_hpcc_pfc(x)), reference_text("pfc" + suffix));
        QCOMPARE(QString::fromStdString(format_hpcc_qlen(x)), reference_text("qlen" + suffix));
    }
    void dcqcn_incast_against_the_reference_reruns() {
        // The reference's random ECN draws make one DCQCN incast run one sample of a distribution: its mean FCT
        // has a standard deviation of 2.7 % over RngRun 1..512 (runs_incast_dcqcn.txt; run 1 is the published run). Compare
        // distributions: our seeds 1..192 in one batch against the reference's runs, by the issue's targets
        // (mean and last FCT within 2 %, sorted FCTs within 5 %), and how often a single run of each meets
        // those targets against the published run.
        struct RunFcts {
            double pfc_lines;
            std::vector<double> sorted_us;
        };
        std::vector<RunFcts> ref_runs;
        std::ifstream in(kRef / "runs_incast_dcqcn.txt");
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') continue;
            std::istringstream fields(line);
            double run, fct;
            RunFcts r;
            fields >> run >> r.pfc_lines;
            while (fields >> fct) r.sorted_us.push_back(fct / 1000.0);
            QCOMPARE(r.sorted_us.size(), size_t(15));
            QVERIFY(std::is_sorted(r.sorted_us.begin(), r.sorted_us.end()));
            ref_runs.push_back(r);
        }
        QCOMPARE(ref_runs.size(), size_t(512));
        QCOMPARE(ref_runs[0].sorted_us, ascending_us(reference_fcts("incast", "dcqcn")));  // run 1 is the published run
        const std::vector<double>& published = ref_runs[0].sorted_us;

        Diagnostics warnings;
        const auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), warnings);
        std::vector<Scenario> seeded(192, *job->input.scenario);
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < seeded.size(); ++i) {
            seeded[i].seed = i + 1;
            inputs.push_back(job->input);
            char id[32];
            std::snprintf(id, sizeof id, "seed%03zu", i + 1);
            inputs.back().id = id;
            inputs.back().scenario = &seeded[i];
        }
        Batch b = compile_batch(inputs);
        RunOptions options;
        options.threads = 2;
        std::vector<RunFcts> our_runs;
        for (const ExperimentResult& r : run_cpu(b, options)) {
            QCOMPARE(r.drops, 0u);
            RunFcts ours{double(r.pfc.size()), {}};
            for (const FlowResult& fr : r.flows) ours.sorted_us.push_back(double(fr.finish - b.flow[fr.flow].start) / 1e6);
            std::sort(ours.sorted_us.begin(), ours.sorted_us.end());
            QCOMPARE(ours.sorted_us.size(), size_t(15));
            our_runs.push_back(ours);
        }

        auto ensemble = [](const std::vector<RunFcts>& runs, auto of_run) {
            double sum = 0;
            for (const RunFcts& r : runs) sum += of_run(r);
            return sum / double(runs.size());
        };
        auto run_mean = [](const RunFcts& r) { return mean(r.sorted_us); };
        auto run_last = [](const RunFcts& r) { return r.sorted_us.back(); };
        auto run_pfc = [](const RunFcts& r) { return r.pfc_lines; };
        auto relative = [](double ours, double ref) { return (ours - ref) / ref; };
        const double mean_error = relative(ensemble(our_runs, run_mean), ensemble(ref_runs, run_mean));
        const double last_error = relative(ensemble(our_runs, run_last), ensemble(ref_runs, run_last));
        const double pfc_error = relative(ensemble(our_runs, run_pfc), ensemble(ref_runs, run_pfc));
        double rank_error_mean = 0, rank_error_max = 0;
        for (size_t k = 0; k < 15; ++k) {
            auto at_rank = [k](const RunFcts& r) { return r.sorted_us[k]; };
            const double e = std::abs(relative(ensemble(our_runs, at_rank), ensemble(ref_runs, at_rank)));
            rank_error_mean += e / 15;
            rank_error_max = std::max(rank_error_max, e);
        }
        // A single run "meets the targets" against the published run when its mean and last FCT are within 2 %
        // and its sorted FCTs within 5 % on average. The reference's own reruns (2..512) are the yardstick.
        auto meets_targets = [&published](const RunFcts& r) {
            const SortedErrors e = sorted_errors(r.sorted_us, published);
            return e.mean <= 0.02 && e.last <= 0.02 && e.by_rank <= 0.05;
        };
        const double ours_meeting = ensemble(our_runs, [&](const RunFcts& r) { return meets_targets(r) ? 1.0 : 0.0; });
        const std::vector<RunFcts> reruns(ref_runs.begin() + 1, ref_runs.end());
        const double reruns_meeting = ensemble(reruns, [&](const RunFcts& r) { return meets_targets(r) ? 1.0 : 0.0; });
        qInfo("DCQCN incast, our 192 seeds against the reference's 512 runs: mean FCT %.1f vs %.1f us (%+.2f%%), last %.1f vs %.1f us "
              "(%+.2f%%), sorted FCTs by rank %.2f%% apart on average (worst rank %.2f%%), PFC lines per run %.1f vs %.1f (%+.1f%%); "
              "a single run meets the targets against the published run: ours %.0f%%, the reference's reruns %.0f%%",
              ensemble(our_runs, run_mean), ensemble(ref_runs, run_mean), 100 * mean_error, ensemble(our_runs, run_last),
              ensemble(ref_runs, run_last), 100 * last_error, 100 * rank_error_mean, 100 * rank_error_max, ensemble(our_runs, run_pfc),
              ensemble(ref_runs, run_pfc), 100 * pfc_error, 100 * ours_meeting, 100 * reruns_meeting);
        // Measured: mean −0.00 %, last +0.04 %, 0.21 % by rank (worst 0.97 %), PFC +0.8 %, single runs 35 % against 24 %.
        // The README's claim: the mean FCT within 0.2 % of the reference's over its reruns (seeds 1..192 are fixed,
        // so this is deterministic; the standard error of the difference is itself about 0.2 %).
        QVERIFY(std::abs(mean_error) <= 0.002);
        QVERIFY(std::abs(last_error) <= 0.02);
        QVERIFY(rank_error_mean <= 0.02);
        QVERIFY(rank_error_max <= 0.05);
        QVERIFY(std::abs(pfc_error) <= 0.10);
        QVERIFY(ours_meeting >= reruns_meeting - 0.10);
    }
    void timely_incast_queue_histogram_matches_byte_for_byte() {
        const Run r = run_reference("incast", "timely");
        QCOMPARE(QString::fromStdString(format_hpcc_qlen(r.results[0])), reference_text("qlen_incast_timely.txt"));
    }
    void single_flow_matches_the_closed_form() {
        // Two hosts on one switch, 100 Gb/s, 1 us links, 1 MB: the last of N = 1000 packets leaves the sender
        // (N − 1)·83 ns after the first; one packet's FCT is 2·(83 + 1000) + 2·(4 + 1000) ns (reference README §5).
        LoadedScenario s = scenario_with_flows({{"generator", "single-switch"}, {"hosts", 2}},
                                               {{{"src", 0}, {"dst", 1}, {"size", "1000000B"}}}, "dcqcn");
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const auto results = run_loaded(s, f);
        const double closed_form = 999.0 * 83 + 2 * (83 + 1000) + 2 * (4 + 1000);
        const double fct = double(results[0].flows[0].finish) / 1000.0;
        qInfo("single flow: FCT %.0f ns, closed form %.0f ns", fct, closed_form);
        QVERIFY(std::abs(fct - closed_form) / closed_form <= 0.001);
    }
    void ack_interval_acknowledges_every_nth_packet_and_the_last() {
        // Two hosts on one switch, one flow of 1001 packets (the last of 500 bytes): 2 links each way. Every packet
        // ACKed: 1001 data and 1001 ACKs cross 2 links. Every 4th: ACKs at 4000, 8000, ... 1,000,000 bytes (250)
        // and one for the last packet, which no interval reaches (without it the flow would never complete).
        std::vector<uint64_t> hops;
        std::vector<int64_t> finish;
        for (int every : {1, 4}) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "single-switch"}, {"hosts", 2}}},
                                  {"network", {{"ack", {{"interval_packets", every}}}}}, {"cc", {{"algorithm", "dctcp"}}},
                                  {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"size", "1000500B"}}}}}}};
            LoadedScenario s = load_scenario_document(doc, "ack.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            const auto results = run_loaded(s, f);
            QVERIFY(results[0].flows[0].finish != net::kNever);
            hops.push_back(results[0].packet_hops);
            finish.push_back(results[0].flows[0].finish);
        }
        QCOMPARE(hops[0], uint64_t(2 * (1001 + 1001)));
        QCOMPARE(hops[1], uint64_t(2 * (1001 + 251)));
        QVERIFY(finish[1] >= finish[0]);  // the last ACK is the same packet's; fewer ACKs never make it earlier
    }
    void port_event_tree_finds_what_a_scan_finds() {
        // A switch with 11 ports (a tree of 16 leaves, 5 of them empty): random arrival and transmission times
        // drawn from a few values, so that times, and times with scheduled times, tie often. After each random
        // change the tree's first event must be the earliest of every port's own event in the node's tie order.
        LoadedScenario s = scenario_with_flows({{"generator", "single-switch"}, {"hosts", 11}}, nlohmann::json::array({{{"src", 1}, {"dst", 0}, {"size", "1MB"}}}), "dcqcn");
        const Fabric f = build_fabric(s.scenarios[0].topology);
        Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
        net::NetView v = b.view();
        uint32_t sw = 0;
        while (b.node_role[sw] != net::kRoleSwitch) ++sw;
        const uint32_t first = b.node_port_begin[sw], last = b.node_port_begin[sw + 1];
        QCOMPARE(last - first, 11u);
        std::mt19937_64 rng(7);
        auto draw = [&](int64_t none_one_in) { return rng() % none_one_in == 0 ? net::kNever : int64_t(rng() % 4) * 1000; };
        auto randomize = [&](uint32_t row) {
            b.times[row].next_arrival = draw(3);
            b.times[row].arrival_scheduled = int64_t(rng() % 3) * 100;
            b.times[row].tx_done = draw(3);
            b.times[row].busy_since = int64_t(rng() % 3) * 100;
        };
        for (uint32_t row = first; row < last; ++row) randomize(row);
        net::port_events_build(v, sw);
        for (int round = 0; round < 2000; ++round) {
            net::PortEvent scan{net::kNever, net::kNever, net::kNoRow, net::kSrcNone};
            for (uint32_t row = first; row < last; ++row) {
                const net::PortEvent own = net::port_own_event(v, row);
                if (own.time != net::kNever && (scan.time == net::kNever || net::earlier(own, scan))) scan = own;
            }
            const net::PortEvent& tree = net::port_events_first(v, sw);
            QCOMPARE(tree.time, scan.time);
            if (scan.time != net::kNever) {
                QCOMPARE(tree.row, scan.row);
                QCOMPARE(tree.scheduled, scan.scheduled);
                QCOMPARE(int(tree.source), int(scan.source));
            }
            const uint32_t row = first + uint32_t(rng() % (last - first));
            randomize(row);
            net::port_event_changed(v, sw, row);
        }
    }

    void next_queue_serves_control_first_then_round_robin() {
        // Every mask of non-empty and paused queues from every last-served queue, against the dequeue rule
        // written out as a loop: queue 0 whenever it holds a frame (pause does not apply to it), else the first
        // unpaused non-empty queue after the one served last, wrapping around.
        for (uint32_t nonempty = 0; nonempty < 256; ++nonempty)
            for (uint32_t paused = 0; paused < 256; ++paused)
                for (uint32_t last = 0; last < 8; ++last) {
                    int expected = -1;
                    if (nonempty & 1u) {
                        expected = 0;
                    } else {
                        for (uint32_t i = 1; i <= 8 && expected < 0; ++i) {
                            const uint32_t q = (last + i) % 8;
                            if (q != 0 && (nonempty >> q & 1u) && !(paused >> q & 1u)) expected = int(q);
                        }
                    }
                    const int got = net::next_queue(uint8_t(nonempty), uint8_t(paused), uint8_t(last));
                    if (got != expected) QFAIL(qPrintable(QString("nonempty %1 paused %2 last %3: %4, expected %5").arg(nonempty).arg(paused).arg(last).arg(got).arg(expected)));
                }
    }

    void long_flows_share_a_bottleneck_fairly() {
        // Four senders into one receiver under DCTCP (AIMD): long flows converge to a quarter each and keep the
        // link busy. (HPCC's multiplicative update keeps rate ratios and equalizes them only by its small
        // additive step — the reference's own incast shows that spread — so it is not the control to test here.)
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 1; h <= 4; ++h) flows.push_back({{"src", h}, {"dst", 0}, {"size", "40MB"}});
        LoadedScenario s = scenario_with_flows({{"generator", "single-switch"}, {"hosts", 5}}, flows, "dctcp");
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const auto results = run_loaded(s, f);
        std::vector<double> fcts;
        for (const FlowResult& r : results[0].flows) fcts.push_back(double(r.finish));
        const double spread = *std::max_element(fcts.begin(), fcts.end()) / *std::min_element(fcts.begin(), fcts.end());
        const double goodput = 160e6 * 8 / (*std::max_element(fcts.begin(), fcts.end()) / 1e12) / 1e9;  // Gb/s of payload
        qInfo("fair share: last/first completion %.3f, aggregate goodput %.1f Gb/s", spread, goodput);
        QVERIFY(spread < 1.10);
        QVERIFY(goodput > 85.0);
    }
    void spraying_spreads_packets_and_recovers_order() {
        // Four flows across a 2-leaf, 4-spine fabric: per-packet spraying uses every spine; the receivers see
        // packets out of order and recover with NACK and go-back-N. Every flow finishes, nothing is dropped,
        // and the run is the same on any thread count.
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 0; h < 4; ++h) flows.push_back({{"src", h}, {"dst", 4 + h}, {"size", "2MB"}});
        auto run_with = [&](const std::string& lb, int threads) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1},
                                  {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 4}, {"hosts_per_leaf", 4}}},
                                  {"network", {{"load_balancing", lb}}}, {"cc", {{"algorithm", "dctcp"}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            LoadedScenario s = load_scenario_document(doc, "spray.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            // Kept by name: a range-for over a member of the returned vector would outlive the vector.
            const std::vector<ExperimentResult> results = run_loaded(s, f, threads);
            std::vector<int64_t> finish;
            for (const FlowResult& r : results[0].flows) finish.push_back(r.finish);
            return finish;
        };
        const auto spray = run_with("spray", 1), ecmp = run_with("ecmp", 1);
        for (int64_t t : spray) QVERIFY(t != net::kNever);
        QCOMPARE(run_with("spray", 2), spray);
        QVERIFY(spray != ecmp);
        qInfo("spray: last FCT %.1f us; ECMP: %.1f us", double(*std::max_element(spray.begin(), spray.end())) / 1e6,
              double(*std::max_element(ecmp.begin(), ecmp.end())) / 1e6);
    }
    void flowlets_and_adaptive_routing_pick_the_least_loaded_port() {
        // Four 2 MB flows from the hosts of one leaf to the other's over 4 spines, started together. ECMP's hash
        // puts two of them on one spine; a flowlet starts on the least-loaded port — the first packet's spine is
        // busy when the second flow's first packet looks — and keeps it, so each flow has a spine to itself and
        // finishes near its line-rate time. A flowlet gap shorter than any packet spacing re-picks at every
        // packet: that is adaptive routing, packet for packet. Both the same on any thread count.
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 0; h < 4; ++h) flows.push_back({{"src", h}, {"dst", 4 + h}, {"size", "2MB"}});
        auto run_with = [&](const nlohmann::json& network, int threads) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1},
                                  {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 4}, {"hosts_per_leaf", 4}}},
                                  {"network", network}, {"cc", {{"algorithm", "dctcp"}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            LoadedScenario s = load_scenario_document(doc, "balancing.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            const std::vector<ExperimentResult> results = run_loaded(s, f, threads);
            std::vector<int64_t> finish;
            for (const FlowResult& r : results[0].flows) finish.push_back(r.finish);
            return finish;
        };
        auto last_us = [](const std::vector<int64_t>& f) { return double(*std::max_element(f.begin(), f.end())) / 1e6; };
        const auto ecmp = run_with({{"load_balancing", "ecmp"}}, 1);
        const auto flowlet = run_with({{"load_balancing", "flowlet"}}, 1);
        const auto adaptive = run_with({{"load_balancing", "adaptive"}}, 1);
        for (int64_t t : flowlet) QVERIFY(t != net::kNever);
        for (int64_t t : adaptive) QVERIFY(t != net::kNever);
        const double line_us = 2e6 * 8 / 100e9 * 1e6;  // payload alone at 100 Gb/s
        qInfo("last FCT: ECMP %.1f us, flowlet %.1f us, adaptive (in-order NIC) %.1f us; payload at line rate %.1f us", last_us(ecmp), last_us(flowlet),
              last_us(adaptive), line_us);
        QVERIFY(last_us(ecmp) > 1.5 * line_us);  // the hash collides here
        QVERIFY2(last_us(flowlet) < 1.15 * line_us, qPrintable(QString::number(last_us(flowlet))));
        QCOMPARE(run_with({{"load_balancing", "flowlet"}, {"flowlet_gap", "1ps"}}, 1), adaptive);
        QCOMPARE(run_with({{"load_balancing", "flowlet"}}, 2), flowlet);
        QCOMPARE(run_with({{"load_balancing", "adaptive"}}, 2), adaptive);
        // Behind other experiments in a batch (other rows, other tables before its own), the same choices.
        std::vector<LoadedScenario> loaded;
        std::vector<Fabric> fabrics;
        for (const char* lb : {"spray", "ecmp", "flowlet", "adaptive"}) {
            loaded.push_back(load_scenario_document({{"format", "orrery-scenario"}, {"version", 1},
                                                     {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 4}, {"hosts_per_leaf", 4}}},
                                                     {"network", {{"load_balancing", lb}}}, {"cc", {{"algorithm", "dctcp"}}},
                                                     {"workload", {{"kind", "flows"}, {"flows", flows}}}},
                                                    "batch.json", ".", PresetLibrary()));
            fabrics.push_back(build_fabric(loaded.back().scenarios[0].topology));
        }
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < loaded.size(); ++i)
            inputs.push_back({"e" + std::to_string(i), &loaded[i].scenarios[0], &fabrics[i], workload_flows(loaded[i].scenarios[0])});
        Batch batch = compile_batch(inputs);
        const std::vector<ExperimentResult> together = run_cpu(batch, RunOptions{});
        auto finishes = [](const ExperimentResult& r) {
            std::vector<int64_t> f;
            for (const FlowResult& x : r.flows) f.push_back(x.finish);
            return f;
        };
        QCOMPARE(finishes(together[1]), ecmp);
        QCOMPARE(finishes(together[2]), flowlet);
        QCOMPARE(finishes(together[3]), adaptive);
    }
    void out_of_order_delivery_makes_per_packet_balancing_pay() {
        // The same four 2 MB flows over 4 spines: sprayed or adaptively routed packets arrive out of order. A
        // go-back-N receiver (the reference's) answers each gap with a NACK and the sender resends everything
        // from it; a receiver that places packets by sequence acknowledges cumulatively and reports only real
        // holes, so both modes finish near line rate — faster than ECMP, whose hash collides here.
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 0; h < 4; ++h) flows.push_back({{"src", h}, {"dst", 4 + h}, {"size", "2MB"}});
        auto last_us = [&](const std::string& lb, const std::string& delivery, int threads) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1},
                                  {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 4}, {"hosts_per_leaf", 4}}},
                                  {"network", {{"load_balancing", lb}, {"nic", {{"delivery", delivery}}}}}, {"cc", {{"algorithm", "dctcp"}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            LoadedScenario s = load_scenario_document(doc, "delivery.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            const std::vector<ExperimentResult> results = run_loaded(s, f, threads);
            int64_t last = 0;
            for (const FlowResult& r : results[0].flows) {
                if (r.finish == net::kNever) return -1.0;
                last = std::max(last, r.finish);
            }
            return double(last) / 1e6;
        };
        const double line_us = 2e6 * 8 / 100e9 * 1e6;
        const double ecmp = last_us("ecmp", "in_order", 1), ecmp_ooo = last_us("ecmp", "out_of_order", 1);
        const double spray_gbn = last_us("spray", "in_order", 1), spray = last_us("spray", "out_of_order", 1);
        const double adaptive_gbn = last_us("adaptive", "in_order", 1), adaptive = last_us("adaptive", "out_of_order", 1);
        qInfo("last FCT (us): ECMP %.1f (out of order %.1f); spray %.1f in order, %.1f out of order; adaptive %.1f in order, %.1f out of order; "
              "payload at line rate %.1f", ecmp, ecmp_ooo, spray_gbn, spray, adaptive_gbn, adaptive, line_us);
        QCOMPARE(ecmp_ooo, ecmp);  // nothing arrives out of order on one path, and the reorder cap on what is in flight does not bind here
        QVERIFY2(spray > 0 && spray < 1.2 * line_us, qPrintable(QString::number(spray)));
        QVERIFY2(adaptive > 0 && adaptive < 1.2 * line_us, qPrintable(QString::number(adaptive)));
        QVERIFY(spray_gbn > 2 * spray);
        QVERIFY(ecmp > 1.3 * adaptive);
        QCOMPARE(last_us("spray", "out_of_order", 2), spray);
        QCOMPARE(last_us("adaptive", "out_of_order", 2), adaptive);
    }
    void go_back_n_under_reordering_never_strands_a_sender() {
        // Sprayed packets under a window on a go-back-N NIC: the ACK of a reordered packet can arrive after
        // the NACK that sent the QP back, past where it now sends from. Before that ACK moved snd_nxt along,
        // the bytes in flight went negative as unsigned, the QP stayed window-bound and its flow never finished
        // (found under HPCC, bench_balance --k 4 --size 500000 --only spray/in_order --cc hpcc: 1 flow of 15
        // unfinished; HPCC is now refused with spraying, DCTCP is windowed too).
        std::vector<int> perm(16);
        std::iota(perm.begin(), perm.end(), 0);
        std::mt19937_64 rng(1);
        std::shuffle(perm.begin(), perm.end(), rng);
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 16; ++i)
            if (perm[size_t(i)] != i) flows.push_back({{"src", i}, {"dst", perm[size_t(i)]}, {"size", "500000B"}});
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                              {"network", {{"load_balancing", "spray"}}}, {"cc", {{"algorithm", "dctcp"}}},
                              {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        LoadedScenario s = load_scenario_document(doc, "stranded.json", ".", PresetLibrary());
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const ExperimentResult r = run_loaded(s, f)[0];
        QCOMPARE(r.flows.size(), flows.size());
        for (const FlowResult& x : r.flows) QVERIFY2(x.finish != net::kNever, qPrintable(QString("flow %1 unfinished").arg(x.flow)));
        QVERIFY(!r.stalled);
    }
    void a_flowlet_gap_needs_flowlets() {
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "single-switch"}, {"hosts", 2}}},
                              {"network", {{"load_balancing", "adaptive"}, {"flowlet_gap", "20us"}}},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"size", "1MB"}}}}}}};
        try {
            load_scenario_document(doc, "gap.json", ".", PresetLibrary());
            QFAIL("a flowlet gap was accepted under adaptive routing");
        } catch (const InputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("network.flowlet_gap") != std::string::npos && what.find("\"flowlet\"") != std::string::npos, e.what());
        }
    }
    void a_retransmission_timeout_ends_every_flow_after_loss() {
        // 60 short flows over a lossy switch (5 % of packets lost on every link, ACKs included): a flow whose
        // last packet or last ACK is lost has no NACK to recover by. Without a timeout those flows never end
        // and the run stalls; with one every flow ends, each timed-out flow at least one timeout after its
        // start, the same on any thread count. Both NIC deliveries.
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 60; ++i) flows.push_back({{"src", i % 4}, {"dst", 4 + i % 4}, {"size", "20KB"}, {"start", std::to_string(i * 3) + "us"}});
        auto run = [&](const nlohmann::json& timeout, const char* delivery, int threads) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "single-switch"}, {"hosts", 8}}},
                                  {"network", {{"error_rate_per_link", 0.05}, {"nic", {{"retransmit_timeout", timeout}, {"delivery", delivery}}}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            LoadedScenario s = load_scenario_document(doc, "lossy.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            return run_loaded(s, f, threads)[0];
        };
        auto unfinished = [](const ExperimentResult& r) {
            return std::count_if(r.flows.begin(), r.flows.end(), [](const FlowResult& x) { return x.finish == net::kNever; });
        };
        const ExperimentResult off = run("off", "in_order", 1);
        QVERIFY(off.stalled);
        QVERIFY(unfinished(off) > 0);
        QCOMPARE(off.timeouts, uint64_t(0));
        for (const char* delivery : {"in_order", "out_of_order"}) {
            const ExperimentResult on = run("300us", delivery, 1);
            qInfo("%s: without a timeout %ld of 60 flows never end; with 300 us every flow ends after %llu timeouts, %llu packets sent again, "
                  "%llu lost", delivery, long(unfinished(off)), (unsigned long long)on.timeouts, (unsigned long long)on.retransmits,
                  (unsigned long long)on.lost);
            QVERIFY(!on.stalled);
            QCOMPARE(unfinished(on), 0L);
            QVERIFY(on.timeouts > 0);
            QVERIFY(on.retransmits >= on.timeouts);
            uint64_t sum = 0;
            for (const FlowResult& x : on.flows) {
                sum += x.timeouts;
                if (x.timeouts > 0) QVERIFY(x.finish >= Picoseconds(300'000'000).count + int64_t(x.flow) * 3'000'000);
            }
            QCOMPARE(sum, on.timeouts);
            const ExperimentResult two = run("300us", delivery, 2);
            QCOMPARE(two.timeouts, on.timeouts);
            QCOMPARE(two.end_time, on.end_time);
        }
    }
    void a_retransmission_timeout_is_a_positive_time_or_off() {
        for (const nlohmann::json& bad : {nlohmann::json("0us"), nlohmann::json("soon"), nlohmann::json(5)}) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "single-switch"}, {"hosts", 2}}},
                                  {"network", {{"nic", {{"retransmit_timeout", bad}}}}},
                                  {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"size", "1MB"}}}}}}};
            try {
                load_scenario_document(doc, "rto.json", ".", PresetLibrary());
                QFAIL(qPrintable(QString::fromStdString("accepted a retransmit_timeout of " + bad.dump())));
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("network.nic.retransmit_timeout") != std::string::npos, e.what());
            }
        }
        // Imported reference configs keep the reference's NIC, which has none.
        Diagnostics warnings;
        const auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), warnings);
        QCOMPARE(job->loaded.scenarios[0].network.retransmit_timeout.count, int64_t(0));
        QCOMPARE(NetworkSpec().retransmit_timeout.count, int64_t(4'294'967'296'000));
    }
    void a_failed_link_costs_ecmp_its_traffic_until_routing_converges() {
        // One aggregation-core link that ECMP paths use fails at 20 us; routing moves around it 200 us later.
        // Until then ECMP keeps hashing flows into it and loses what it sends there. Adaptive routing at the
        // aggregation switch that owns the link sees it down at once and never sends into it; the core at its
        // other end has no other way into the pod, and switches elsewhere know nothing of the failure, so
        // what adaptive routing sprays through that core is lost there until routing converges. Every flow
        // ends either way (NACKs and the retransmission timeout recover the losses), the same on two threads.
        const FailureRun fr;
        const nlohmann::json events = {{{"at", "20us"}, {"link", fr.core_link}, {"state", "down"}}};
        const nlohmann::json converge = {{"routing", {{"convergence", "200us"}}}};
        nlohmann::json adaptive = converge;
        adaptive["load_balancing"] = "adaptive";
        adaptive["nic"]["delivery"] = "out_of_order";
        // Run here rather than by run_loaded, to read what the aggregation switch itself sent into the link.
        auto run = [&](const nlohmann::json& ev, const nlohmann::json& network, int threads, uint64_t* at_agg) {
            const LoadedScenario s = fr.load(ev, network);
            const Fabric f = build_fabric(s.scenarios[0].topology);
            Batch b = compile_batch({{"e", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
            RunOptions o;
            o.threads = threads;
            ExperimentResult r = run_cpu(b, o)[0];
            if (at_agg) *at_agg = b.out[b.experiments[0].node_begin + fr.agg].sent_into_failures;
            return r;
        };
        uint64_t ecmp_at_agg = 0, adaptive_at_agg = 0;
        const ExperimentResult healthy = run({}, converge, 1, nullptr), ecmp = run(events, converge, 1, &ecmp_at_agg),
                               ar = run(events, adaptive, 1, &adaptive_at_agg);
        auto last_us = [](const ExperimentResult& r) {
            int64_t last = 0;
            for (const FlowResult& x : r.flows) last = std::max(last, x.finish);
            return double(last) / 1e6;
        };
        qInfo("link %u down at 20 us, routing converged 200 us later: ECMP loses %llu packets (%llu sent into the dead link, %llu of them by its "
              "aggregation switch), %llu timeouts, last FCT %.1f us (healthy %.1f); adaptive/out_of_order loses %llu (%llu sent into it, %llu by the "
              "aggregation switch), %llu timeouts, last FCT %.1f us",
              fr.core_link, (unsigned long long)ecmp.lost_to_failures, (unsigned long long)ecmp.sent_into_failures, (unsigned long long)ecmp_at_agg,
              (unsigned long long)ecmp.timeouts, last_us(ecmp), last_us(healthy), (unsigned long long)ar.lost_to_failures,
              (unsigned long long)ar.sent_into_failures, (unsigned long long)adaptive_at_agg, (unsigned long long)ar.timeouts, last_us(ar));
        for (const ExperimentResult* r : {&ecmp, &ar}) {
            QVERIFY(!r->stalled);
            for (const FlowResult& x : r->flows) QVERIFY(x.finish != net::kNever);
        }
        QCOMPARE(healthy.lost_to_failures, uint64_t(0));
        QVERIFY(ecmp_at_agg > 0);
        QVERIFY(ecmp.lost_to_failures > ecmp.sent_into_failures);  // and what was queued or on the wire at the failure
        QVERIFY(last_us(ecmp) > last_us(healthy));
        QCOMPARE(adaptive_at_agg, uint64_t(0));
        QCOMPARE(finishes(run(events, converge, 2, nullptr)), finishes(ecmp));
        QCOMPARE(finishes(run(events, adaptive, 2, nullptr)), finishes(ar));
    }
    void ecmp_by_table_is_ecmp_by_path_while_nothing_fails() {
        // An event after every flow has ended makes switches forward ECMP by table (the run's routing could
        // change): the same hash of the same table picks what the compiled paths do, FCT for FCT.
        const FailureRun fr;
        const ExperimentResult healthy = fr.run({});
        const ExperimentResult late = fr.run({{{"at", "1s"}, {"link", fr.core_link}, {"state", "down"}}});
        QCOMPARE(finishes(late), finishes(healthy));
        QCOMPARE(late.packet_hops, healthy.packet_hops);
    }
    void a_link_down_from_the_start_is_routed_around() {
        // Failed "at": "0us" is the fabric as it starts, routing converged: nothing is lost, every flow ends,
        // and skipping (which needs a fabric that stays as it is) accepts it; a failure later is refused there.
        const FailureRun fr;
        const nlohmann::json events = {{{"at", "0us"}, {"link", fr.core_link}, {"state", "down"}}};
        const ExperimentResult r = fr.run(events);
        QCOMPARE(r.lost_to_failures, uint64_t(0));
        QCOMPARE(r.timeouts, uint64_t(0));
        for (const FlowResult& x : r.flows) QVERIFY(x.finish != net::kNever);
        QVERIFY(finishes(r) != finishes(fr.run({})));
        const LoadedScenario skip_static = fr.load(events, nlohmann::json::object(), true);
        const Fabric f = build_fabric(skip_static.scenarios[0].topology);
        QVERIFY(!run_loaded(skip_static, f)[0].stalled);
        const LoadedScenario skip_later = fr.load({{{"at", "20us"}, {"link", fr.core_link}, {"state", "down"}}}, nlohmann::json::object(), true);
        try {
            compile_batch({{"e", &skip_later.scenarios[0], &f, workload_flows(skip_later.scenarios[0])}});
            QFAIL("skipping accepted a failure during the run");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("skipping") != std::string::npos, e.what());
        }
    }
    void a_degraded_link_and_a_failed_switch() {
        // h0 – s0 – s1 – h1: the switch link at 25 Gb/s from the start takes a 1 MB flow about four times as
        // long as at 100 Gb/s; degraded half-way it ends in between. Fat-tree: a core switch failing at 20 us
        // loses what it held and every flow still ends.
        auto line = [](const nlohmann::json& events) {
            nlohmann::json topology = {{"nodes", {{{"name", "h0"}, {"kind", "host"}}, {{"name", "h1"}, {"kind", "host"}}, {{"name", "s0"}, {"kind", "switch"}},
                                                  {{"name", "s1"}, {"kind", "switch"}}}},
                                       {"links", {{{"a", "h0"}, {"b", "s0"}}, {{"a", "s0"}, {"b", "s1"}}, {{"a", "s1"}, {"b", "h1"}}}}};
            if (!events.empty()) topology["events"] = events;
            const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology},
                                        {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"size", "1MB"}}}}}}};
            const LoadedScenario s = load_scenario_document(doc, "line.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            return double(run_loaded(s, f)[0].flows[0].finish) / 1e6;
        };
        const double full = line({}), slow = line({{{"at", "0us"}, {"link", {"s0", "s1"}}, {"rate", "25Gbps"}}}),
                     half = line({{{"at", "40us"}, {"link", {"s0", "s1"}}, {"rate", "25Gbps"}}});
        qInfo("1 MB over h0 - s0 - s1 - h1: %.1f us at 100 Gb/s, %.1f us at 25 Gb/s, %.1f us slowed at 40 us", full, slow, half);
        QVERIFY2(slow > 3.5 * full && slow < 4.5 * full, qPrintable(QString::number(slow / full)));
        QVERIFY(half > 1.2 * full && half < slow);
        const FailureRun fr;
        const LoadedScenario s = fr.load({});
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const NodeId core = f.link_b[fr.core_link];
        QCOMPARE(int(f.node_tier[core]), 3);
        const ExperimentResult r = fr.run({{{"at", "20us"}, {"switch", std::to_string(core)}, {"state", "down"}}},
                                          {{"routing", {{"convergence", "100us"}}}});
        qInfo("core switch %u down at 20 us: %llu packets lost, %llu timeouts", core, (unsigned long long)r.lost_to_failures, (unsigned long long)r.timeouts);
        QVERIFY(r.lost_to_failures > 0);
        for (const FlowResult& x : r.flows) QVERIFY(x.finish != net::kNever);
    }
    void capacity_weights_send_more_over_faster_uplinks() {
        // Two leaves joined by a 400 Gb/s spine and a 100 Gb/s one; 8 hosts under leaf 0 send 4 flows each to
        // the 8 under leaf 1. Equal ECMP puts about half the flows on the slow spine; weighted by capacity, a
        // fifth, and the flows end sooner. On a symmetric fat-tree the weights are all equal: the same run as
        // ECMP, FCT for FCT, sprayed or not.
        auto two_spines = [](const char* weights) {
            nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array(), flows = nlohmann::json::array();
            for (int h = 0; h < 16; ++h) nodes.push_back({{"name", std::string("h").append(std::to_string(h))}, {"kind", "host"}});
            for (const char* sw : {"leaf0", "leaf1", "fast", "slow"}) nodes.push_back({{"name", sw}, {"kind", "switch"}});
            for (int h = 0; h < 16; ++h) links.push_back({{"a", std::string("h").append(std::to_string(h))}, {"b", h < 8 ? "leaf0" : "leaf1"}});
            for (const char* leaf : {"leaf0", "leaf1"}) {
                links.push_back({{"a", leaf}, {"b", "fast"}, {"rate", "400Gbps"}});
                links.push_back({{"a", leaf}, {"b", "slow"}, {"rate", "100Gbps"}});
            }
            for (int h = 0; h < 8; ++h)
                for (int k = 0; k < 4; ++k) flows.push_back({{"src", h}, {"dst", 8 + (h + k) % 8}, {"size", "400KB"}, {"dport", 100 + k}});
            const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"nodes", nodes}, {"links", links}}},
                                        {"network", {{"routing", {{"weights", weights}}}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            const LoadedScenario s = load_scenario_document(doc, "spines.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            const ExperimentResult r = run_loaded(s, f)[0];
            int64_t last = 0;
            for (const FlowResult& x : r.flows) last = std::max(last, x.finish);
            return double(last) / 1e6;
        };
        const double equal = two_spines("equal"), capacity = two_spines("capacity");
        qInfo("8 x 4 flows over a 400 and a 100 Gb/s spine: last FCT %.1f us with equal ECMP, %.1f us weighted by capacity", equal, capacity);
        QVERIFY(capacity < 0.8 * equal);
        const FailureRun fr;
        for (const char* lb : {"ecmp", "spray"}) {
            nlohmann::json weighted = {{"load_balancing", lb}, {"routing", {{"weights", "capacity"}}}};
            QCOMPARE(finishes(fr.run({}, weighted)), finishes(fr.run({}, {{"load_balancing", lb}})));
        }
        try {
            fr.load({}, {{"load_balancing", "adaptive"}, {"routing", {{"weights", "capacity"}}}});
            QFAIL("capacity weights were accepted with adaptive routing");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("network.routing.weights") != std::string::npos, e.what());
        }
    }
    void a_sweep_fails_each_link_of_a_tier_in_turn() {
        // One sweep parameter, the index of a tier selector: each experiment fails another aggregation-core link
        // (from the start), names it in its results, and every flow ends. Random links of a tier come from
        // the seed: the same seed, the same links.
        FailureRun fr;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1},
                              {"topology", {{"generator", "fat-tree"}, {"k", 4}, {"events", {{{"at", "0us"}, {"link", {{"tiers", {2, 3}}, {"index", 0}}}, {"state", "down"}}}}}},
                              {"workload", {{"kind", "flows"}, {"flows", fr.flows}}},
                              {"sweep", {{"parameters", {{{"path", "topology.events[0].link.index"}, {"values", {0, 1, 2, 3, 4, 5, 6, 7}}}}}}}};
        const LoadedScenario s = load_scenario_document(doc, "each.json", ".", PresetLibrary());
        QCOMPARE(s.scenarios.size(), size_t(8));
        std::vector<Fabric> fabrics;
        fabrics.reserve(s.scenarios.size());
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < s.scenarios.size(); ++i) {
            fabrics.push_back(build_fabric(s.scenarios[i].topology));
            inputs.push_back({"e" + std::to_string(i), &s.scenarios[i], &fabrics[i], workload_flows(s.scenarios[i])});
        }
        Batch b = compile_batch(inputs);
        const std::vector<ExperimentResult> results = run_cpu(b, RunOptions{});
        std::set<std::string> named;
        for (const ExperimentResult& r : results) {
            QCOMPARE(r.fabric_events.size(), size_t(1));
            named.insert(r.fabric_events[0].what);
            for (const FlowResult& x : r.flows) QVERIFY(x.finish != net::kNever);
        }
        qInfo("first: %s; last: %s", results.front().fabric_events[0].what.c_str(), results.back().fabric_events[0].what.c_str());
        QCOMPARE(named.size(), size_t(8));
        const Fabric f = build_fabric(s.scenarios[0].topology);
        auto random_links = [&](uint64_t seed) {
            FabricEventSpec spec;
            spec.tier_a = 2, spec.tier_b = 3, spec.random_count = 3, spec.random_seed = seed;
            return resolve_fabric_events({spec}, f, {})[0].links;
        };
        const std::vector<LinkId> a = random_links(7);
        QCOMPARE(a.size(), size_t(3));
        QCOMPARE(std::set<LinkId>(a.begin(), a.end()).size(), size_t(3));
        QCOMPARE(random_links(7), a);
        QVERIFY(random_links(8) != a);
        for (LinkId l : a) QCOMPARE(int(f.node_tier[f.link_a[l]]) + int(f.node_tier[f.link_b[l]]), 5);
    }
    void fabric_events_name_what_exists() {
        const FailureRun fr;
        auto one = [](const nlohmann::json& event) { return nlohmann::json::array({event}); };
        const std::vector<std::pair<nlohmann::json, std::string>> bad = {
            {one({{"at", "5us"}, {"link", 9999}, {"state", "down"}}), "topology.events[0].link"},
            {one({{"at", "5us"}, {"link", {"0", "1"}}, {"state", "down"}}), "topology.events[0].link"},  // two hosts: no link
            {one({{"at", "5us"}, {"link", fr.host_link}, {"rate", "25Gbps"}}), "topology.events[0].rate"},
            {one({{"at", "5us"}, {"switch", "0"}, {"state", "down"}}), "topology.events[0].switch"},  // node 0 is a host
            {one({{"at", "5us"}, {"link", 3}}), "topology.events[0]"},
            {one({{"at", "-5us"}, {"link", 3}, {"state", "down"}}), "topology.events[0].at"},
            {one({{"at", "5us"}, {"link", {{"tiers", {2, 3}}, {"index", 16}}}, {"state", "down"}}), "topology.events[0].link.index"},  // k = 4: 16 such links
            {one({{"at", "5us"}, {"link", {{"tiers", {3, 3}}, {"index", 0}}}, {"state", "down"}}), "topology.events[0].link.tiers"},
            {one({{"at", "5us"}, {"link", {{"tiers", {2, 3}}}}, {"state", "down"}}), "topology.events[0].link"},
        };
        for (const auto& [events, where] : bad) {
            try {
                fr.load(events);
                QFAIL(qPrintable(QString::fromStdString("accepted " + events.dump())));
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find(where) != std::string::npos, e.what());
            }
        }
    }
    // The second reference simulator (tests/reference/htsim/README.md): htsim on the same k = 8 fat-tree at
    // 100 Gb/s and the same random permutation of 2 MB flows. ECMP against htsim's RoCE (no congestion control,
    // PFC, go-back-N), oblivious spraying and adaptive routing with an out-of-order receiver against its EQDS
    // (switches spraying or routing adaptively, receiver placing packets out of order); Orrery's NICs send at
    // line rate (cc "fixed") on a lossless fabric. Mean and p99 FCT within 10 % of htsim's.
    void agrees_with_htsim_on_a_permutation() {
        const std::filesystem::path dir = std::filesystem::path(ORRERY_TEST_DIR) / "reference/htsim";
        std::ifstream cm(dir / "perm-k8-2MB.cm");
        QVERIFY(cm.good());
        nlohmann::json flows = nlohmann::json::array();
        for (std::string line; std::getline(cm, line);) {
            int src = 0, dst = 0, id = 0;
            long long start = 0, size = 0;
            if (std::sscanf(line.c_str(), "%d->%d id %d start %lld size %lld", &src, &dst, &id, &start, &size) == 5)
                flows.push_back({{"src", src}, {"dst", dst}, {"size", std::to_string(size) + "B"}});
        }
        QCOMPARE(flows.size(), size_t(127));
        auto htsim_fcts = [&](const std::string& name) {
            std::ifstream in(dir / ("fct-" + name + ".txt"));
            std::vector<double> fct;
            for (std::string line; std::getline(in, line);) {
                int src = 0, dst = 0;
                double us = 0;
                if (line[0] != '#' && std::sscanf(line.c_str(), "%d %d %lf", &src, &dst, &us) == 3) fct.push_back(us);
            }
            std::sort(fct.begin(), fct.end());
            return fct;
        };
        struct Mode {
            const char *balancing, *delivery, *htsim;
        };
        const Mode modes[] = {{"ecmp", "in_order", "roce-ecmp"}, {"spray", "out_of_order", "eqds-spray"}, {"adaptive", "out_of_order", "eqds-adaptive"}};
        std::vector<LoadedScenario> loaded;
        for (const Mode& m : modes) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 8}}},
                                  {"network", {{"load_balancing", m.balancing}, {"nic", {{"delivery", m.delivery}}}, {"ecn", {{"enabled", false}}}}},
                                  {"cc", {{"algorithm", "fixed"}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            loaded.push_back(load_scenario_document(doc, "htsim.json", ".", PresetLibrary()));
        }
        const Fabric f = build_fabric(loaded[0].scenarios[0].topology);
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < loaded.size(); ++i) inputs.push_back({modes[i].htsim, &loaded[i].scenarios[0], &f, workload_flows(loaded[i].scenarios[0])});
        Batch b = compile_batch(inputs);
        const std::vector<ExperimentResult> results = run_cpu(b, RunOptions{});
        auto p99 = [](const std::vector<double>& v) { return v[std::min(v.size() - 1, size_t(0.99 * double(v.size() - 1) + 0.5))]; };
        for (size_t i = 0; i < results.size(); ++i) {
            std::vector<double> ours;
            for (const FlowResult& x : results[i].flows) {
                QVERIFY(x.finish != net::kNever);
                ours.push_back(double(x.finish - b.flow[x.flow].start) * 1e-6);
            }
            std::sort(ours.begin(), ours.end());
            const std::vector<double> ref = htsim_fcts(modes[i].htsim);
            QCOMPARE(ref.size(), ours.size());
            const double mean_error = mean(ours) / mean(ref) - 1, p99_error = p99(ours) / p99(ref) - 1;
            qInfo("%s/%s against htsim %s: mean %.1f us against %.1f (%+.1f %%), p99 %.1f us against %.1f (%+.1f %%)", modes[i].balancing, modes[i].delivery,
                  modes[i].htsim, mean(ours), mean(ref), mean_error * 100, p99(ours), p99(ref), p99_error * 100);
            QVERIFY(std::abs(mean_error) < 0.10);
            QVERIFY(std::abs(p99_error) < 0.10);
        }
    }

    // Uplink imbalance per tier (telemetry/uplink_load.h): under ECMP, what each uplink sent follows the flows'
    // compiled paths (data bytes; ACKs, which climb the tree too, add a few per cent), so the busiest-over-mean
    // ratio is the paths'; spraying the same flows splits each switch's bytes evenly over its uplinks.
    void uplink_imbalance_follows_the_paths() {
        nlohmann::json flows = nlohmann::json::array();
        for (int h = 0; h < 16; ++h) flows.push_back({{"src", h}, {"dst", (h * 5 + 3) % 16}, {"size", "200000B"}});
        auto run = [&](const char* balancing, std::vector<TierImbalance>& out, const Fabric** fabric, std::vector<FlowSpec>* specs) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                                  {"network", {{"load_balancing", balancing}, {"nic", {{"delivery", "out_of_order"}}}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            static std::vector<LoadedScenario> keep;
            static std::vector<std::unique_ptr<Fabric>> fabrics;
            keep.push_back(load_scenario_document(doc, "uplinks.json", ".", PresetLibrary()));
            fabrics.push_back(std::make_unique<Fabric>(build_fabric(keep.back().scenarios[0].topology)));
            if (fabric) *fabric = fabrics.back().get();
            if (specs) *specs = workload_flows(keep.back().scenarios[0]);
            Batch b = compile_batch({{"e0000", &keep.back().scenarios[0], fabrics.back().get(), workload_flows(keep.back().scenarios[0])}});
            const std::vector<ExperimentResult> r = run_cpu(b, RunOptions{});
            for (const FlowResult& x : r[0].flows) QVERIFY(x.finish != net::kNever);
            out = uplink_imbalance(b, 0);
        };
        std::vector<TierImbalance> ecmp, spray;
        const Fabric* f = nullptr;
        std::vector<FlowSpec> specs;
        run("ecmp", ecmp, &f, &specs);
        run("spray", spray, nullptr, nullptr);
        QCOMPARE(ecmp.size(), size_t(2));
        QCOMPARE(spray.size(), size_t(2));
        // Data bytes per uplink from the compiled paths.
        const Routes routes = build_routes(*f);
        std::map<uint32_t, std::pair<int, double>> bytes;  // uplink port → (its switch's tier, data bytes)
        for (NodeId n = 0; n < f->node_count(); ++n)
            for (uint32_t p = f->port_begin[n]; p < f->port_begin[n + 1]; ++p)
                if (f->node_kind[n] == NodeKind::network_switch && f->node_tier[f->port_peer[p]] == f->node_tier[n] + 1) bytes[p] = {f->node_tier[n], 0.0};
        for (const FlowSpec& s : specs)
            for (const Hop& hop : flow_path(*f, routes, s.src, s.dst, s.sport, s.dport))
                if (auto it = bytes.find(f->port_begin[hop.node] + hop.port); it != bytes.end()) it->second.second += double(s.size.count);
        // Spraying evens out each switch's uplinks: each carries its switch's share.
        std::map<NodeId, std::pair<double, int>> per_switch;  // switch → (uplink bytes, uplinks)
        for (NodeId n = 0; n < f->node_count(); ++n)
            for (uint32_t p = f->port_begin[n]; p < f->port_begin[n + 1]; ++p)
                if (auto it = bytes.find(p); it != bytes.end()) per_switch[n].first += it->second.second, ++per_switch[n].second;
        for (const TierImbalance& t : ecmp) {
            double max = 0, sum = 0, n = 0, even_max = 0, even_sum = 0;
            for (const auto& [p, tb] : bytes)
                if (tb.first == t.tier) max = std::max(max, tb.second), sum += tb.second, ++n;
            for (const auto& [sw, load] : per_switch)
                if (f->node_tier[sw] == t.tier) even_max = std::max(even_max, load.first / load.second), even_sum += load.first;
            const double expected = max / (sum / n), even = even_max / (even_sum / n);
            const double sprayed = spray[size_t(t.tier - 1)].max_over_mean;
            qInfo("tier %d: %u uplinks, ECMP %.3f (paths say %.3f), spray %.3f (an even split per switch %.3f)", t.tier, t.uplinks, t.max_over_mean, expected, sprayed, even);
            QCOMPARE(t.uplinks, uint32_t(n));
            QVERIFY(std::abs(t.max_over_mean / expected - 1) < 0.1);
            // A ToR's sprayed packets split evenly over its uplinks; above, what each aggregation switch gets
            // depends on the ToRs' split, not on ECMP's paths.
            if (t.tier == 1) QVERIFY(std::abs(sprayed / even - 1) < 0.1);
            QVERIFY(sprayed < t.max_over_mean);
        }
    }

    void hpcc_keeps_each_flow_on_one_path() {
        // HPCC reads a hop's utilization from two INT records of the same port; balancing that moves a flow's
        // packets between paths is refused with it, and accepted with a CC that reads no INT.
        for (const char* lb : {"spray", "adaptive", "flowlet"}) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 4}}},
                                  {"network", {{"load_balancing", lb}}}, {"cc", {{"algorithm", "hpcc"}}},
                                  {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 9}, {"size", "1MB"}}}}}}};
            try {
                load_scenario_document(doc, "hpcc.json", ".", PresetLibrary());
                QFAIL(qPrintable(QString("HPCC was accepted with load_balancing %1").arg(lb)));
            } catch (const InputError& e) {
                const std::string what = e.what();
                QVERIFY2(what.find("network.load_balancing") != std::string::npos && what.find("HPCC") != std::string::npos, e.what());
            }
            doc["cc"]["algorithm"] = "timely";
            QCOMPARE(load_scenario_document(doc, "timely.json", ".", PresetLibrary()).scenarios.size(), size_t(1));
        }
    }
    void incast_pauses_and_loses_nothing() {
        const Run r = run_reference("incast", "dcqcn");
        QVERIFY(!r.results[0].pfc.empty());
        QCOMPARE(r.results[0].drops, 0u);
        for (const FlowResult& f : r.results[0].flows) QVERIFY(f.finish != net::kNever);
        // Every pause is received by agg 24 on its port toward ToR 16, as in the reference.
        for (const net::PfcEvent& e : r.results[0].pfc) {
            QCOMPARE(e.node, 24u);
            QCOMPARE(unsigned(e.ifindex), 1u);
        }
    }
    void mixed_flows_against_the_reference_and_its_own_spread() {
        // 64 flows of 10 KB to 10 MB between random hosts of the k = 4 fat-tree, starts spread over 100 µs
        // (tests/reference/ns3-hpcc/README.md §9). Where a single flow differs from the reference, compare
        // with how far the reference moves its own flows when one start moves 3 ns (config_mixedlate_*).
        struct Spread {
            double mean_fct, per_flow_mean, per_flow_max;
        };
        auto spread = [](const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
            Spread s{0, 0, 0};
            double sum_a = 0, sum_b = 0;
            for (const auto& [key, fct] : b) {
                const double e = std::abs(a.at(key) - fct) / fct;
                s.per_flow_mean += e / double(b.size());
                s.per_flow_max = std::max(s.per_flow_max, e);
                sum_a += a.at(key), sum_b += fct;
            }
            s.mean_fct = std::abs(sum_a / sum_b - 1);
            return s;
        };
        for (const std::string cc : {"dctcp", "hpcc"}) {
            const Run r = run_reference("mixed", cc);
            const auto ref = reference_fcts("mixed", cc);
            QCOMPARE(ref.size(), size_t(64));
            const Spread ours = spread(our_fcts(r), ref), itself = spread(reference_fcts("mixedlate", cc), ref);
            qInfo("%s: mean FCT %.3f %%, per flow %.3f %% mean, %.2f %% max; the reference against itself 3 ns later: %.3f %% mean, %.2f %% max",
                  cc.c_str(), 100 * ours.mean_fct, 100 * ours.per_flow_mean, 100 * ours.per_flow_max, 100 * itself.per_flow_mean, 100 * itself.per_flow_max);
            QVERIFY(itself.per_flow_max > 0);  // the shifted start really moved something in the reference
            QVERIFY(ours.mean_fct < (cc == "hpcc" ? 0.005 : 0.0005));
            QVERIFY(ours.per_flow_mean < 1.5 * itself.per_flow_mean);
            if (cc == "dctcp") QVERIFY(ours.per_flow_max < 0.01);
        }
    }
    void mixed_flows_agree_with_the_reference_flow_by_flow_over_perturbed_starts() {
        // One run against one run cannot tell a model difference from sensitivity: under HPCC a single flow
        // of the mixed case moves by ±20 % in both simulators when any other flow is removed. So both run the
        // same 30 perturbations (every start + 0..20 ns, runs_mixed.txt) and each flow's mean FCT is compared:
        // a model difference shows as flows whose means differ beyond their spread.
        for (const std::string cc : {"hpcc", "dctcp"}) {
            const Agreement a = agreement_over_perturbed_starts("runs_mixed.txt", "config_mixed_" + cc + ".txt", cc, 30);
            // Measured 2026-11-24: HPCC 0.155 % / 0.98 %, spreads 1.16 % and 1.22 %; DCTCP 0.015 % / 0.09 %, 0.15 % both.
            QVERIFY(a.mean_diff < (cc == "hpcc" ? 0.004 : 0.0005));
            QVERIFY(a.max_diff < (cc == "hpcc" ? 0.02 : 0.003));
            QVERIFY(std::abs(a.our_sd / a.ref_sd - 1) < 0.2);
        }
    }
    void staggered_incast_agrees_with_the_reference_flow_by_flow_over_perturbed_starts() {
        // The staggered incast (starts 13 ns apart) is the reference's to the byte under DCQCN with threshold
        // marking and TIMELY, but not under HPCC and DCTCP: one run against one run, a flow finishes up to 3.2 %
        // (HPCC) and 3.0 % (DCTCP) apart (reference README §9). Their configs bound each QP by a window
        // (HAS_WIN 1): a window-bound sender sends when an ACK comes back, so senders fall into step with the
        // ACK clock and their packets meet at the ToR in the same nanosecond again, where the two simulators
        // order ties differently (engine/net README). TIMELY with HAS_WIN 1 alone already differs (2.1 %);
        // up to 8 of the 15 flows it is identical. Over 30 perturbed runs (every start + 0..12 ns,
        // runs_staggered.txt) each flow's mean FCT must agree: tie order moves single runs, not the model.
        for (const std::string cc : {"hpcc", "dctcp"}) {
            // The published run (starts as written): mean and last FCT close, single flows a few per cent apart.
            const std::map<std::string, double> ref = reference_fcts("staggered", cc), ours = our_fcts(run_reference("staggered", cc));
            QCOMPARE(ours.size(), ref.size());
            double worst = 0, sum_ref = 0, sum_ours = 0, last_ref = 0, last_ours = 0;
            for (const auto& [key, fct] : ref) {
                worst = std::max(worst, std::abs(ours.at(key) / fct - 1));
                sum_ref += fct, sum_ours += ours.at(key);
                last_ref = std::max(last_ref, fct), last_ours = std::max(last_ours, ours.at(key));
            }
            qInfo("staggered %s, one run: mean FCT %+.2f %%, last %+.2f %%, a flow at most %.2f %% apart", cc.c_str(), 100 * (sum_ours / sum_ref - 1),
                  100 * (last_ours / last_ref - 1), 100 * worst);
            QVERIFY(std::abs(sum_ours / sum_ref - 1) < 0.01 && std::abs(last_ours / last_ref - 1) < 0.01 && worst < 0.04);
            // Measured 2026-12-07: HPCC 0.42 % / 1.53 %, spreads 1.45 % and 1.54 %; DCTCP 0.95 % / 2.19 %, spreads 0.60 % and
            // 0.31 % (engine/net README: ties at the ToR recur at every packet of senders in step with their ACKs).
            const Agreement a = agreement_over_perturbed_starts("runs_staggered.txt", "config_staggered_" + cc + ".txt", cc, 30);
            QVERIFY(a.mean_diff < (cc == "hpcc" ? 0.008 : 0.015));
            QVERIFY(a.max_diff < (cc == "hpcc" ? 0.025 : 0.03));
        }
    }
    void pfc_off_drops_and_recovers_as_the_reference() {
        // The reference with NS_ATTRIBUTE_DEFAULT=ns3::QbbNetDevice::QbbEnabled=false on the TIMELY incast
        // (tests/reference/ns3-hpcc/README.md §9): no pause is obeyed, the ToR's headroom overflows, 1,508
        // packets are dropped ("Drop: ... Headroom full" lines of its log) and go-back-N recovers every flow.
        const Run lossless = run_reference("incast", "timely");
        const Run r = run_reference("incast", "timely", 1, [](Scenario& s) { s.network.pfc_enabled = false; });
        QCOMPARE(lossless.results[0].drops, 0u);
        QVERIFY(!lossless.results[0].pfc.empty());
        QCOMPARE(r.results[0].drops, 1508u);
        QVERIFY(r.results[0].pfc.empty());  // frames are sent but ignored, and (as in the reference) not traced
        QVERIFY(!r.results[0].stalled);
        const std::map<std::string, double> ours = our_fcts(r), ref = reference_fcts("nopfc", "timely");
        QCOMPARE(ours.size(), ref.size());
        double worst = 0;
        for (const auto& [key, fct] : ref) worst = std::max(worst, std::abs(ours.at(key) - fct) / fct);
        const SortedErrors e = sorted_errors(ascending_us(ours), ascending_us(ref));
        qInfo("PFC off, TIMELY incast against the reference: mean FCT %.2f %%, per flow worst %.2f %%, last %.2f %%", 100 * e.mean, 100 * worst, 100 * e.last);
        QVERIFY(e.mean < 0.01);   // measured 0.37 %
        QVERIFY(worst < 0.12);    // measured 9.9 %: which go-back-N round a flow's loss falls in
        QVERIFY(e.last < 0.06);   // measured 4.8 %
        // Against the lossless run: drops and retransmissions stretch the tail.
        QVERIFY(mean(ascending_us(ours)) != mean(ascending_us(our_fcts(lossless))));
    }
    void lossy_runs_against_the_reference_reruns_data() {
        QTest::addColumn<QString>("cc");
        QTest::addColumn<QString>("runs");
        QTest::addColumn<bool>("pfc");
        QTest::addColumn<double>("error_rate");
        // Random link loss: lost pause frames let headroom overflow, lost tails stall flows for good (the
        // reference's NIC has no retransmission timeout), so runs differ widely in how many flows finish.
        QTest::newRow("timely, ERROR_RATE_PER_LINK 0.001") << "timely" << "runs_loss_timely.txt" << true << 0.001;
        // PFC off: the ToR drops what its headroom cannot hold; DCQCN's random marks make each run a sample.
        QTest::newRow("dcqcn, PFC off") << "dcqcn" << "runs_nopfc_dcqcn.txt" << false << 0.0;
    }
    void lossy_runs_against_the_reference_reruns() {
        // Our seeds 1..128 against the reference's RngRun 1..64 (tests/reference/ns3-hpcc/README.md §9): the
        // means of flows finished and of the mean FCT of a run agree within three standard errors of their
        // difference, and (PFC off) so do the drops per run.
        QFETCH(QString, cc);
        QFETCH(QString, runs);
        QFETCH(bool, pfc);
        QFETCH(double, error_rate);
        struct Sample {
            double finished, mean_fct_us, drops;
        };
        std::vector<Sample> ref, ours;
        std::ifstream in(kRef / runs.toStdString());
        for (std::string line; std::getline(in, line);) {
            if (line.empty() || line[0] == '#') continue;
            std::istringstream fields(line);
            double run, second, fct;
            std::vector<double> fcts;
            fields >> run >> second;
            while (fields >> fct) fcts.push_back(fct / 1000.0);
            ref.push_back({double(fcts.size()), fcts.empty() ? 0.0 : mean(fcts), pfc ? -1.0 : second});
        }
        QCOMPARE(ref.size(), size_t(64));
        Diagnostics warnings;
        const auto job = load_hpcc_job(kRef / ("config_incast_" + cc.toStdString() + ".txt"), kRef, PresetLibrary(), warnings);
        std::vector<Scenario> seeded(128, *job->input.scenario);
        std::vector<ExperimentInput> inputs;
        for (size_t i = 0; i < seeded.size(); ++i) {
            seeded[i].seed = i + 1;
            seeded[i].network.pfc_enabled = pfc;
            seeded[i].network.error_rate_per_link = error_rate;
            inputs.push_back(job->input);
            inputs.back().id = "seed" + std::to_string(i + 1);
            inputs.back().scenario = &seeded[i];
        }
        Batch b = compile_batch(inputs);
        RunOptions options;
        options.threads = 2;
        uint64_t lost = 0;
        for (const ExperimentResult& r : run_cpu(b, options)) {
            std::vector<double> fcts;
            for (const FlowResult& fr : r.flows)
                if (fr.finish != net::kNever) fcts.push_back(double(fr.finish - b.flow[fr.flow].start) / 1e6);
            ours.push_back({double(fcts.size()), fcts.empty() ? 0.0 : mean(fcts), double(r.drops)});
            lost += r.lost;
            if (!pfc) QVERIFY(r.pfc.empty());
        }
        QCOMPARE(lost > 0, error_rate > 0);
        auto stats = [](const std::vector<Sample>& v, double Sample::*field, bool only_finished) {
            std::vector<double> x;
            for (const Sample& s : v)
                if (!only_finished || s.finished > 0) x.push_back(s.*field);
            const double m = mean(x);
            double var = 0;
            for (double y : x) var += (y - m) * (y - m) / double(x.size() - 1);
            return std::pair<double, double>{m, std::sqrt(var / double(x.size()))};  // mean and its standard error
        };
        auto agree = [&](const char* what, double Sample::*field, bool only_finished) {
            const auto [rm, rse] = stats(ref, field, only_finished);
            const auto [om, ose] = stats(ours, field, only_finished);
            const double z = std::abs(om - rm) / std::sqrt(rse * rse + ose * ose + 1e-30);
            qInfo("%s: reference %.4g ± %.2g (SE), ours %.4g ± %.2g: %+.2f %%, %.2f standard errors", what, rm, rse, om, ose, 100 * (om - rm) / rm, z);
            QVERIFY2(z < 3, what);
        };
        agree("flows finished per run", &Sample::finished, false);
        agree("mean FCT of a run, us", &Sample::mean_fct_us, true);
        if (!pfc) agree("drops per run", &Sample::drops, false);
    }
    void static_threshold_reserve_and_resume_offset_take_effect() {
        const Run base = run_reference("incast", "timely");
        const size_t pauses = base.results[0].pfc.size();
        // A static threshold of 100 KB per (port, priority) pauses far sooner than the dynamic ~4.2 MB.
        const Run low = run_reference("incast", "timely", 1, [](Scenario& s) {
            s.network.pfc_dynamic_threshold = false;
            s.network.pfc_static_threshold = Bytes(100000);
        });
        QVERIFY(low.results[0].pfc.size() > 2 * pauses);
        QVERIFY(low.results[0].pfc.front().time < base.results[0].pfc.front().time);
        // The even split (buffer less headroom and reserve over the ports: about 8.3 MB on a 4-port switch)
        // is above the dynamic threshold's first value, so pauses come later than with the dynamic one.
        const Run split = run_reference("incast", "timely", 1, [](Scenario& s) { s.network.pfc_dynamic_threshold = false; });
        QVERIFY(split.results[0].pfc.empty() || split.results[0].pfc.front().time > base.results[0].pfc.front().time);
        // The reserve counts before the shared buffer does: a 1 MB reserve delays the first pause.
        const Run reserve = run_reference("incast", "timely", 1, [](Scenario& s) { s.network.pfc_port_reserve = Bytes(1 << 20); });
        QVERIFY(reserve.results[0].pfc.front().time > base.results[0].pfc.front().time);
        // A larger resume offset resumes later, so fewer pause/resume cycles fit.
        const Run offset = run_reference("incast", "timely", 1, [](Scenario& s) { s.network.pfc_resume_offset = Bytes(2000000); });
        QVERIFY(offset.results[0].pfc.size() != pauses);
        QCOMPARE(offset.results[0].drops, 0u);
    }
    void acks_in_the_control_queue_stay_out_of_a_paused_class() {
        // Seven senders under one leaf into one host under the other (no CC: PFC alone holds them back, and a
        // 1 MB resume offset resumes a port only once its buffer is empty), while six of the paused senders
        // each receive a 4 MB flow. With cc.ack_high_priority their NICs keep sending ACKs while paused; in the
        // data's class at the switch ("data", the reference's) the ACKs fill the paused port's headroom and the
        // leaf drops them; in queue 0 ("control") they take no buffer and nothing is dropped.
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 7; ++i) flows.push_back({{"src", i}, {"dst", 8}, {"size", "4MB"}});
        for (int i = 0; i < 6; ++i) flows.push_back({{"src", 9 + i}, {"dst", i}, {"size", "4MB"}});
        auto run = [&](const char* queue) {
            const nlohmann::json doc = {
                {"format", "orrery-scenario"}, {"version", 1},
                {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 8},
                              {"link_defaults", {{"all", {{"rate", "100Gbps"}, {"delay", "1us"}}}}}}},
                {"network", {{"buffer_per_switch", "1MiB"}, {"pfc", {{"resume_offset", "1MB"}}}, {"ack", {{"switch_queue", queue}}}}},
                {"cc", {{"algorithm", "fixed"}, {"ack_high_priority", true}}},
                {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            const LoadedScenario s = load_scenario_document(doc, "acks.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
            return run_cpu(b, RunOptions())[0];
        };
        const ExperimentResult data = run("data"), control = run("control");
        qInfo("ACKs in the data's class: %u drops, %zu PFC frames; in queue 0: %u drops, %zu PFC frames", data.drops, data.pfc.size(), control.drops,
              control.pfc.size());
        QVERIFY2(data.drops > 0, "no ACK was dropped in the data's class: this tests nothing");
        QCOMPARE(control.drops, 0u);
        for (const ExperimentResult* r : {&data, &control}) {
            QCOMPARE(r->flows.size(), flows.size());
            for (const FlowResult& fr : r->flows) QVERIFY(fr.finish != net::kNever);
        }
    }
    void a_buffer_smaller_than_headroom_and_reserve_is_refused() {
        Diagnostics warnings;
        auto job = load_hpcc_job(kRef / "config_incast_timely.txt", kRef, PresetLibrary(), warnings);
        job->loaded.scenarios[0].network.pfc_port_reserve = Bytes(16 << 20);
        try {
            compile_batch({job->input});
            QFAIL("compiled a switch whose reserve exceeds its buffer");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("network.pfc.port_reserve") != std::string::npos, e.what());
        }
    }
    void identical_on_any_thread_count() {
        const Run one = run_reference("incast", "dcqcn", 1);
        for (int threads : {2, 3, 5}) {
            const Run many = run_reference("incast", "dcqcn", threads);
            QCOMPARE(our_fcts(many), our_fcts(one));
            QCOMPARE(many.results[0].pfc.size(), one.results[0].pfc.size());
            for (size_t i = 0; i < one.results[0].pfc.size(); ++i) QCOMPARE(many.results[0].pfc[i].time, one.results[0].pfc[i].time);
        }
    }
    void every_transmission_under_way_is_among_its_nodes_next_events() {
        // A switch port that starts sending with nothing queued gets no completion event (net/switch.h,
        // switch_settle). At every step's end such a port must be idle or its completion must still bound the
        // node's next event, as the event did: the experiment's clock jumps by those next events, and skipping
        // samples and decides at step ends (without it, GPT-3 13B under HPCC ended in other skips).
        Diagnostics warnings;
        auto job = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), warnings);
        Batch b = compile_batch({job->input});
        b.params[0].sample_interval = 1'000'000;  // a step end every 1 us is checked
        uint64_t checked = 0, without_event = 0, samples = 0;
        QString broken;
        RunOptions options;
        options.on_sample = [&](uint32_t, int64_t t) {
            ++samples;
            const int64_t end = t + 1;
            for (uint32_t row = 0; row < b.port.size(); ++row) {
                if (!b.tx[row].busy) continue;
                ++checked;
                const uint32_t node = b.port[row].node;
                if (b.times[row].tx_done == net::kNever) ++without_event;
                if (b.tx[row].busy_until < end || b.out[node].next_event > b.tx[row].busy_until)
                    broken = QString("port %1 at %2 ps: sending until %3 ps, its node's next event %4 ps").arg(row).arg(end).arg(b.tx[row].busy_until).arg(b.out[node].next_event);
            }
        };
        run_cpu(b, options);
        qInfo("%llu step ends, %llu ports sending at them, %llu of those without a completion event", (unsigned long long)samples, (unsigned long long)checked,
              (unsigned long long)without_event);
        QVERIFY2(without_event > 0, "no port was sending without a completion event at a step's end: this tests nothing");
        QVERIFY2(broken.isEmpty(), qPrintable(broken));
    }
    void identical_when_steps_are_split_over_threads() {
        // The k = 8 ring: ~15,000 events per step, so (unlike the reference scenarios) its steps are split
        // over the threads, and blocks taken by one worker are given back by another.
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 128; ++i) flows.push_back({{"src", i}, {"dst", (i + 1) % 128}, {"size", "1MB"}});
        const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", 8}}},
                                    {"cc", {{"algorithm", "dcqcn"}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        const LoadedScenario s = load_scenario_document(doc, "ring8.json", ".", PresetLibrary());
        const Fabric f = build_fabric(s.scenarios[0].topology);
        auto run = [&](int threads) {
            Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
            RunOptions o;
            o.threads = threads;
            return run_cpu(b, o)[0];
        };
        const ExperimentResult one = run(1);
        QCOMPARE(one.split_steps, uint64_t(0));
        QCOMPARE(one.flows.size(), size_t(128));
        for (int threads : {2, 3}) {
            const ExperimentResult many = run(threads);
            QVERIFY2(many.split_steps > many.steps / 2, qPrintable(QString("%1 of %2 steps split").arg(many.split_steps).arg(many.steps)));
            QCOMPARE(many.events, one.events);
            QCOMPARE(many.flows.size(), one.flows.size());
            for (size_t i = 0; i < one.flows.size(); ++i) {
                QCOMPARE(many.flows[i].flow, one.flows[i].flow);
                QCOMPARE(many.flows[i].finish, one.flows[i].finish);
            }
        }
    }
    void chunk_shares_hand_out_every_chunk_once() {
        // Two threads, ten chunks: each starts at the front of its own half, then takes the back of the other's.
        ChunkShares two(2, 10);
        QCOMPARE(two.take(0), 0u);
        QCOMPARE(two.take(1), 5u);
        for (uint32_t c : {6u, 7u, 8u, 9u, 4u, 3u, 2u}) QCOMPARE(two.take(1), c);
        QCOMPARE(two.take(0), 1u);
        QCOMPARE(two.take(0), ChunkShares::kNone);
        QCOMPARE(two.take(1), ChunkShares::kNone);
        two.reset();
        QCOMPARE(two.take(1), 5u);
        // Four threads racing over 100,000 chunks: every chunk exactly once, whatever the interleaving.
        constexpr uint32_t kChunks = 100000;
        ChunkShares four(4, kChunks);
        std::vector<std::vector<uint32_t>> taken(4);
        std::vector<std::thread> pool;
        for (int t = 0; t < 4; ++t)
            pool.emplace_back([&, t] {
                for (uint32_t c; (c = four.take(t)) != ChunkShares::kNone;) taken[t].push_back(c);
            });
        for (std::thread& t : pool) t.join();
        std::vector<uint32_t> all;
        for (const auto& v : taken) all.insert(all.end(), v.begin(), v.end());
        std::sort(all.begin(), all.end());
        QCOMPARE(all.size(), size_t(kChunks));
        for (uint32_t i = 0; i < kChunks; ++i) QCOMPARE(all[i], i);
    }
    void identical_alone_or_in_a_batch() {
        Diagnostics w;
        auto a = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), w);
        auto b = load_hpcc_job(kRef / "config_ring_hpcc.txt", kRef, PresetLibrary(), w);
        auto c = load_hpcc_job(kRef / "config_incast_timely.txt", kRef, PresetLibrary(), w);
        // Alone in whole-line packet slots, as in the batch with the HPCC ring (net/blocks.h), so that its memory
        // share below compares like with like; its results would be the same in half-line slots (test_blocks).
        Batch alone = compile_batch({a->input}, nullptr, PacketSlots::whole_line);
        const auto solo = run_cpu(alone, RunOptions{});
        Batch together = compile_batch({b->input, a->input, c->input});
        QCOMPARE(together.arena->packet_shift(), net::kFullPacketShift);
        RunOptions two;
        two.threads = 2;
        const auto batch = run_cpu(together, two);
        QCOMPARE(batch[1].flows.size(), solo[0].flows.size());
        for (size_t i = 0; i < solo[0].flows.size(); ++i) {
            QCOMPARE(batch[1].flows[i].finish, solo[0].flows[i].finish);
            QCOMPARE(together.flow[batch[1].flows[i].flow].sport, alone.flow[solo[0].flows[i].flow].sport);
        }
        QCOMPARE(batch[1].pfc.size(), solo[0].pfc.size());
        // Each experiment's memory share (printed by run --json): its rows of the tables, which add up to the
        // batch's tables, and the most packet storage it held, which the batch's committed arena covers; the
        // incast's share in the batch is within 1 % of what it takes alone.
        const double block_bytes = double(together.arena->bytes_per_block());
        double rows = 0;
        int64_t largest_peak = 0;
        for (uint32_t e = 0; e < 3; ++e) {
            const ExperimentSlice& x = together.experiments[e];
            QVERIFY(x.peak_blocks > 0);
            largest_peak = std::max(largest_peak, x.peak_blocks);
            rows += double(together.experiment_memory_bytes(e)) - double(x.peak_blocks) * block_bytes;
        }
        const double committed = double(together.arena->committed_blocks()) * block_bytes;
        const double tables = double(together.memory_bytes()) - committed;
        QVERIFY2(std::abs(rows / tables - 1) < 0.01, qPrintable(QString("%1 B of rows in shares, %2 B of tables in the batch").arg(rows).arg(tables)));
        QVERIFY(committed >= double(largest_peak) * block_bytes);
        const double in_batch = double(together.experiment_memory_bytes(1)), by_itself = double(alone.experiment_memory_bytes(0));
        QVERIFY2(std::abs(in_batch / by_itself - 1) < 0.01, qPrintable(QString("%1 B in the batch, %2 B alone").arg(in_batch).arg(by_itself)));
    }

    void without_congestion_control_flows_run_at_line_rate_and_lean_on_pfc() {
        // "fixed": no CC, the baseline a CC is measured against. Alone on its path a flow finishes exactly as
        // under DCQCN (nothing is marked, so DCQCN never cuts); eight senders into one receiver keep sending at
        // line rate, so the switch pauses them far more often than under DCQCN, and still every flow finishes.
        auto run = [&](const nlohmann::json& flows, const std::string& cc) {
            LoadedScenario s = scenario_with_flows({{"generator", "single-switch"}, {"hosts", 9}}, flows, cc);
            const Fabric f = build_fabric(s.scenarios[0].topology);
            return run_loaded(s, f)[0];
        };
        const nlohmann::json one = nlohmann::json::array({{{"src", 1}, {"dst", 0}, {"size", "4MB"}}});
        QCOMPARE(run(one, "fixed").flows[0].finish, run(one, "dcqcn").flows[0].finish);
        nlohmann::json incast = nlohmann::json::array();
        for (int h = 1; h <= 8; ++h) incast.push_back({{"src", h}, {"dst", 0}, {"size", "4MB"}});
        const ExperimentResult fixed = run(incast, "fixed"), dcqcn = run(incast, "dcqcn");
        for (const FlowResult& f : fixed.flows) QVERIFY(f.finish != net::kNever);
        QCOMPARE(fixed.drops, 0u);
        qInfo("8-to-1 incast of 4 MB flows: PFC events %zu without CC, %zu under DCQCN", fixed.pfc.size(), dcqcn.pfc.size());
        QVERIFY(fixed.pfc.size() > 2 * std::max<size_t>(1, dcqcn.pfc.size()));
    }
    void a_fixed_rate_holds_whatever_the_network_says() {
        // cc.fixed.rate pins each sender: a 4 MB flow alone on a 100 Gb/s path at 25 Gb/s takes four times its
        // serialization at line rate (payload plus headers), with rate pacing on or off; eight such senders into
        // one receiver add up to twice its line rate at 25 Gb/s each, and are paused; at 10 Gb/s each they are not.
        auto run = [&](const nlohmann::json& flows, const std::string& rate, bool bound) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "single-switch"}, {"hosts", 9}}},
                                  {"cc", {{"algorithm", "fixed"}, {"rate_bound", bound}, {"fixed", {{"rate", rate}}}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
            LoadedScenario s = load_scenario_document(doc, "fixed.json", ".", PresetLibrary());
            const Fabric f = build_fabric(s.scenarios[0].topology);
            return run_loaded(s, f)[0];
        };
        const nlohmann::json one = nlohmann::json::array({{{"src", 1}, {"dst", 0}, {"size", "4MB"}}});
        const double line = double(run(one, "0Gbps", true).flows[0].finish), quarter = double(run(one, "25Gbps", true).flows[0].finish);
        qInfo("4 MB alone: %.1f us at line rate, %.1f us at 25 Gb/s", line / 1e6, quarter / 1e6);
        QVERIFY2(std::abs(quarter / line - 4) < 0.05, qPrintable(QString::number(quarter / line)));
        QCOMPARE(run(one, "25Gbps", false).flows[0].finish, int64_t(quarter));
        nlohmann::json incast = nlohmann::json::array();
        for (int h = 1; h <= 8; ++h) incast.push_back({{"src", h}, {"dst", 0}, {"size", "4MB"}});
        QVERIFY(!run(incast, "25Gbps", true).pfc.empty());
        QVERIFY(run(incast, "10Gbps", true).pfc.empty());
    }
    void only_a_flows_own_cc_state_is_written() {
        // A batch holds HPCC, DCQCN, TIMELY and DCTCP state for every flow (runtime/huge_page_table.h: CcTable), but a
        // flow only ever touches its own CC's: the other tables' pages stay unwritten, so they hold no memory, and
        // an experiment's memory share counts its own CC's rows alone. Six DCQCN incasts, run; an HPCC ring beside one.
        Diagnostics w;
        auto dcqcn = load_hpcc_job(kRef / "config_incast_dcqcn.txt", kRef, PresetLibrary(), w);
        auto hpcc = load_hpcc_job(kRef / "config_ring_hpcc.txt", kRef, PresetLibrary(), w);
        Batch b = compile_batch({dcqcn->input, dcqcn->input, dcqcn->input, dcqcn->input, dcqcn->input, dcqcn->input});
        const auto results = run_cpu(b, RunOptions{});
        QCOMPARE(results.size(), size_t(6));
        QVERIFY(!results[0].flows.empty());
        const long page = sysconf(_SC_PAGESIZE);
        auto resident_pages = [&](const void* data, size_t bytes) {
            const uintptr_t first = reinterpret_cast<uintptr_t>(data) / uintptr_t(page) * uintptr_t(page);
            const size_t length = reinterpret_cast<uintptr_t>(data) + bytes - first;
            std::vector<unsigned char> in_core((length + size_t(page) - 1) / size_t(page));
            if (mincore(reinterpret_cast<void*>(first), length, in_core.data()) != 0) return size_t(-1);
            return size_t(std::count_if(in_core.begin(), in_core.end(), [](unsigned char c) { return c & 1; }));
        };
        QVERIFY(b.hpcc.size() * sizeof(net::HpccState) >= 4 * size_t(page));
        QCOMPARE(resident_pages(b.hpcc.data(), b.hpcc.size() * sizeof(net::HpccState)), size_t(0));
        QCOMPARE(resident_pages(b.timely.data(), b.timely.size() * sizeof(net::TimelyState)), size_t(0));
        QCOMPARE(resident_pages(b.dctcp.data(), b.dctcp.size() * sizeof(net::DctcpState)), size_t(0));
        QVERIFY(resident_pages(b.dcqcn.data(), b.dcqcn.size() * sizeof(net::DcqcnState)) > 0);
        // In a mixed batch each experiment's share holds its own CC's rows: the ring's flows cost HPCC's 256 bytes
        // each, the incast's DCQCN's 64 (identical_alone_or_in_a_batch: the shares add up to the batch's tables).
        Batch mixed = compile_batch({hpcc->input, dcqcn->input});
        QCOMPARE(mixed.cc_state_bytes(0), size_t(mixed.experiments[0].flow_end - mixed.experiments[0].flow_begin) * sizeof(net::HpccState));
        QCOMPARE(mixed.cc_state_bytes(1), size_t(mixed.experiments[1].flow_end - mixed.experiments[1].flow_begin) * sizeof(net::DcqcnState));
    }
};

QTEST_GUILESS_MAIN(TestNet)
#include "test_net.moc"
