// engine/workload: collectives against their closed forms, the pipeline bubble, the memory check worked
// out by hand, OOM, and the analytic and packet networks agreeing on an idle fabric.
#include <QtTest>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/llm_driver.h"
#include "workload/llm_job.h"
#include "workload/tables.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

LoadedScenario load(const nlohmann::json& doc) { return load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false}); }

// A single switch joining `hosts` GPUs, each its own server, 100 Gb/s and 1 µs links, DCQCN.
nlohmann::json flat_fabric(int hosts, const std::string& rate = "100Gbps", const std::string& delay = "1us") {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"},
            {"topology", {{"generator", "single-switch"}, {"hosts", hosts}, {"link_defaults", {{"all", {{"rate", rate}, {"delay", delay}}}}}}},
            {"cc", {{"algorithm", "dcqcn"}}}};
}

// Runs a job on the packet engine alone in a batch; returns the executor's outcome.
LlmOutcome run_packet(const LlmJob& job, const Scenario& s, const Fabric& f) {
    std::vector<ExperimentInput> in{{"e0", &s, &f, llm_flows(job, 3)}};
    Batch batch = compile_batch(in);
    const WorkloadTables tables = load_workload_tables(kPresets);
    LlmDriver driver(job, batch, 0, f, tables);
    RunOptions o;
    o.drive = [&](uint32_t, int64_t now, uint32_t done) { return driver.drive(now, done); };
    run_cpu(batch, o);
    if (!driver.executor().finished()) return {};
    return summarize_llm(job, driver.executor());
}

// A job of one ring all-reduce of S bytes over ranks 0 … n−1, one channel, one chunk per step; `w` must outlive it.
LlmJob one_ring_all_reduce(LlmWorkload& w, const Fabric& f, int n, int64_t S) {
    static const WorkloadTables t = load_workload_tables(kPresets);
    w.parallel.dp = n;
    w.collectives.channels = 1;
    w.collectives.chunk = Bytes(S);
    LlmJob job;
    job.workload = &w;
    job.place = place_ranks(w.parallel, f);
    job.graph.world = uint32_t(n);
    std::vector<uint32_t> ranks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) ranks[size_t(i)] = uint32_t(i);
    const CollectiveContext ctx{job.place, t, w.gpu, w.collectives};
    emit_collective(job.graph, ctx, CollectiveKind::all_reduce, Group::dp, ranks, S, std::vector<uint32_t>(size_t(n), UINT32_MAX), "ar");
    index_transfers(job);
    return job;
}

}  // namespace

class TestWorkload : public QObject {
    Q_OBJECT
private slots:
    void ring_all_reduce_matches_its_closed_form() {
        const int n = 4;
        const int64_t S = 16'000'000;
        const LoadedScenario sc = load(flat_fabric(n));
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        LlmWorkload w;
        const LlmJob job = one_ring_all_reduce(w, f, n, S);
        QCOMPARE(job.transfers.size(), size_t(2 * (n - 1) * n));  // 2(n−1) steps, n transfers each

        // Closed form: 2(n−1) steps of S/n bytes, each the standalone time of one flow on the 2-hop path:
        // base RTT (2 × 2 µs + two 1000-byte serializations of 80 ns) + wire bytes (48 B per 1000-byte packet) at 100 Gb/s.
        const double seg = double(S) / n, packets = std::ceil(seg / 1000);
        const double step_s = 2 * 2e-6 + 2 * 80e-9 + (seg + packets * 48) * 8 / 100e9;
        const double bandwidth_term = 2.0 * (n - 1) / n * double(S) * 8 * (1 + 48.0 / 1000) / 100e9;
        const double expected = 2 * (n - 1) * step_s;
        QVERIFY(std::abs(expected - bandwidth_term) / expected < 0.02);  // the latency terms are small at 16 MB

        const Routes routes = build_routes(f);
        const LlmOutcome analytic = run_llm_analytic(job, f, routes, 1000);
        QVERIFY2(std::abs(analytic.iteration_time_s - expected) < 1e-9,
                 qPrintable(QString("analytic %1 s, closed form %2 s").arg(analytic.iteration_time_s, 0, 'g', 12).arg(expected, 0, 'g', 12)));
        const LlmOutcome packet = run_packet(job, s, f);
        QVERIFY(packet.iteration_time_s > 0);
        // Packet level on an idle non-blocking fabric: the closed form, plus at most one lookahead (1 µs) per
        // step for a completion to release the next step, plus the ACKs of the incoming ring transfer that
        // share each host's uplink with its outgoing data (measured +3.8% here; the α-β model has no ACKs).
        const double err = (packet.iteration_time_s - expected) / expected;
        QVERIFY2(err > 0 && err < 0.05, qPrintable(QString("packet %1 s vs closed form %2 s").arg(packet.iteration_time_s).arg(expected)));
    }

