// engine/imports: the real SimAI/AICB workload files, Chakra traces and MSCCL / MSCCL++ algorithms of
// tests/reference/formats (copied from their public repositories), with their quirks; what they compile
// to; and their collectives timed against the closed form. Malformed variants: tests/malformed (test_cli).
#include <QtTest>

#include <fstream>
#include <sstream>

#include "common/gzip.h"
#include "imports/chakra_trace.h"
#include "imports/import_job.h"
#include "imports/msccl.h"
#include "imports/simai_workload.h"
#include "workload/flow_mode.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/llm_job.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});
const std::filesystem::path kFormats = std::filesystem::path(ORRERY_TEST_DIR) / "reference/formats";

std::string bytes_of(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool has_warning(const Diagnostics& d, const std::string& where_suffix, const std::string& text) {
    for (const Diagnostic& x : d.items())
        if (x.severity == Diagnostic::Severity::warning && x.where.size() >= where_suffix.size() &&
            x.where.compare(x.where.size() - where_suffix.size(), where_suffix.size(), where_suffix) == 0 && x.message.find(text) != std::string::npos)
            return true;
    return false;
}

// A single switch joining `hosts` GPUs, each its own server (100 Gb/s, 1 µs), with `workload`.
nlohmann::json flat(int hosts, const nlohmann::json& workload) {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "t"},
            {"topology", {{"generator", "single-switch"}, {"hosts", hosts}, {"link_defaults", {{"all", {{"rate", "100Gbps"}, {"delay", "1us"}}}}}}},
            {"cc", {{"algorithm", "dcqcn"}}},
            {"workload", workload}};
}

struct Prepared {
    LoadedScenario scenario;
    Fabric fabric;
    LlmWorkload workload;
    LlmJob job;
    Diagnostics warnings;
};

std::unique_ptr<Prepared> prepare(const nlohmann::json& doc) {
    auto p = std::make_unique<Prepared>();
    p->scenario = load_scenario_document(doc, "test.json", ".", kPresets, LoadOptions{false});
    p->fabric = build_fabric(p->scenario.scenarios[0].topology);
    p->workload = *p->scenario.scenarios[0].workload.llm;
    p->job = prepare_any_llm_job(p->workload, p->fabric, load_workload_tables(kPresets), p->warnings);
    return p;
}

// The reference's standalone time of one flow of `bytes` over two 100 Gb/s, 1 µs hops, 1000-byte packets.
double standalone_s(double bytes) { return 2 * 2e-6 + 2 * 80e-9 + (bytes + std::ceil(bytes / 1000) * 48) * 8 / 100e9; }

}  // namespace

class TestImports : public QObject {
    Q_OBJECT
private slots:
    void simai_legacy_header_gpt13b() {
        Diagnostics warnings;
        const std::filesystem::path file = kFormats / "simai-workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt";
        const SimaiWorkload w = read_simai_workload(read_text_file(file), file.string(), warnings);
        QCOMPARE(w.policy, std::string("HYBRID_TRANSFORMER_FWD_IN_BCKWD"));
        QCOMPARE(w.tp, 8);
        QCOMPARE(w.all_gpus, 0);
        QCOMPARE(w.records.size(), size_t(92));
        QVERIFY(has_warning(warnings, ":1", "legacy AICB header"));
        QVERIFY(has_warning(warnings, ":3", "\"BROADCAST\" is not a collective SimAI issues"));
        QCOMPARE(w.records[1].name, std::string("grad_norm"));
        QCOMPARE(w.records[1].forward.kind, CollectiveKind::all_gather);
        QCOMPARE(w.records[1].forward.bytes, int64_t(3248619520));
        QCOMPARE(w.records[1].weight_grad.group, SimaiGroup::dp);
        QCOMPARE(w.records[1].weight_grad.kind, CollectiveKind::reduce_scatter);

        // On 16 GPUs (two servers of 8): TP 8 inside each server, DP 2 across. The compute per rank is the sum
        // of the file's three compute columns (208,196,033 ns, by awk over columns 3, 6 and 9).
        const auto p = prepare(flat(16, {{"kind", "llm"}, {"network_mode", "analytic"}, {"import", {{"format", "simai"}, {"path", file.string()}}}}));
        const LlmOutcome o = run_llm_analytic(p->job, p->fabric, build_routes(p->fabric), 1000);
        for (const RankBreakdown& r : o.ranks) QVERIFY2(std::abs(r.compute_s - 0.208196033) < 1e-12, qPrintable(QString::number(r.compute_s, 'g', 12)));
        // 90 forward and 82 input-gradient collectives per TP group (2 groups), one weight-gradient reduce-scatter per DP pair (8).
        size_t tp = 0, dp = 0;
        for (const CollectiveRecord& c : p->job.graph.collectives) (c.group == Group::tp ? tp : dp) += 1;
        QCOMPARE(tp, size_t((90 + 82) * 2));
        QCOMPARE(dp, size_t(8));
        QVERIFY(o.iteration_time_s > 0.208196033);
    }

