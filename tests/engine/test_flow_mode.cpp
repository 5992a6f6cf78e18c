// engine/workload flow mode: max-min fair fluid rates worked out by hand, a transfer alone equal to the
// reference's standalone FCT, a ring with one channel per NIC against its closed form, NCCL-like channel
// placement (every NIC of a server carries the same bytes), and NVLink shared by concurrent collectives.
#include <QtTest>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/flow_mode.h"
#include "workload/fluid.h"
#include "workload/llm_driver.h"
#include "workload/llm_job.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

LoadedScenario load(const nlohmann::json& doc) { return load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false}); }

nlohmann::json rail_fabric(int servers, int per_server) {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", servers * per_server}, {"gpus_per_server", per_server},
                          {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}}},
            {"cc", {{"algorithm", "dcqcn"}}}};
}

// A job with no model: the test emits its collectives by hand.
struct HandJob {
    LlmWorkload w;
    LlmJob job;
    HandJob(const Fabric& f, int world) {
        w.parallel.dp = world;
        job.workload = &w;
        job.place = place_ranks(w.parallel, f);
        job.graph.world = uint32_t(world);
    }
};

std::vector<uint32_t> iota_ranks(uint32_t n) {
    std::vector<uint32_t> r(n);
    for (uint32_t i = 0; i < n; ++i) r[i] = i;
    return r;
}

double flow_time(HandJob& h, const Fabric& f, const WorkloadTables& t, const WireFormat& wire = {}) {
    index_transfers(h.job);
    return run_llm_flow(h.job, f, build_routes(f), wire, t).iteration_time_s;
}

}  // namespace

class TestFlowMode : public QObject {
    Q_OBJECT
private slots:
    void max_min_fair_rates_by_hand() {
        FluidNetwork net;
        const uint32_t a = net.add_resource(10e9), b = net.add_resource(3e9);
        // Two flows on one link get half each.
        net.start(0, 1e9, {{a, 1}}, 0);
        net.start(1, 1e9, {{a, 1}}, 0);
        net.settle(0);
        QCOMPARE(net.rate_of(0), 5e9);
        QCOMPARE(net.rate_of(1), 5e9);
        // A third flow also crossing the 3 GB/s link is held there; the other two share what it leaves.
        net.start(2, 1e9, {{a, 1}, {b, 1}}, 0);
        net.settle(0);
        QVERIFY(std::abs(net.rate_of(2) - 3e9) < 1);
        QVERIFY(std::abs(net.rate_of(0) - 3.5e9) < 1);
        // A weight counts its bytes: a flow putting 2 bytes on b per byte delivered gets 1.5 GB/s there.
        net.start(3, 1e9, {{b, 2}}, 0);
        net.settle(0);
        QVERIFY(std::abs(net.rate_of(2) - 1e9) < 1);  // b: 1 + 2 × 1 = 3 GB/s
        QVERIFY(std::abs(net.rate_of(3) - 1e9) < 1);
        QVERIFY(std::abs(net.rate_of(0) - 4.5e9) < 1);
        // Drain order and times: flows 0 and 1 (1 GB at 4.5 GB/s) first.
        const int64_t first = net.next_finish();
        QCOMPARE(first, int64_t(std::ceil(1e9 / 4.5e9 * 1e12)));
        std::vector<uint32_t> done;
        net.pop_finished(done);
        std::sort(done.begin(), done.end());
        QCOMPARE(done, (std::vector<uint32_t>{0, 1}));
        net.settle(first);
        QVERIFY(std::abs(net.rate_of(2) - 1e9) < 1);  // still held by b
    }

