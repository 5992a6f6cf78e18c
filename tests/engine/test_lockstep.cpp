// engine/workload lockstep graphs ("granularity": "stage"): a pipeline stage as one lane whose collectives are
// single tasks over all the stage's groups. Checked against the per-rank graph on the AICB files and on
// model-built GPT-3 13B and MoE 8×13B (the α-β bound equal, flow mode close), the ring latency path by hand,
// the settings it refuses, and the 9,216-GPU MoE file, whose compute must equal SimAI_analytical's own total.
#include <QtTest>

#include <fstream>

#include "common/diagnostics.h"
#include "imports/import_job.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/flow_mode.h"
#include "workload/llm_job.h"
#include "workload/timeline_stream.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});
const std::filesystem::path kWorkloads = std::filesystem::path(ORRERY_TEST_DIR) / "reference/formats/simai-workload";

nlohmann::json scenario(const nlohmann::json& topology, const nlohmann::json& workload) {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"}, {"topology", topology},
            {"network", {{"preset", "reference-400g"}}}, {"cc", {{"preset", "dcqcn-400g"}}}, {"workload", workload}};
}

nlohmann::json simai(const std::string& file, const std::string& mode, const std::string& granularity) {
    nlohmann::json w = {{"kind", "llm"}, {"gpu", "H100"}, {"network_mode", mode}, {"import", {{"format", "simai"}, {"path", (kWorkloads / file).string()}}}};
    if (!granularity.empty()) w["granularity"] = granularity;
    return w;
}

struct Run {
    LoadedScenario loaded;
    Fabric fabric;
    LlmWorkload workload;
    LlmJob job;
    Diagnostics warnings;
    LlmOutcome outcome;
};

std::unique_ptr<Run> run(const nlohmann::json& doc) {
    auto r = std::make_unique<Run>();
    r->loaded = load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false});
    const Scenario& s = r->loaded.scenarios[0];
    r->fabric = build_fabric(s.topology);
    r->workload = *s.workload.llm;
    const WorkloadTables tables = load_workload_tables(kPresets);
    r->job = prepare_any_llm_job(r->workload, r->fabric, tables, r->warnings);
    const Routes routes = build_routes(r->fabric);
    r->outcome = r->workload.network_mode == NetworkMode::flow ? run_llm_flow(r->job, r->fabric, routes, wire_format(s), tables)
                                                               : run_llm_analytic(r->job, r->fabric, routes, uint32_t(s.network.packet_payload.count));
    return r;
}

// The InputError a scenario document raises, as "where: message" lines.
std::string refusal(const nlohmann::json& doc) {
    try {
        load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false});
    } catch (const InputError& e) {
        std::string all;
        for (const Diagnostic& d : e.diagnostics().items()) all += d.where + ": " + d.message + "\n";
        return all;
    }
    return "";
}

}  // namespace

