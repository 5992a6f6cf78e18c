// One batch split over ranks (runtime/partition.h), with threads standing in for MPI ranks: each "rank" has
// its own copy of the batch and talks to the others only through PartitionComm, so what one rank's nodes
// send another must travel through the exchange. Results must equal one process's, field by field.
#include <QtTest>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/partition.h"
#include "scenario/build.h"
#include "scenario/load.h"

using namespace orrery;

namespace {

using Bytes = std::vector<uint8_t>;

// Mailboxes between threads, keyed by (from, to, kind, sequence): what MPI's point-to-point messages are to ranks.
struct Hub {
    std::mutex lock;
    std::condition_variable posted;
    std::map<std::tuple<int, int, int, uint64_t>, Bytes> mail;

    void post(int from, int to, int kind, uint64_t seq, Bytes bytes) {
        {
            std::lock_guard<std::mutex> g(lock);
            mail[{from, to, kind, seq}] = std::move(bytes);
        }
        posted.notify_all();
    }
    Bytes wait(int from, int to, int kind, uint64_t seq) {
        std::unique_lock<std::mutex> g(lock);
        const auto key = std::make_tuple(from, to, kind, seq);
        posted.wait(g, [&] { return mail.count(key) != 0; });
        Bytes bytes = std::move(mail[key]);
        mail.erase(key);
        return bytes;
    }
};

struct ThreadComm final : PartitionComm {
    Hub& hub;
    int me, count;
    uint64_t exchanges = 0, gathers = 0;
    ThreadComm(Hub& h, int rank, int ranks) : hub(h), me(rank), count(ranks) {}
    int rank() const override { return me; }
    int ranks() const override { return count; }
    void exchange(const std::vector<int>& peers, const std::vector<Bytes>& to, std::vector<Bytes>& from) override {
        for (size_t i = 0; i < peers.size(); ++i) hub.post(me, peers[i], 0, exchanges, to[i]);
        for (size_t i = 0; i < peers.size(); ++i) from[i] = hub.wait(peers[i], me, 0, exchanges);
        ++exchanges;
    }
    void allgather(const Bytes& mine, std::vector<Bytes>& all) override {
        for (int r = 0; r < count; ++r)
            if (r != me) hub.post(me, r, 1, gathers, mine);
        all.assign(size_t(count), {});
        for (int r = 0; r < count; ++r) all[size_t(r)] = r == me ? mine : hub.wait(r, me, 1, gathers);
        ++gathers;
    }
};

// A k-ary fat-tree: a shifted permutation of mixed sizes with staggered starts, plus an incast to host 0 that
// makes switches pause their upstream (PFC), and the queue monitor on.
nlohmann::json fabric_load(int k, const std::string& cc) {
    const int hosts = k * k * k / 4;
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i) {
        const int size = 20000 + (i * 7919) % 180000;
        flows.push_back({{"src", i}, {"dst", (i + hosts / 2 + 1) % hosts}, {"size", std::to_string(size) + "B"}, {"start", std::to_string((i * 37) % 500) + "ns"}});
    }
    for (int i = 1; i < hosts; i += 2) flows.push_back({{"src", i}, {"dst", 0}, {"size", "150KB"}, {"start", "2us"}});
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"topology", {{"generator", "fat-tree"}, {"k", k}}},
            {"cc", {{"algorithm", cc}}},
            {"network", {{"buffer_per_switch", "600KB"}}},
            {"workload", {{"kind", "flows"}, {"flows", flows}}},
            {"output", {{"queue_monitor", {{"start", "0us"}, {"end", "1s"}, {"interval", "1us"}}}}}};
}

struct Job {
    std::vector<LoadedScenario> loaded;
    std::vector<Fabric> fabrics;
    std::vector<ExperimentInput> inputs;
};

// Experiments of one batch: one per CC, each over the same kind of fabric, and each under its load balancing
// where `balancing` names one (else ECMP).
std::unique_ptr<Job> make_job(int k, const std::vector<std::string>& ccs, const std::vector<std::string>& balancing = {}) {
    auto job = std::make_unique<Job>();
    job->loaded.reserve(ccs.size());
    job->fabrics.reserve(ccs.size());
    for (size_t i = 0; i < ccs.size(); ++i) {
        nlohmann::json doc = fabric_load(k, ccs[i]);
        if (i < balancing.size()) {
            // "adaptive/out_of_order": a mode with its NIC delivery
            const size_t slash = balancing[i].find('/');
            doc["network"]["load_balancing"] = balancing[i].substr(0, slash);
            if (slash != std::string::npos) doc["network"]["nic"] = {{"delivery", balancing[i].substr(slash + 1)}};
        }
        job->loaded.push_back(load_scenario_document(doc, "partition.json", ".", PresetLibrary()));
        job->fabrics.push_back(build_fabric(job->loaded.back().scenarios[0].topology));
    }
    for (size_t i = 0; i < ccs.size(); ++i) {
        const Scenario& s = job->loaded[i].scenarios[0];
        job->inputs.push_back({ccs[i] + (i < balancing.size() ? "-" + balancing[i] : ""), &s, &job->fabrics[i], workload_flows(s)});
    }
    return job;
}