    void simai_count_mismatch_and_mixed_separators() {
        Diagnostics warnings;
        const std::filesystem::path l65 = kFormats / "simai-workload/L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt";
        const SimaiWorkload a = read_simai_workload(read_text_file(l65), l65.string(), warnings);
        QCOMPARE(a.records.size(), size_t(33));  // declares 839
        QVERIFY(has_warning(warnings, ":2", "declares 839 records but the file has 33"));
        QCOMPARE(a.records[0].weight_grad.bytes, int64_t(1));  // grad_gather's 1-byte all-gather, kept as written

        const std::filesystem::path l7 = kFormats / "simai-workload/L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt";
        const SimaiWorkload b = read_simai_workload(read_text_file(l7), l7.string(), warnings);
        QCOMPARE(b.records.size(), size_t(12));
        QCOMPARE(b.records[0].forward_ns, int64_t(14356000));
        QCOMPARE(b.records[0].input_grad_ns, int64_t(4756000));  // after three spaces, not a tab
        QCOMPARE(b.records[0].input_grad.bytes, int64_t(357468));
        QCOMPARE(b.records[0].weight_grad.bytes, int64_t(1889785610));
        QCOMPARE(b.records[5].input_grad_ns, int64_t(46148000));
    }

    void simai_full_header_moe_and_micro() {
        Diagnostics warnings;
        const std::filesystem::path moe = kFormats / "simai-workload/workload_analytical.txt";
        const SimaiWorkload m = read_simai_workload(read_text_file(moe), moe.string(), warnings);
        QCOMPARE(m.tp, 2);
        QCOMPARE(m.ep, 16);
        QCOMPARE(m.pp, 12);
        QCOMPARE(m.ga, 24);
        QCOMPARE(m.all_gpus, 9216);
        QCOMPARE(m.pp_comm, int64_t(50331648));  // written "pp_comm 50331648", without the colon
        QCOMPARE(m.records.size(), size_t(1789));
        QCOMPARE(m.records[4].weight_grad.group, SimaiGroup::dp_ep);
        QVERIFY(!has_warning(warnings, moe.filename().string() + ":1", "legacy"));

        // The micro-benchmark: 19 all-reduces over every rank, one after another, 4 KiB … 1 GiB.
        const std::filesystem::path micro = kFormats / "simai-workload/all_reduce.txt";
        const auto p = prepare(flat(4, {{"kind", "llm"},
                                        {"network_mode", "analytic"},
                                        {"collectives", {{"channels", 1}, {"chunk", "2GiB"}}},
                                        {"import", {{"format", "simai"}, {"path", micro.string()}}}}));
        QCOMPARE(p->job.graph.collectives.size(), size_t(19));
        const LlmOutcome o = run_llm_analytic(p->job, p->fabric, build_routes(p->fabric), 1000);
        // Ring all-reduce: 2(n−1) steps of size/n each, plus the record's 1 ns delay after each collective
        // (the analytic network times a transfer in whole ns: up to 1 ns per step apart from the formula).
        double expected = 0;
        for (int k = 0; k < 19; ++k) expected += 6 * standalone_s(double(int64_t(4096) << k) / 4) + 1e-9;
        QVERIFY2(std::abs(o.iteration_time_s - expected) <= 19 * 6 * 1e-9, qPrintable(QString("%1 vs %2").arg(o.iteration_time_s, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    }

    void simai_parallel_block_and_a_larger_fabric() {
        // The legacy GPT-13B header says only TP 8: workload.parallel completes it (DP 16 → 128 ranks), the
        // ranks take the first 128 of 256 hosts, and the rest are said to stay idle.
        const std::string file = (kFormats / "simai-workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt").string();
        nlohmann::json doc = flat(256, {{"kind", "llm"}, {"network_mode", "analytic"}, {"import", {{"format", "simai"}, {"path", file}}},
                                        {"parallel", {{"tp", 8}, {"dp", 16}}}});
        const auto p = prepare(doc);
        QCOMPARE(p->job.graph.world, 128u);
        QVERIFY(has_warning(p->warnings, ":1", "other 128 hosts stay idle"));
        for (uint32_t op : p->job.transfers) QVERIFY(p->job.graph.ops[op].rank < 128 && p->job.graph.ops[op].peer < 128);
        // A block that contradicts the header is refused, naming both.
        doc["workload"]["parallel"] = {{"tp", 4}};
        try {
            prepare(doc);
            QFAIL("tp 4 against the file's TP 8 was accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("workload.parallel.tp") != std::string::npos &&
                         std::string(e.what()).find("model_parallel_NPU_group: 8") != std::string::npos,
                     e.what());
        }
        // Keys a SimAI file decides itself are refused.
        doc["workload"]["parallel"] = {{"sp", true}};
        QVERIFY_THROWS_EXCEPTION(InputError, prepare(doc));
    }

    void a_simai_topology_nvlink_figure_means_what_simai_makes_of_it() {
        // SimAI times a collective inside a server at its NVLink figure as the bus bandwidth, with no latency term
        // (SimAI_analytical's -nv; its ns-3 backend sends at the NVSwitch link's rate). A SimAI topology file's
        // NVSwitch links are read that way: SimAI's microAllReduce sample on 8 GPUs behind one NVSwitch whose
        // links carry -nv 360 (GiB/s, 3,092 Gb/s) takes SimAI_analytical's own total at the flow and analytic
        // levels, within 1 %.
        QTemporaryDir tmp;
        const std::string topology = tmp.filePath("nv360.txt").toStdString();
        {
            std::ifstream in(kFormats / "simai-topology/Rail_Opti_SingleToR_64gpu_8gps_200Gbps_H20");
            std::ostringstream text;
            text << in.rdbuf();
            std::string t = text.str();
            for (size_t at; (at = t.find("2400Gbps")) != std::string::npos;) t.replace(at, 8, "3092Gbps");
            std::ofstream(topology) << t;
        }
        double simai_total_us = 0;
        {
            std::ifstream csv(std::filesystem::path(ORRERY_TEST_DIR) / "reference/simai-analytical/micro.summary.csv");
            std::string header, row;
            std::getline(csv, header);
            std::getline(csv, row);
            simai_total_us = std::stod(row.substr(row.rfind(',') + 1));
        }
        QVERIFY(simai_total_us > 1000);
        for (const char* mode : {"flow", "analytic"}) {
            nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "t"},
                                  {"topology", {{"import", topology}, {"format", "simai"}}},
                                  {"cc", {{"algorithm", "dcqcn"}}},
                                  {"workload", {{"kind", "llm"}, {"gpu", "H100"}, {"network_mode", mode},
                                                {"import", {{"format", "simai"}, {"path", (kFormats / "simai-workload/microAllReduce.txt").string()}}}}}};
            const auto p = prepare(doc);
            const WorkloadTables tables = load_workload_tables(kPresets);
            const Routes routes = build_routes(p->fabric);
            const LlmOutcome o = std::string(mode) == "flow" ? run_llm_flow(p->job, p->fabric, routes, WireFormat{}, tables)
                                                             : run_llm_analytic(p->job, p->fabric, routes, 1000);
            const double us = o.iteration_time_s * 1e6;
            qInfo("%s: microAllReduce %.1f us, SimAI_analytical %.0f us", mode, us, simai_total_us);
            QVERIFY2(std::abs(us / simai_total_us - 1) < 0.01, qPrintable(QString("%1: %2 us against SimAI's %3 us").arg(mode).arg(us).arg(simai_total_us)));
        }
    }

    void simai_pipeline_runs_as_a_pipeline() {
        // PP 4, GA 8: eight micro-batches (each starting at an embedding_layer record) of forward 1 ms and
        // backward 2 ms per stage, no collectives, pp_comm 1 byte on a fabric where it is free: every rank waits
        // (p−1)/(m+p−1) of the iteration, and stage 0's wait is reported as bubble, not idle.
        const int p = 4, m = 8;
        QTemporaryDir tmp;
        const QString file = tmp.filePath("pipe.txt");
        {
            std::ofstream out(file.toStdString());
            out << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: " << p << " vpp: 1 ga: " << m
                << " all_gpus: " << p << " checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1\n" << m << "\n";
            for (int k = 0; k < m; ++k) out << "embedding_layer -1 1000000 NONE 0 1000000 NONE 0 1000000 NONE 0 0\n";
        }
        nlohmann::json doc = flat(p, {{"kind", "llm"}, {"network_mode", "flow"}, {"import", {{"format", "simai"}, {"path", file.toStdString()}}}});
        doc["topology"]["link_defaults"]["all"] = {{"rate", "100000Gbps"}, {"delay", "1ns"}};
        const auto run = prepare(doc);
        const LlmOutcome o = run_llm_flow(run->job, run->fabric, build_routes(run->fabric), WireFormat{}, load_workload_tables(kPresets));
        const double expected_iteration = (m + p - 1) * 3e-3;  // (m + p − 1) slots of forward + backward
        QVERIFY2(std::abs(o.iteration_time_s - expected_iteration) / expected_iteration < 1e-3,
                 qPrintable(QString("iteration %1 s, expected %2 s").arg(o.iteration_time_s).arg(expected_iteration)));
        for (const RankBreakdown& r : o.ranks) {
            const double bubble = (r.bubble_s + r.exposed_pp_s + r.idle_s) / o.iteration_time_s;
            QVERIFY2(std::abs(bubble - double(p - 1) / (m + p - 1)) < 1e-3, qPrintable(QString("rank %1: waiting share %2").arg(r.rank).arg(bubble)));
            // Stage 0 waits inside the schedule only; later stages also finish early and wait for it (idle).
            if (r.rank == 0)
                QVERIFY2(r.bubble_s > 0.99 * (r.bubble_s + r.exposed_pp_s + r.idle_s),
                     qPrintable(QString("rank %1: bubble %2 s, exposed PP %3 s, idle %4 s").arg(r.rank).arg(r.bubble_s).arg(r.exposed_pp_s).arg(r.idle_s)));
        }
    }

    void chakra_all_reduce_matches_the_ring_closed_form() {
        Diagnostics warnings;
        const std::vector<ChakraRank> ranks = read_chakra_traces(kFormats / "chakra-et/all_reduce", warnings);
        QCOMPARE(ranks.size(), size_t(4));
        for (uint64_t r = 0; r < 4; ++r) {
            QCOMPARE(ranks[r].version, std::string("0.0.4"));
            QCOMPARE(ranks[r].nodes.size(), size_t(1));
            QCOMPARE(ranks[r].nodes[0].id, r);
            QCOMPARE(ranks[r].nodes[0].type, 7);
            QCOMPARE(ranks[r].nodes[0].comm_type, int64_t(0));
            QCOMPARE(ranks[r].nodes[0].comm_size, int64_t(1048576));
        }
        // gzip-compressed, the same trace.
        const std::string raw = bytes_of(kFormats / "chakra-et/all_reduce.2.et");
        const ChakraRank z = read_chakra_trace(gzip_compress(raw), "all_reduce.2.et.gz", warnings);
        QCOMPARE(z.nodes[0].id, uint64_t(2));
        QCOMPARE(z.nodes[0].comm_size, int64_t(1048576));

        const auto p = prepare(flat(4, {{"kind", "llm"},
                                        {"network_mode", "analytic"},
                                        {"collectives", {{"channels", 1}}},
                                        {"import", {{"format", "chakra"}, {"path", (kFormats / "chakra-et/all_reduce").string()}}}}));
        const LlmOutcome o = run_llm_analytic(p->job, p->fabric, build_routes(p->fabric), 1000);
        const double expected = 6 * standalone_s(1048576.0 / 4);  // whole ns per step: within 6 ns
        QVERIFY2(std::abs(o.iteration_time_s - expected) <= 6e-9, qPrintable(QString("%1 vs %2").arg(o.iteration_time_s, 0, 'g', 12).arg(expected, 0, 'g', 12)));
        QCOMPARE(p->job.transfers.size(), size_t(6 * 4));
    }

    void chakra_point_to_point_trace() {
        Diagnostics warnings;
        const ChakraRank r0 = read_chakra_trace(bytes_of(kFormats / "chakra-et/custom_allreduce.0.et"), "custom_allreduce.0.et", warnings);
        QCOMPARE(r0.version, std::string("1.0.2-chakra.0.0.4"));  // from the "schema" attribute
        QCOMPARE(r0.nodes.size(), size_t(35));
        size_t sends = 0, recvs = 0, comps = 0;
        for (const ChakraNode& n : r0.nodes) {
            sends += n.type == 5, recvs += n.type == 6, comps += n.type == 4;
            QCOMPARE(n.comm_type, int64_t(-1));  // comm_type 5/6 on SEND/RECV is the node type, not a collective
        }
        QCOMPARE(sends, size_t(14));
        QCOMPARE(recvs, size_t(14));
        QCOMPARE(comps, size_t(7));
        QCOMPARE(r0.nodes[0].comm_dst, int64_t(1));
        QCOMPARE(r0.nodes[0].comm_size, int64_t(131072));
        QCOMPARE(r0.nodes[1].comm_src, int64_t(7));
        QCOMPARE(r0.nodes[2].duration_us, uint64_t(7));
        // Two of the eight ranks only: rank 0 receives from rank 7, which is not there.
        std::vector<ChakraRank> two{r0, read_chakra_trace(bytes_of(kFormats / "chakra-et/custom_allreduce.1.et"), "custom_allreduce.1.et", warnings)};
        const Fabric f = build_fabric(load_scenario_document(flat(2, {{"kind", "flows"}, {"flows", nlohmann::json::array()}}), "t.json", ".", kPresets,
                                                             LoadOptions{false})
                                          .scenarios[0]
                                          .topology);
        ParallelSpec p;
        p.dp = 2;
        const Placement place = place_ranks(p, f);
        const WorkloadTables t = load_workload_tables(kPresets);
        CollectiveSpec spec;
        try {
            build_chakra_graph(two, CollectiveContext{place, t, "H100", spec}, 1, warnings);
            QFAIL("expected an error");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("comm_src 7 is not another rank of the 2 traces") != std::string::npos, e.what());
        }
    }