class TestLockstep : public QObject {
    Q_OBJECT
private slots:
    void stage_lanes_against_the_rank_graph_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("flow_tolerance");
        // GPT-13B: every ring pair crosses the network alike; LLaMA-7B ZeRO-3: DP 128 rings mix NVLink and
        // network pairs, and the rank graph's every transfer takes the next ECMP port (bench_flow: +1.3 %).
        QTest::newRow("AICB GPT-13B TP8 DP16") << "G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt" << 1e-4;
        QTest::newRow("AICB LLaMA-65B TP8 DP16") << "L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt" << 1e-4;
        QTest::newRow("AICB LLaMA-7B ZeRO-3 DP128") << "L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt" << 0.02;
    }
    void stage_lanes_against_the_rank_graph() {
        QFETCH(QString, file);
        QFETCH(double, flow_tolerance);
        const nlohmann::json roft = {{"preset", "roft-128"}};
        for (const char* mode : {"analytic", "flow"}) {
            const auto rank = run(scenario(roft, simai(file.toStdString(), mode, "rank")));
            const auto stage = run(scenario(roft, simai(file.toStdString(), mode, "stage")));
            QVERIFY(!rank->job.graph.lockstep());
            QVERIFY(stage->job.graph.lockstep());
            QCOMPARE(stage->job.graph.world, 1u);  // PP 1: one lane of 128 ranks
            QCOMPARE(stage->job.graph.lane_ranks[0].size(), size_t(128));
            QVERIFY2(stage->job.graph.size() * 20 < rank->job.graph.size(),
                     qPrintable(QString("%1 ops in lockstep, %2 per rank").arg(stage->job.graph.size()).arg(rank->job.graph.size())));
            // The same flows, counted as pairs × steps.
            QCOMPARE(stage->outcome.flows, rank->outcome.flows);
            const double a = rank->outcome.iteration_time_s, b = stage->outcome.iteration_time_s;
            // α-β: a ring's latency path sums the pairs it passes, as the per-rank chain does — the same time.
            const double tolerance = std::string(mode) == "analytic" ? 1e-9 : flow_tolerance;
            QVERIFY2(std::abs(b / a - 1) <= tolerance, qPrintable(QString("%1: rank %2 s, stage %3 s").arg(mode).arg(a, 0, 'g', 12).arg(b, 0, 'g', 12)));
            QCOMPARE(stage->outcome.ranks.size(), size_t(1));
            QCOMPARE(stage->outcome.ranks[0].compute_s, rank->outcome.ranks[0].compute_s);
        }
    }

    void model_built_jobs_in_lanes_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("ep");
        QTest::newRow("GPT-3 13B TP8 PP4 DP4") << "gpt3-13b" << 1;
        QTest::newRow("MoE 8x13B TP8 EP8 PP4 DP4") << "gpt-moe-8x13b" << 8;
    }
    void model_built_jobs_in_lanes() {
        // bench_flow's rows 1 and 5, per rank and in four lanes: the α-β bound and every rank's breakdown equal,
        // flow mode within 0.01 % (bench_llm: GPT-3 175B on 1,024 GPUs −0.16 %, built in 0.15 s instead of 1.2 s).
        QFETCH(QString, model);
        QFETCH(int, ep);
        nlohmann::json parallel = {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}};
        if (ep > 1) parallel["ep"] = ep;
        for (const char* mode : {"analytic", "flow"}) {
            auto job = [&](const char* granularity) {
                return run(scenario({{"preset", "roft-128"}}, {{"kind", "llm"}, {"gpu", "H100"}, {"model", {{"preset", model.toStdString()}}},
                                                               {"parallel", parallel}, {"network_mode", mode}, {"granularity", granularity}}));
            };
            const auto rank = job("rank"), stage = job("stage");
            QCOMPARE(stage->job.graph.world, 4u);
            QCOMPARE(stage->outcome.flows, rank->outcome.flows);
            const double a = rank->outcome.iteration_time_s, b = stage->outcome.iteration_time_s;
            QVERIFY2(std::abs(b / a - 1) <= (std::string(mode) == "analytic" ? 1e-12 : 1e-4),
                     qPrintable(QString("%1: rank %2 s, stage %3 s").arg(mode).arg(a, 0, 'g', 12).arg(b, 0, 'g', 12)));
            if (std::string(mode) == "analytic")
                for (const RankBreakdown& lane : stage->outcome.ranks) {
                    const RankBreakdown& same = rank->outcome.ranks[lane.rank];  // the lane's first rank, per rank
                    QCOMPARE(lane.compute_s, same.compute_s);
                    QVERIFY(std::abs(lane.bubble_s - same.bubble_s) < 1e-12 && std::abs(lane.exposed_dp_s - same.exposed_dp_s) < 1e-12 &&
                            std::abs(lane.exposed_ep_s - same.exposed_ep_s) < 1e-12 && std::abs(lane.exposed_tp_s - same.exposed_tp_s) < 1e-12);
                }
        }
    }

    void auto_builds_lanes_from_1024_ranks() {
        // GPT-3 175B TP8 PP8 DP16: 1,024 ranks in the α-β bound → eight lanes, said in a warning; at packet
        // level the same job stays per rank (every flow is simulated there).
        nlohmann::json workload = {{"kind", "llm"}, {"gpu", "H100"}, {"model", {{"preset", "gpt3-175b"}}}, {"network_mode", "analytic"},
                                   {"parallel", {{"tp", 8}, {"pp", 8}, {"dp", 16}, {"sp", true}, {"micro_batches", 16}, {"zero", 1}, {"recompute", true}}}};
        const LoadedScenario loaded = load_scenario_document(scenario({{"preset", "roft-1024"}}, workload), "t.json", ".", kPresets, LoadOptions{false});
        const Fabric f = build_fabric(loaded.scenarios[0].topology);
        const WorkloadTables tables = load_workload_tables(kPresets);
        LlmWorkload w = *loaded.scenarios[0].workload.llm;
        Diagnostics warnings;
        const LlmJob job = prepare_any_llm_job(w, f, tables, warnings);
        QVERIFY(job.graph.lockstep());
        QCOMPARE(job.graph.world, 8u);
        QVERIFY(!warnings.items().empty() && warnings.items()[0].where == "workload.granularity");
        w.network_mode = NetworkMode::packet;
        QVERIFY(!lockstep_lanes(w, 1024));
        w.network_mode = NetworkMode::flow;
        QVERIFY(lockstep_lanes(w, 1024) && !lockstep_lanes(w, 1023));
        w.collectives.pxn = true;
        QVERIFY(!lockstep_lanes(w, 1024));
    }

    void a_ring_latency_path_is_the_worst_window() {
        // Two groups of a 4-member ring: per-pair costs 1,2,3,4 and 10,1,1,1. Pairs at once: the slowest
        // per step. A ring of 6 steps: one loop (10 and 13) plus the worst 2 consecutive pairs (7 and 11): 24.
        PairSet set;
        set.pairs.resize(8);
        const std::vector<int64_t> cost = {1, 2, 3, 4, 10, 1, 1, 1};
        QCOMPARE(lockstep_cost(set, cost, 6), int64_t(60));
        set.cycle = 4;
        QCOMPARE(lockstep_cost(set, cost, 6), int64_t(24));
        QCOMPARE(lockstep_cost(set, cost, 4), int64_t(13));
        QCOMPARE(lockstep_cost(set, cost, 1), int64_t(10));
        Op op;
        op.bytes = 3 * 1000;
        op.steps = 3;
        QCOMPARE(lockstep_pieces(set, op, 300), int64_t(4));  // 1000 bytes a step in 300-byte pieces
        set.cycle = 0;
        QCOMPARE(lockstep_pieces(set, op, 300), int64_t(1));
    }

    void settings_it_refuses() {
        const nlohmann::json roft = {{"preset", "roft-128"}};
        const std::string file = "G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt";
        const std::string packet = refusal(scenario(roft, simai(file, "packet", "stage")));
        QVERIFY2(packet.find("workload.granularity") != std::string::npos && packet.find("packet level needs every flow") != std::string::npos,
                 qPrintable(QString::fromStdString(packet)));
        nlohmann::json pxn = simai(file, "flow", "stage");
        pxn["collectives"] = {{"pxn", true}};
        QVERIFY(refusal(scenario(roft, pxn)).find("does not model PXN") != std::string::npos);
        nlohmann::json busbw = simai(file, "", "stage");
        busbw.erase("network_mode");
        busbw["collectives"] = {{"model", "busbw"}};
        QVERIFY(refusal(scenario(roft, busbw)).find("builds no task graph") != std::string::npos);
        const nlohmann::json chakra = {{"kind", "llm"}, {"granularity", "stage"}, {"network_mode", "flow"},
                                       {"import", {{"format", "chakra"}, {"path", (std::filesystem::path(ORRERY_TEST_DIR) / "reference/formats/chakra-et/all_reduce").string()}}}};
        QVERIFY(refusal(scenario(roft, chakra)).find("a Chakra trace runs per rank") != std::string::npos);
        nlohmann::json typo = simai(file, "flow", "stages");
        QVERIFY(refusal(scenario(roft, typo)).find("workload.granularity") != std::string::npos);
    }

    void the_9216_gpu_moe_file_runs_in_lockstep() {
        // SimAI's 9,216-GPU MoE sample (TP 2, EP 16, PP 12, vpp 8, GA 24) on a rail-optimized fabric of its
        // size at 400 Gb/s: granularity auto chooses one lane per stage (and says so). The compute per rank
        // is the file's, run through the interleaved schedule: SimAI_analytical's own "total comp" is
        // 4,542,795 µs (tests/reference/simai-analytical/moe.summary.csv).
        const nlohmann::json fabric = {{"generator", "rail-optimized"}, {"gpus", 9216}, {"gpus_per_server", 8},
                                       {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}};
        const auto r = run(scenario(fabric, simai("workload_analytical.txt", "analytic", "")));
        QVERIFY(r->job.graph.lockstep());
        bool said = false;
        for (const Diagnostic& d : r->warnings.items()) said = said || (d.where == "workload.granularity" && d.message.find("9216 ranks") != std::string::npos);
        QVERIFY(said);
        QCOMPARE(r->job.graph.world, 12u);
        QCOMPARE(r->outcome.ranks.size(), size_t(12));
        for (uint32_t s = 0; s < 12; ++s) {
            QCOMPARE(r->job.graph.lane_ranks[s].size(), size_t(768));
            QCOMPARE(r->outcome.ranks[s].rank, s * 768);
            QVERIFY2(std::abs(r->outcome.ranks[s].compute_s - 4.542795) < 1e-6, qPrintable(QString::number(r->outcome.ranks[s].compute_s, 'g', 12)));
        }
        QVERIFY(r->outcome.iteration_time_s > 4.542795);
        QVERIFY2(r->outcome.flows > 100'000'000, qPrintable(QString::number(double(r->outcome.flows))));
    }

    // A run hands out its timeline as tasks finish (workload/timeline_stream.h): in batches ordered in time,
    // together exactly summarize_llm's spans, per rank and in lanes; watching changes nothing the run computes.
    void the_timeline_streams_as_tasks_finish() {
        for (const char* granularity : {"rank", "stage"}) {
            const nlohmann::json doc = scenario({{"preset", "roft-128"}}, {{"kind", "llm"}, {"gpu", "H100"}, {"model", {{"preset", "gpt3-13b"}}},
                                                                           {"parallel", {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"micro_batches", 4}}},
                                                                           {"network_mode", "flow"}, {"granularity", granularity}});
            const auto plain = run(doc);
            const Scenario& s = plain->loaded.scenarios[0];
            const WorkloadTables tables = load_workload_tables(kPresets);
            TimelineStream stream(plain->job.graph);
            std::vector<std::vector<TimelineSpan>> batches;
            const int64_t pace = 100'000'000;  // 100 us
            const LlmOutcome watched = run_llm_flow(plain->job, plain->fabric, build_routes(plain->fabric), wire_format(s), tables,
                                                    [&](const Executor& x) { batches.push_back(stream.take(x)); }, pace);
            QCOMPARE(watched.iteration_time_s, plain->outcome.iteration_time_s);
            std::vector<TimelineSpan> all;
            size_t non_empty = 0;
            int64_t previous_end = -1;
            for (const auto& b : batches) {
                if (b.empty()) continue;
                ++non_empty;
                int64_t first = INT64_MAX, last = 0;
                for (const TimelineSpan& span : b) first = std::min(first, span.end_ps), last = std::max(last, span.end_ps);
                QVERIFY2(first > previous_end, granularity);           // a batch holds what ended after the previous one
                QVERIFY2(last / pace == first / pace, granularity);   // and within one pace window
                previous_end = last;
                all.insert(all.end(), b.begin(), b.end());
            }
            QVERIFY2(non_empty > 10, qPrintable(QString("%1: %2 batches with spans").arg(granularity).arg(non_empty)));
            QCOMPARE(stream.taken(), plain->outcome.timeline.size());
            auto key = [](const TimelineSpan& t) { return std::tie(t.rank, t.start_ps, t.end_ps, t.stream, t.name, t.kind, t.iteration, t.bytes, t.peers); };
            auto by_key = [&](const TimelineSpan& a, const TimelineSpan& b) { return key(a) < key(b); };
            std::vector<TimelineSpan> expected = plain->outcome.timeline;
            std::sort(all.begin(), all.end(), by_key);
            std::sort(expected.begin(), expected.end(), by_key);
            QVERIFY2(std::equal(all.begin(), all.end(), expected.begin(), expected.end(), [&](const TimelineSpan& a, const TimelineSpan& b) { return key(a) == key(b); }),
                     granularity);
        }
    }
};

QTEST_GUILESS_MAIN(TestLockstep)
#include "test_lockstep.moc"