// Every rank's results (each ends with the whole of them: rank 0 stores them, the others could).
std::vector<std::vector<ExperimentResult>> run_over_threads(const Job& job, int ranks, std::vector<PartitionStats>& stats) {
    Hub hub;
    std::vector<std::vector<ExperimentResult>> results(static_cast<size_t>(ranks));
    std::vector<std::thread> threads;
    std::vector<std::string> errors(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            try {
                Batch batch = compile_batch(job.inputs);
                const PartitionPlan plan = plan_partition(batch, ranks);
                ThreadComm comm(hub, r, ranks);
                std::vector<PartitionStats> gathered;
                results[size_t(r)] = run_partitioned(batch, RunOptions{}, plan, comm, &gathered);
                if (r == 0) stats = gathered;
            } catch (const std::exception& e) {
                errors[size_t(r)] = e.what();
            }
        });
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < ranks; ++r)
        if (!errors[size_t(r)].empty()) qFatal("rank %d: %s", r, errors[size_t(r)].c_str());
    return results;
}

void expect_same(const std::vector<ExperimentResult>& got, const std::vector<ExperimentResult>& want) {
    QCOMPARE(got.size(), want.size());
    for (size_t e = 0; e < want.size(); ++e) {
        const ExperimentResult &g = got[e], &w = want[e];
        QCOMPARE(g.flows.size(), w.flows.size());
        for (size_t i = 0; i < w.flows.size(); ++i) {
            QCOMPARE(g.flows[i].flow, w.flows[i].flow);
            QCOMPARE(g.flows[i].finish, w.flows[i].finish);
        }
        QCOMPARE(g.pfc.size(), w.pfc.size());
        for (size_t i = 0; i < w.pfc.size(); ++i) {
            QCOMPARE(g.pfc[i].time, w.pfc[i].time);
            QCOMPARE(g.pfc[i].node, w.pfc[i].node);
            QCOMPARE(g.pfc[i].ifindex, w.pfc[i].ifindex);
            QCOMPARE(g.pfc[i].pause, w.pfc[i].pause);
        }
        QCOMPARE(g.queues.size(), w.queues.size());
        for (size_t i = 0; i < w.queues.size(); ++i) {
            QCOMPARE(g.queues[i].time, w.queues[i].time);
            QCOMPARE(g.queues[i].ports.size(), w.queues[i].ports.size());
            for (size_t p = 0; p < w.queues[i].ports.size(); ++p) QVERIFY(g.queues[i].ports[p].counts == w.queues[i].ports[p].counts);
        }
        QCOMPARE(g.events, w.events);
        QCOMPARE(g.packet_hops, w.packet_hops);
        QCOMPARE(g.steps, w.steps);
        QCOMPARE(g.end_time, w.end_time);
        QCOMPARE(g.drops, w.drops);
    }
}

}  // namespace

class TestPartition : public QObject {
    Q_OBJECT
private slots:
    void the_plan_keeps_pods_whole_and_balances_the_ranks() {
        const auto job = make_job(8, {"dcqcn"});
        const Batch batch = compile_batch(job->inputs);
        for (int ranks : {2, 3, 4}) {
            const PartitionPlan plan = plan_partition(batch, ranks);
            // Every host is with its edge switch, and an edge switch with its pod's aggregation switches
            // wherever its pod is not cut: count links that cross between ranks.
            uint32_t crossing = 0, host_links_cut = 0;
            for (uint32_t row = 0; row < batch.port.size(); ++row) {
                const uint32_t a = batch.port[row].node, b = batch.port[batch.port[row].peer_port].node;
                if (plan.owner[a] == plan.owner[b]) continue;
                ++crossing;
                if (batch.node_role[a] == net::kRoleHost || batch.node_role[b] == net::kRoleHost) ++host_links_cut;
            }
            QCOMPARE(host_links_cut, 0u);
            // A k = 8 fat-tree has 128 host links, 128 edge-aggregation and 128 aggregation-core links: cutting
            // only core links, at most all of them, and at least those of a balanced cut, cross.
            QVERIFY2(crossing <= 2 * 128, qPrintable(QString::number(crossing)));
            const auto [lightest, heaviest] = std::minmax_element(plan.weight.begin(), plan.weight.end());
            QVERIFY2(double(*heaviest) <= 1.15 * double(*lightest), qPrintable(QString("%1 against %2 with %3 ranks").arg(*heaviest).arg(*lightest).arg(ranks)));
        }
        const PartitionPlan two = plan_partition(batch, 2);
        uint32_t core_cut = 0;
        for (uint32_t row = 0; row < batch.port.size(); ++row)
            if (two.owner[batch.port[row].node] != two.owner[batch.port[batch.port[row].peer_port].node]) ++core_cut;
        QCOMPARE(core_cut, 2u * 64);  // pods 0-3 and 4-7 apart: half of the 128 core links, each direction
    }