    // A failed link (capacity 0) stalls what crosses it, a degraded one slows it; a rerouted flow carries on
    // with the bytes it has left, and a capacity restored sets a stalled flow going again.
    void capacities_change_and_flows_move_during_the_run() {
        FluidNetwork net;
        const uint32_t a = net.add_resource(10e9), b = net.add_resource(10e9);
        net.start(0, 1e9, {{a, 1}}, 0);
        net.start(1, 1e9, {{a, 1}}, 0);
        net.settle(0);
        const int64_t t1 = 50'000'000;  // 50 us: 250 KB of each drained at 5 GB/s
        const double left = 1e9 - 5e9 * 50e-6;
        net.set_capacity(a, 0);
        net.settle(t1);
        QCOMPARE(net.rate_of(0), 0.0);
        QCOMPARE(net.next_finish(), FluidNetwork::kNoFinish);
        QCOMPARE(net.tags_on(a).size(), size_t(2));
        const int64_t t2 = 100'000'000;  // flow 0 moves to b at 100 us with what it had left at 50 us
        net.reroute(0, {{b, 1}}, t2);
        net.settle(t2);
        QCOMPARE(net.rate_of(0), 10e9);
        QCOMPARE(net.tags_on(a), std::vector<uint32_t>{1});
        QCOMPARE(net.next_finish(), t2 + int64_t(std::ceil(left / 10e9 * 1e12)));
        net.set_capacity(a, 2.5e9);  // flow 1 comes back on a degraded link
        net.settle(t2);
        QVERIFY(std::abs(net.rate_of(1) - 2.5e9) < 1);
        std::vector<uint32_t> done;
        net.pop_finished(done);
        QCOMPARE(done, std::vector<uint32_t>{0});
        net.settle(t2 + int64_t(std::ceil(left / 10e9 * 1e12)));
        QCOMPARE(net.next_finish(), t2 + int64_t(std::ceil(left / 2.5e9 * 1e12)));
    }

    void two_transfers_on_one_uplink_take_twice_as_long() {
        const LoadedScenario sc = load(rail_fabric(2, 1));
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        HandJob one(f, 2), two(f, 2);
        const CollectiveContext c1{one.job.place, t, one.w.gpu, one.w.collectives}, c2{two.job.place, t, two.w.gpu, two.w.collectives};
        const int64_t S = 400'000'000;
        one.w.collectives.channels = two.w.collectives.channels = 1;
        one.w.collectives.chunk = two.w.collectives.chunk = Bytes(S);
        emit_send(one.job.graph, c1, Group::pp, 0, 1, S, UINT32_MAX, "a");
        emit_send(two.job.graph, c2, Group::pp, 0, 1, S, UINT32_MAX, "a");
        emit_send(two.job.graph, c2, Group::pp, 0, 1, S, UINT32_MAX, "b");
        const double alone = flow_time(one, f, t), shared = flow_time(two, f, t);
        // Alone: the reference's standalone FCT, exactly as the α-β mode computes it.
        index_transfers(one.job);
        const double ab = run_llm_analytic(one.job, f, build_routes(f), 1000).iteration_time_s;
        QVERIFY2(std::abs(alone - ab) < 2e-12, qPrintable(QString("flow %1 s, α-β %2 s").arg(alone, 0, 'g', 12).arg(ab, 0, 'g', 12)));
        // Shared: the bandwidth term doubles, the latency does not.
        const double latency = alone - double(S) * 1.048 / 50e9;  // ACKs use the other direction of each link
        const double expected = 2 * (alone - latency) + latency;
        QVERIFY2(std::abs(shared - expected) / expected < 1e-6, qPrintable(QString("shared %1 s, expected %2 s").arg(shared).arg(expected)));
    }