    void msccl_ring_all_reduce_replaces_the_builtin_ring() {
        Diagnostics warnings;
        const std::filesystem::path xml = kFormats / "msccl/custom_allreduce.xml";
        const CustomAlgorithm a = read_custom_algorithm(xml, warnings);
        QCOMPARE(a.kind, CollectiveKind::all_reduce);
        QCOMPARE(a.gpus, 8);
        QCOMPARE(a.chunks_per_loop, 8);
        QCOMPARE(a.ops.size(), size_t(224));
        std::vector<int> sent(8, 0);
        for (const CustomOp& op : a.ops)
            if (op.send_to >= 0) {
                QCOMPARE(op.send_to, (op.gpu + 1) % 8);  // a ring
                QCOMPARE(op.chunks, 1.0);
                ++sent[size_t(op.gpu)];
            }
        for (int s : sent) QCOMPARE(s, 14);  // 2(n−1) chunk moves per GPU

        // Used for the all-reduces of the SimAI micro-benchmark on 8 GPUs: 112 transfers of size/8 each.
        const auto p = prepare(flat(8, {{"kind", "llm"},
                                        {"network_mode", "analytic"},
                                        {"collectives", {{"custom", {xml.string()}}}},
                                        {"import", {{"format", "simai"}, {"path", (kFormats / "simai-workload/all_reduce.txt").string()}}}}));
        QCOMPARE(p->job.transfers.size(), size_t(112 * 19));
        QCOMPARE(p->job.graph.ops[p->job.transfers[0]].bytes, int64_t(4096 / 8));
        const LlmOutcome o = run_llm_analytic(p->job, p->fabric, build_routes(p->fabric), 1000);
        // Every step waits for the chunk before it on the ring: 14 dependent transfers per all-reduce at least.
        double lower = 0;
        for (int k = 0; k < 19; ++k) lower += 14 * standalone_s(double(int64_t(4096) << k) / 8);
        QVERIFY2(o.iteration_time_s >= lower * 0.999, qPrintable(QString("%1 vs at least %2").arg(o.iteration_time_s).arg(lower)));
    }