    void two_and_three_ranks_give_one_process_results_k4() {
        const auto job = make_job(4, {"dcqcn", "hpcc"});
        Batch one = compile_batch(job->inputs);
        const std::vector<ExperimentResult> want = run_cpu(one, RunOptions{});
        QVERIFY(!want[0].pfc.empty());  // the incast pauses
        QVERIFY(!want[0].queues.empty());
        for (int ranks : {2, 3}) {
            std::vector<PartitionStats> stats;
            for (const auto& rank_results : run_over_threads(*job, ranks, stats)) expect_same(rank_results, want);
            for (const PartitionStats& s : stats) {
                QVERIFY(s.packets_sent > 0);  // packets did cross
                QVERIFY(s.boundary_rings > 0);
                QCOMPARE(s.steps, stats[0].steps);
                QVERIFY(s.bytes_sent >= s.packets_sent * 64);  // with HPCC in the batch a packet crosses as a whole line
            }
        }
    }

    void two_and_three_ranks_give_one_process_results_k8() {
        const auto job = make_job(8, {"dcqcn", "timely"});
        Batch one = compile_batch(job->inputs);
        const std::vector<ExperimentResult> want = run_cpu(one, RunOptions{});
        QVERIFY(!want[0].pfc.empty() && !want[1].pfc.empty());
        for (int ranks : {2, 3}) {
            std::vector<PartitionStats> stats;
            for (const auto& rank_results : run_over_threads(*job, ranks, stats)) expect_same(rank_results, want);
            uint64_t nodes = 0;
            for (const PartitionStats& s : stats) {
                nodes += s.nodes;
                // Without HPCC a packet crosses as its half-line slot (net/blocks.h), plus 8 bytes per ring and step.
                QVERIFY(s.packets_sent > 0);
                QVERIFY2(s.bytes_sent < s.packets_sent * 40, qPrintable(QString("%1 B for %2 packets").arg(s.bytes_sent).arg(s.packets_sent)));
            }
            QCOMPARE(nodes, uint64_t(one.node_role.size()));
        }
    }

    void every_load_balancing_mode_gives_one_process_results() {
        // Spraying, adaptive routing and flowlets choose a packet's port at each switch from the switch's own
        // state; a switch is on one rank, so the choice, and every result, is the one process's.
        const auto job = make_job(4, {"dcqcn", "dcqcn", "dcqcn", "dcqcn", "dcqcn"}, {"ecmp", "spray", "adaptive", "flowlet", "spray/out_of_order"});
        Batch one = compile_batch(job->inputs);
        const std::vector<ExperimentResult> want = run_cpu(one, RunOptions{});
        std::set<std::vector<int64_t>> finishes;
        for (const ExperimentResult& r : want) {
            std::vector<int64_t> f;
            for (const FlowResult& x : r.flows) f.push_back(x.finish);
            finishes.insert(f);
        }
        QCOMPARE(finishes.size(), want.size());  // each mode routes differently
        for (int ranks : {2, 3}) {
            std::vector<PartitionStats> stats;
            for (const auto& rank_results : run_over_threads(*job, ranks, stats)) expect_same(rank_results, want);
        }
    }

    void skipping_and_drivers_are_refused() {
        const auto job = make_job(4, {"dcqcn"});
        Batch batch = compile_batch(job->inputs);
        Hub hub;
        ThreadComm comm(hub, 0, 1);
        const PartitionPlan plan = plan_partition(batch, 1);
        RunOptions driven;
        driven.drive = [](uint32_t, int64_t, uint32_t) { return DriverStatus{}; };
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, run_partitioned(batch, driven, plan, comm));
        batch.experiments[0].skipping.enabled = true;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, run_partitioned(batch, RunOptions{}, plan, comm));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_partition(batch, 0));
    }
};

QTEST_APPLESS_MAIN(TestPartition)
#include "test_partition.moc"