    void channels_share_a_nic_instead_of_multiplying_it() {
        // N servers of one GPU (one NIC) each: a ring all-reduce takes 2(N−1) steps of S/N bytes through each
        // NIC whatever the channel count — the α-β closed form with one channel, plus the ACKs of the incoming
        // transfer (60 B per 1000-B packet) sharing each uplink, as at packet level. (α-β gives every channel
        // the whole NIC: c channels come out c times faster there.)
        const int N = 4;
        const int64_t S = 64'000'000;
        const LoadedScenario sc = load(rail_fabric(N, 1));
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        auto job_with = [&](HandJob& h, int channels) {
            h.w.collectives.channels = channels;
            const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
            emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::dp, iota_ranks(N), S, std::vector<uint32_t>(N, UINT32_MAX), "ar");
            index_transfers(h.job);
        };
        HandJob one(f, N);
        job_with(one, 1);
        const double ack_term = 2 * (N - 1) * (double(S) / N) * 60 / 1000 * 8 / 400e9;
        const double closed_form = run_llm_analytic(one.job, f, build_routes(f), 1000).iteration_time_s + ack_term;
        for (int channels : {1, 2, 4}) {
            HandJob h(f, N);
            job_with(h, channels);
            const double flow = run_llm_flow(h.job, f, build_routes(f), WireFormat{}, t).iteration_time_s;
            QVERIFY2(std::abs(flow - closed_form) / closed_form < 1e-6,
                     qPrintable(QString("%1 channels: flow %2 s, closed form %3 s").arg(channels).arg(flow, 0, 'g', 10).arg(closed_form, 0, 'g', 10)));
            if (channels > 1) {
                const double ab = run_llm_analytic(h.job, f, build_routes(f), 1000).iteration_time_s;
                QVERIFY(ab < closed_form / (channels * 0.9));  // the α-β mode's extra bandwidth
            }
        }
    }

    void a_channel_per_nic_multiplies_the_bandwidth() {
        // 2 servers × 8 GPUs, a flat ring of all 16: with 8 channels each leaves each server through its own
        // NIC, so the NIC bandwidth term 2(N−1)/N · S/(8·B) drops eightfold from one channel's.
        const int servers = 2, per = 8, n = servers * per;
        const LoadedScenario sc = load(rail_fabric(servers, per));
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        const int64_t S = int64_t(1) << 30;
        const double B = 400e9 / 8 / 1.048;  // payload bytes per second of a NIC
        auto ring = [&](int channels) {
            HandJob h(f, n);
            h.w.collectives.channels = channels;
            const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
            emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::dp, iota_ranks(n), S, std::vector<uint32_t>(n, UINT32_MAX), "ar");
            return flow_time(h, f, t);
        };
        const double one = ring(1), eight = ring(8);
        const double term1 = 2.0 * (n - 1) / n * double(S) / B, term8 = term1 / 8;
        QVERIFY2(one > term1 && eight > term8, qPrintable(QString("1 channel %1 s (NIC term %2 s), 8 channels %3 s (%4 s)").arg(one).arg(term1).arg(eight).arg(term8)));
        // Not exactly 8×: a ring step waits for the previous step's move inside the server too (NVLink, shared
        // by the 7 channels that cross it there), which the NIC-only term leaves out.
        QVERIFY2(one / eight > 4, qPrintable(QString("1 channel %1 s, 8 channels %2 s").arg(one).arg(eight)));
    }

    void channels_leave_a_server_through_every_nic() {
        // A flat ring over 16 servers of 8 GPUs with 8 channels: every NIC of a server sends the same bytes.
        const int servers = 16, per = 8, n = servers * per;
        const LoadedScenario sc = load(rail_fabric(servers, per));
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        for (bool pxn : {false, true}) {
            HandJob h(f, n);
            h.w.collectives.channels = 8;
            h.w.collectives.pxn = pxn;
            const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
            emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::dp, iota_ranks(n), int64_t(1) << 30, std::vector<uint32_t>(n, UINT32_MAX), "ar");
            std::vector<double> sent(per, 0), received(per, 0);
            for (const Op& op : h.job.graph.ops) {
                if (op.kind != OpKind::transfer) continue;
                if (h.job.place.server[op.rank] == 0) sent[size_t(h.job.place.local[op.rank])] += double(op.bytes);
                if (h.job.place.server[op.peer] == 0) received[size_t(h.job.place.local[op.peer])] += double(op.bytes);
            }
            const auto [lo, hi] = std::minmax_element(sent.begin(), sent.end());
            QVERIFY2(*lo > 0 && *hi / *lo < 1.01, qPrintable(QString("pxn %1: NIC bytes from %2 to %3").arg(pxn).arg(*lo).arg(*hi)));
            const auto [rlo, rhi] = std::minmax_element(received.begin(), received.end());
            QVERIFY(*rlo > 0 && *rhi / *rlo < 1.01);
            // With PXN every cross-server transfer stays on its rail.
            if (pxn)
                for (const Op& op : h.job.graph.ops)
                    if (op.kind == OpKind::transfer) QCOMPARE(h.job.place.local[op.rank], h.job.place.local[op.peer]);
        }
    }

    void concurrent_intra_server_collectives_share_nvlink() {
        const LoadedScenario sc = load(rail_fabric(1, 8));
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        const int64_t S = 1LL << 30;
        auto run = [&](int collectives) {
            HandJob h(f, 8);
            const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
            for (int k = 0; k < collectives; ++k)
                emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::tp, iota_ranks(8), S, std::vector<uint32_t>(8, UINT32_MAX), "tp");
            return flow_time(h, f, t);
        };
        const double one = run(1), two = run(2);
        // Alone: the calibrated α-β time.
        const double ab = double(intra_collective_ps(t, "H100", CollectiveKind::all_reduce, 8, S)) * 1e-12;
        QVERIFY2(std::abs(one - ab) < 1e-9, qPrintable(QString("flow %1 s, α-β %2 s").arg(one).arg(ab)));
        const double alpha = t.intra_fit("H100", CollectiveKind::all_reduce, 8).alpha_s;
        QVERIFY2(std::abs((two - alpha) / (one - alpha) - 2) < 1e-6, qPrintable(QString("one %1 s, two %2 s").arg(one).arg(two)));
    }

    void nvlink_rate_follows_the_gpu_unless_set() {
        // An A100 job's generated fabric gets the A100's 600 GB/s NVLink, so a TP all-reduce alone takes the
        // A100's calibrated α-β time; a rate the scenario sets is kept.
        nlohmann::json doc = rail_fabric(1, 8);
        doc["workload"] = {{"kind", "llm"}, {"gpu", "A100"}, {"network_mode", "flow"}, {"model", {{"preset", "gpt3-6.7b"}}}, {"parallel", {{"tp", 8}}}};
        const Fabric f = build_fabric(load(doc).scenarios[0].topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        for (size_t l = 0; l < f.link_count(); ++l)
            if (f.node_kind[f.link_b[l]] == NodeKind::nvswitch || f.node_kind[f.link_a[l]] == NodeKind::nvswitch)
                QCOMPARE(double(f.link_rate[l].count), t.gpus.at("A100").nvlink_bytes_per_s * 8);
        HandJob h(f, 8);
        h.w.gpu = "A100";
        const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
        const int64_t S = 1LL << 30;
        emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::tp, iota_ranks(8), S, std::vector<uint32_t>(8, UINT32_MAX), "tp");
        const double ab = double(intra_collective_ps(t, "A100", CollectiveKind::all_reduce, 8, S)) * 1e-12;
        QVERIFY(std::abs(flow_time(h, f, t) - ab) < 1e-9);
        doc["topology"]["link_defaults"]["nvlink"] = {{"rate", "1800GBps"}};
        const Fabric fast = build_fabric(load(doc).scenarios[0].topology);
        for (size_t l = 0; l < fast.link_count(); ++l)
            if (fast.node_kind[fast.link_b[l]] == NodeKind::nvswitch) QCOMPARE(fast.link_rate[l].count, int64_t(14'400'000'000'000));
    }

    void packet_level_shares_nvlink_too() {
        // Two servers; on server 0 two TP all-reduces run at once while a send crosses the network.
        const LoadedScenario sc = load(rail_fabric(2, 8));
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        const int64_t S = 1LL << 28;
        HandJob h(f, 16);
        const CollectiveContext c{h.job.place, t, h.w.gpu, h.w.collectives};
        std::vector<uint32_t> colls;
        for (int k = 0; k < 2; ++k)
            colls.push_back(emit_collective(h.job.graph, c, CollectiveKind::all_reduce, Group::tp, iota_ranks(8), S, std::vector<uint32_t>(8, UINT32_MAX), "tp"));
        emit_send(h.job.graph, c, Group::pp, 0, 8, 1 << 20, UINT32_MAX, "pp");
        index_transfers(h.job);
        std::vector<ExperimentInput> in{{"e0", &s, &f, llm_flows(h.job, 3)}};
        Batch batch = compile_batch(in);
        LlmDriver driver(h.job, batch, 0, f, t);
        RunOptions o;
        o.drive = [&](uint32_t, int64_t now, uint32_t done) { return driver.drive(now, done); };
        run_cpu(batch, o);
        QVERIFY(driver.executor().finished());
        const double one = double(intra_collective_ps(t, "H100", CollectiveKind::all_reduce, 8, S)) * 1e-12;
        const double alpha = t.intra_fit("H100", CollectiveKind::all_reduce, 8).alpha_s;
        for (uint32_t k : colls) {
            const CollectiveRecord& r = h.job.graph.collectives[k];
            const double took = double(driver.executor().end()[r.end] - driver.executor().end()[r.start]) * 1e-12;
            QVERIFY2(std::abs(took - (2 * (one - alpha) + alpha)) < 1e-9, qPrintable(QString("took %1 s, alone %2 s").arg(took).arg(one)));
        }
    }
};

QTEST_GUILESS_MAIN(TestFlowMode)
#include "test_flow_mode.moc"