    void msccl_dependencies_and_counts() {
        Diagnostics warnings;
        const CustomAlgorithm a = read_custom_algorithm(kFormats / "msccl/allgather_hierarchical.xml", warnings);
        QCOMPARE(a.kind, CollectiveKind::all_gather);
        QCOMPARE(a.ops.size(), size_t(64));
        // gpu 0, tb 1, step 0 sends 2 chunks after step 1 of tb 0 (depid 0, deps 1) — its receive.
        const CustomOp& dependent = a.ops[2];
        QCOMPARE(dependent.gpu, 0);
        QCOMPARE(dependent.send_to, 2);
        QCOMPARE(dependent.chunks, 2.0);
        QVERIFY(std::find(dependent.after.begin(), dependent.after.end(), 1u) != dependent.after.end());
    }

    void mscclpp_packet_all_reduce() {
        Diagnostics warnings;
        const std::filesystem::path json = kFormats / "msccl/allreduce_packet.json";
        const CustomAlgorithm a = read_custom_algorithm(json, warnings);
        QCOMPARE(a.kind, CollectiveKind::all_reduce);
        QCOMPARE(a.gpus, 2);
        QCOMPARE(a.chunks_per_loop, 4);
        QVERIFY(warnings.items().empty());  // max_message_size 2^64−1 is read exactly, as an unsigned integer
        double chunks_to_peer[2] = {0, 0};
        for (const CustomOp& op : a.ops)
            if (op.send_to >= 0) chunks_to_peer[op.gpu] += op.chunks;
        QCOMPARE(chunks_to_peer[0], 4.0);  // ppkt 2 chunks, two respkt of 1
        QCOMPARE(chunks_to_peer[1], 4.0);
        // The unpack reads scratch chunks 2–3, which only the peer's ppkt writes: it waits for that transfer.
        bool unpack_waits_for_peer = false;
        for (const CustomOp& op : a.ops)
            for (uint32_t d : op.after) unpack_waits_for_peer = unpack_waits_for_peer || (a.ops[d].send_to == op.gpu && a.ops[d].chunks == 2.0);
        QVERIFY(unpack_waits_for_peer);
        // A size beyond 64-bit integers is read as a double: said, not fatal.
        std::string text = read_text_file(json);
        text.replace(text.find("18446744073709551615"), 20, "184467440737095516150");
        Diagnostics w2;
        read_mscclpp_json(text, "big.json", w2);
        QVERIFY(has_warning(w2, "max_message_size", "beyond 64-bit integers"));
    }
};

QTEST_APPLESS_MAIN(TestImports)
#include "test_imports.moc"