    void astra_sim_3_table_1_ring_all_reduce() {
        // ASTRA-sim 3.0, Table 1: a 1 MiB ring all-reduce over 8 GPUs on a Clos fabric with its ns-3 backend
        // took 165.98 µs (standalone FCT of one 128 KiB step: 11,857 ns). The paper gives no link delays: at
        // 100 Gb/s a 131,072-byte flow's wire bytes take 10,993 ns, leaving 864 ns of base latency, which a
        // 4-link host–leaf–spine–leaf–host path makes 66 ns per link (2 × 4 × 66 ns + 4 × 83 ns of
        // serialization: 11,840 ns here, integer ns per hop as the reference counts them). Same fabric here: two leaves of four GPUs, two spines, 100 Gb/s, 66 ns, DCQCN.
        const int n = 8;
        const int64_t S = 1 << 20;
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"},
                              {"topology", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4},
                                            {"link_defaults", {{"all", {{"rate", "100Gbps"}, {"delay", "66ns"}}}}}}},
                              {"cc", {{"algorithm", "dcqcn"}}}};
        const LoadedScenario sc = load(doc);
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        LlmWorkload w;
        const LlmJob job = one_ring_all_reduce(w, f, n, S);
        const PathMetrics cross = path_metrics(f, build_routes(f), 0, 4, 1000);
        const double standalone = double(standalone_fct_ns(cross, S / n, 1000));
        QVERIFY2(std::abs(standalone - 11'857) < 20, qPrintable(QString("standalone FCT %1 ns, the paper's 11,857 ns").arg(standalone)));
        const LlmOutcome packet = run_packet(job, s, f);
        const double paper = 165.98e-6;
        qInfo("ASTRA-sim 3.0 Table 1 ring all-reduce: packet level %.2f us, paper 165.98 us (%+.2f %%)", packet.iteration_time_s * 1e6,
              100 * (packet.iteration_time_s / paper - 1));
        QVERIFY2(std::abs(packet.iteration_time_s - paper) / paper < 0.05,
                 qPrintable(QString("packet level %1 µs, ASTRA-sim 3.0 Table 1: 165.98 µs").arg(packet.iteration_time_s * 1e6)));
    }

    void one_f_one_b_bubble_when_communication_is_free() {
        const int p = 4, m = 8;
        nlohmann::json doc = flat_fabric(p, "100000Gbps", "1ns");
        doc["workload"] = {{"kind", "llm"},
                           {"network_mode", "analytic"},
                           {"model", {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"ffn", 8192}, {"seq", 2048}, {"vocab", 8}}},
                           {"parallel", {{"pp", p}, {"micro_batches", m}}}};
        const LoadedScenario sc = load(doc);
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const WorkloadTables t = load_workload_tables(kPresets);
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, t);
        const LlmOutcome o = run_llm_analytic(job, f, build_routes(f), 1000);
        const RankBreakdown& first = o.ranks[0];
        const double pipeline = o.iteration_time_s - first.optimizer_s;
        const double bubble = (first.bubble_s + first.exposed_pp_s) / pipeline;
        const double expected = double(p - 1) / (m + p - 1);
        QVERIFY2(std::abs(bubble - expected) < 0.005, qPrintable(QString("bubble %1, (p−1)/(m+p−1) = %2").arg(bubble).arg(expected)));
        // Every second of every rank is accounted for.
        for (const RankBreakdown& r : o.ranks) QVERIFY(std::abs(r.idle_s) < o.iteration_time_s && r.idle_s > -1e-9);
    }

    void memory_of_gpt3_13b_worked_out_by_hand() {
        LlmWorkload w;
        const nlohmann::json model = nlohmann::json::parse(read_text_file(std::filesystem::path(ORRERY_SOURCE_DIR) / "presets/models/gpt3-13b.json"))["value"];
        w.model.layers = model["layers"], w.model.hidden = model["hidden"], w.model.heads = model["heads"], w.model.ffn = model["ffn"];
        w.model.seq = model["seq"], w.model.vocab = model["vocab"];
        w.parallel.tp = 8, w.parallel.pp = 4, w.parallel.dp = 4, w.parallel.sequence_parallel = true, w.parallel.zero_stage = 1, w.parallel.micro_batches = 4;
        const WorkloadTables t = load_workload_tables(kPresets);
        const MemoryReport r = memory_per_rank(w, t.gpus.at("H100"));
        // Stage 0: 10 layers of 12h² + 4h (QKV 3h², proj h², MLP 8h², norms 4h) + word (V·h) and position (s·h) embeddings.
        const double h = 5120, layer = 12 * h * h + 4 * h, params = (10 * layer + 50257 * h + 2048 * h) / 8;
        QCOMPARE(r.per_stage[0].params, int64_t(params));
        QCOMPARE(r.per_stage[0].weights, 2 * double(int64_t(params)));
        QCOMPARE(r.per_stage[0].gradients, 2 * double(int64_t(params)));
        QCOMPARE(r.per_stage[0].optimizer, 12 * double(int64_t(params)) / 4);  // ZeRO-1 shards the optimizer over DP 4
        // Activations, sequence parallel: s·b·h·34/t per layer, 10 layers, 4 micro-batches in flight on the first stage.
        QCOMPARE(r.per_stage[0].activations, 2048.0 * 5120 * 34 / 8 * 10 * 4);
        QCOMPARE(r.per_stage[0].overhead, double(4LL << 30));
        QCOMPARE(r.available, 80e9);
        QVERIFY(r.fits());
        // The last stage keeps one micro-batch in flight plus the fp32 logits.
        QCOMPARE(r.per_stage[3].activations, 2048.0 * 5120 * 34 / 8 * 10 * 1 + 4.0 * 2048 * 50257 / 8);
    }

    // GPT ties the output layer to the word embeddings: with PP the first and last stage all-reduce that
    // gradient (vocab/TP × hidden × 2 B) before their optimizer steps; LLaMA's untied output layer does not,
    // and costs its own vocab × hidden parameters on the last stage even without PP.
    void tied_embedding_gradients_are_all_reduced_between_first_and_last_stage() {
        nlohmann::json doc = flat_fabric(8);
        doc["workload"] = {{"kind", "llm"},
                           {"network_mode", "analytic"},
                           {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
                           {"parallel", {{"tp", 2}, {"pp", 4}, {"micro_batches", 4}}}};
        const WorkloadTables t = load_workload_tables(kPresets);
        auto tied_collectives = [&](const nlohmann::json& d) {
            const LoadedScenario sc = load(d);
            const Fabric f = build_fabric(sc.scenarios[0].topology);
            const LlmJob job = prepare_llm_job(*sc.scenarios[0].workload.llm, f, t);
            std::vector<CollectiveRecord> found;
            for (const CollectiveRecord& c : job.graph.collectives)
                if (job.graph.names[c.name].find("tied embedding") != std::string::npos) found.push_back(c);
            return found;
        };
        const std::vector<CollectiveRecord> tied = tied_collectives(doc);
        QCOMPARE(tied.size(), size_t(2));  // one per TP rank of the DP replica
        for (const CollectiveRecord& c : tied) {
            QCOMPARE(c.kind, CollectiveKind::all_reduce);
            QCOMPARE(c.group, Group::embedding);  // named for what it is: DP is 1 here
            QCOMPARE(c.bytes, int64_t(1000 * 1024 / 2 * 2));
            QCOMPARE(c.ranks.size(), size_t(2));
            const ParallelSpec& p = load(doc).scenarios[0].workload.llm->parallel;
            QCOMPARE(rank_coord(p, c.ranks[0]).pp, 0);
            QCOMPARE(rank_coord(p, c.ranks[1]).pp, 3);
            QCOMPARE(rank_coord(p, c.ranks[0]).tp, rank_coord(p, c.ranks[1]).tp);
        }
        {   // Its time shows as its own stream and its own exposed part, never as DP (which is 1 here).
            const LoadedScenario sc = load(doc);
            const Fabric f = build_fabric(sc.scenarios[0].topology);
            const LlmJob job = prepare_llm_job(*sc.scenarios[0].workload.llm, f, t);
            const LlmOutcome o = run_llm_analytic(job, f, build_routes(f), 1000);
            bool stream = false;
            for (const TimelineSpan& s : o.timeline) {
                QVERIFY2(s.stream != "dp", s.name.c_str());
                stream |= s.stream == "embedding";
            }
            QVERIFY(stream);
            double exposed_dp = 0;
            for (const RankBreakdown& b : o.ranks) exposed_dp += b.exposed_dp_s;
            QCOMPARE(exposed_dp, 0.0);
        }
        doc["workload"]["model"]["tied_embeddings"] = false;
        QVERIFY(tied_collectives(doc).empty());

        LlmWorkload w;
        w.model = load(doc).scenarios[0].workload.llm->model;
        const MemoryReport untied = memory_per_rank(w, t.gpus.at("H100"));
        w.model.tied_embeddings = true;
        const MemoryReport shared = memory_per_rank(w, t.gpus.at("H100"));
        QCOMPARE(untied.per_stage[0].params - shared.per_stage[0].params, int64_t(1000 * 1024));
    }

    void a_job_that_does_not_fit_is_oom_naming_rank_and_bytes() {
        nlohmann::json doc = flat_fabric(32);
        doc["workload"] = {{"kind", "llm"}, {"model", {{"preset", "gpt3-175b"}}}, {"parallel", {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batches", 4}}}};
        const LoadedScenario sc = load(doc);
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, load_workload_tables(kPresets));
        QVERIFY(!job.oom_message.empty());
        const RankMemory& worst = job.memory.worst();
        QVERIFY(worst.total() > 80e9);
        QVERIFY2(job.oom_message.find("rank " + std::to_string(worst.rank)) != std::string::npos, job.oom_message.c_str());
        // The H100's 80 GB (10^9 B) of HBM, in GiB as every memory figure is shown.
        const std::string hbm = QString::number(80e9 / double(1ull << 30), 'f', 2).toStdString() + " GiB";
        QVERIFY2(job.oom_message.find("but a H100 has " + hbm) != std::string::npos, job.oom_message.c_str());
    }

    void world_size_must_match_the_fabric() {
        nlohmann::json doc = flat_fabric(16);
        doc["workload"] = {{"kind", "llm"}, {"model", {{"preset", "gpt3-13b"}}}, {"parallel", {{"tp", 8}, {"pp", 4}}}};
        const LoadedScenario sc = load(doc);
        const Fabric f = build_fabric(sc.scenarios[0].topology);
        try {
            prepare_llm_job(*sc.scenarios[0].workload.llm, f, load_workload_tables(kPresets));
            QFAIL("expected an error");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("32 ranks, but the fabric has 16 GPUs") != std::string::npos, e.what());
        }
    }

    // One flow per NIC at a time (one channel, DP only, collectives serialized): no contention, so the
    // packet level must reproduce the analytic α-β times up to the lookahead per dependency and the ACK
    // traffic sharing the uplinks (within 5%).
    void packet_and_analytic_agree_on_a_small_job() {
        nlohmann::json doc = flat_fabric(8);
        doc["workload"] = {{"kind", "llm"},
                           {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1000}}},
                           {"parallel", {{"dp", 8}, {"micro_batches", 2}}},
                           {"collectives", {{"channels", 1}}}};
        const LoadedScenario sc = load(doc);
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, load_workload_tables(kPresets));
        const LlmOutcome a = run_llm_analytic(job, f, build_routes(f), 1000);
        const LlmOutcome p = run_packet(job, s, f);
        QVERIFY(p.iteration_time_s > 0);
        QVERIFY2(p.iteration_time_s >= a.iteration_time_s * 0.999 && p.iteration_time_s < a.iteration_time_s * 1.05,
                 qPrintable(QString("packet %1 s, analytic %2 s").arg(p.iteration_time_s).arg(a.iteration_time_s)));
        // The timeline holds every compute task and a span per collective member.
        size_t compute = 0;
        for (const TimelineSpan& sp : p.timeline) compute += sp.stream == "compute";
        size_t expected = 0;
        for (const Op& op : job.graph.ops) expected += op.kind == OpKind::compute;
        QCOMPARE(compute, expected);
    }
};

QTEST_APPLESS_MAIN(TestWorkload)
#include "test_workload.moc"
