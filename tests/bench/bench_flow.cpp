// Flow mode against the packet level (skipping off) and the α-β bound, one iteration each, on issue 19's
// workloads: GPT-3 13B TP8 PP4 DP4 on roft-128; the GPT-13B, LLaMA-65B and LLaMA-7B ZeRO-3 AICB files on
// 128 GPUs; MoE 8×13B TP8 EP8 DP4 PP4. Prints per row the iteration time of each mode, flow mode's error
// against the packet level, and the wall times and speedup. Targets: within 3% (8% for the MoE row), at
// least 100× faster than the packet level, and faster than the packet level with skipping (--skipping 1).
// Every row also runs flow mode with one lockstep lane per pipeline stage ("granularity": "stage");
// row 7 (GPT-3 13B TP2 PP2 DP32) is where lanes differ most from per rank.
// Row 6: the 9,216-GPU MoE AICB file in flow mode (lockstep lanes; target under 5 minutes and 8 GB).
#include <chrono>
#include <cstdio>

#include "bench_args.h"
#include "bench_measure.h"
#include "llm_packet_run.h"

#include "imports/import_job.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/flow_mode.h"

using namespace orrery;

namespace {

using bench::peak_rss_mib;
using bench::seconds_since;

nlohmann::json base(const nlohmann::json& workload) {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "bench"},
            {"topology", {{"preset", "roft-128"}}}, {"network", {{"preset", "reference-400g"}}}, {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", workload}};
}

nlohmann::json modelled(const std::string& model, const nlohmann::json& parallel) {
    return base({{"kind", "llm"}, {"model", {{"preset", model}}}, {"gpu", "H100"}, {"parallel", parallel}});
}

nlohmann::json simai(const std::string& file) {
    return base({{"kind", "llm"}, {"gpu", "H100"},
                 {"import", {{"format", "simai"}, {"path", std::string(ORRERY_SOURCE_DIR) + "/tests/reference/formats/simai-workload/" + file}}}});
}

void row(const char* label, nlohmann::json doc, const PresetLibrary& presets, const WorkloadTables& tables, int threads, bool packet, bool skipping) {
    if (skipping) doc["skipping"] = {{"enabled", true}};
    const LoadedScenario sc = load_scenario_document(doc, "bench", ".", presets, LoadOptions{false});
    const Scenario& s = sc.scenarios[0];
    const Fabric f = build_fabric(s.topology);
    LlmWorkload w = *s.workload.llm;
    Diagnostics warnings;
    const auto t0 = std::chrono::steady_clock::now();
    const LlmJob job = prepare_any_llm_job(w, f, tables, warnings);
    const double build = seconds_since(t0);
    const Routes routes = build_routes(f);
    auto t = std::chrono::steady_clock::now();
    const LlmOutcome ab = run_llm_analytic(job, f, routes, uint32_t(s.network.packet_payload.count));
    const double ab_wall = seconds_since(t);
    t = std::chrono::steady_clock::now();
    const LlmOutcome flow = run_llm_flow(job, f, routes, wire_format(s), tables);
    const double flow_wall = seconds_since(t);
    std::printf("%s: %zu ops%s, %zu network flows, graph built in %.2f s\n", label, job.graph.size(),
                job.graph.lockstep() ? (" on " + std::to_string(job.graph.world) + " lockstep lanes").c_str() : "", flow.flows, build);
    std::printf("   alpha-beta bound %10.3f ms  (wall %7.2f s)\n", ab.iteration_time_s * 1e3, ab_wall);
    std::printf("   flow             %10.3f ms  (wall %7.2f s)\n", flow.iteration_time_s * 1e3, flow_wall);
    if (!job.graph.lockstep()) {  // the same job with one lane per pipeline stage
        nlohmann::json lanes = doc;
        lanes["workload"]["granularity"] = "stage";
        lanes["workload"]["network_mode"] = "flow";
        const LoadedScenario ls = load_scenario_document(lanes, "bench", ".", presets, LoadOptions{false});
        LlmWorkload lw = *ls.scenarios[0].workload.llm;
        t = std::chrono::steady_clock::now();
        const LlmJob stage_job = prepare_any_llm_job(lw, f, tables, warnings);
        const LlmOutcome stage = run_llm_flow(stage_job, f, routes, wire_format(s), tables);
        std::printf("   flow, stage lanes %9.3f ms  (wall %7.2f s with its build, %zu ops): %+.2f %% against per rank\n", stage.iteration_time_s * 1e3,
                    seconds_since(t), stage_job.graph.size(), 100 * (stage.iteration_time_s / flow.iteration_time_s - 1));
    }
    std::printf("   peak memory so far %.2f GiB\n", bench::peak_rss_gib());
    std::fflush(stdout);
    if (!packet) return;
    t = std::chrono::steady_clock::now();
    const bench::LlmPacketRun run = bench::run_llm_packet(s, f, job, tables, threads);
    const double packet_wall = seconds_since(t);
    if (run.unfinished) {
        std::printf("   packet level did not finish: %zu tasks left\n", run.unfinished);
        return;
    }
    const double p = run.outcome.iteration_time_s;
    const char* kind = skipping ? "packet+skip" : "packet";
    std::printf("   %-16s %10.3f ms  (wall %7.2f s, %d thread(s))\n", kind, p * 1e3, packet_wall, threads);
    std::printf("   flow vs %s: %+.2f %%, %.0fx faster; alpha-beta vs %s: %+.2f %%\n", kind, 100 * (flow.iteration_time_s / p - 1), packet_wall / flow_wall, kind,
                100 * (ab.iteration_time_s / p - 1));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Flow mode against the packet level and the alpha-beta bound on issue 19's workloads.",
                                              {{"--threads", "CPU threads for the packet runs (default 1)"},
                                               {"--packet", "0: flow and alpha-beta only (default 1)"},
                                               {"--rows", "which rows: a string of row numbers 1-7 (default 12345; 6 is the 9,216-GPU MoE file, flow level only; 7 mixes NVLink and network hops in its rings)"},
                                               {"--skipping", "1: the packet level with steady-state skipping on (default 0: off)"}});
    const bool skipping = args.count("--skipping") && args.at("--skipping") == "1";
    const int threads = args.count("--threads") ? std::atoi(args.at("--threads").c_str()) : 1;
    const bool packet = !(args.count("--packet") && args.at("--packet") == "0");
    const std::string rows = args.count("--rows") ? args.at("--rows") : "12345";
    const PresetLibrary presets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});
    const WorkloadTables tables = load_workload_tables(presets);
    const nlohmann::json gpt_parallel = {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}, {"recompute", true}};
    const nlohmann::json moe_parallel = {{"tp", 8}, {"ep", 8}, {"pp", 4}, {"dp", 4}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}};
    if (rows.find('1') != std::string::npos) row("1. GPT-3 13B TP8 PP4 DP4, roft-128", modelled("gpt3-13b", gpt_parallel), presets, tables, threads, packet, skipping);
    if (rows.find('2') != std::string::npos)
        row("2. AICB GPT-13B (TP8, DP16), roft-128", simai("G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt"), presets, tables, threads, packet, skipping);
    if (rows.find('3') != std::string::npos)
        row("3. AICB LLaMA-65B (TP8, DP16), roft-128", simai("L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt"), presets, tables, threads, packet, skipping);
    if (rows.find('4') != std::string::npos)
        row("4. AICB LLaMA-7B ZeRO-3 (DP128), roft-128", simai("L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt"), presets, tables, threads, packet, skipping);
    if (rows.find('5') != std::string::npos) row("5. MoE 8x13B TP8 EP8 DP4 PP4, roft-128", modelled("gpt-moe-8x13b", moe_parallel), presets, tables, threads, packet, skipping);
    if (rows.find('7') != std::string::npos)  // rings that mix NVLink and network hops: lanes differ most from per rank
        row("7. GPT-3 13B TP2 PP2 DP32, ZeRO-0, ring, roft-128", modelled("gpt3-13b", {{"tp", 2}, {"pp", 2}, {"dp", 32}, {"sp", true}, {"micro_batches", 4}, {"zero", 0}}),
            presets, tables, threads, packet, skipping);
    if (rows.find('6') != std::string::npos) {  // flow and alpha-beta only: the per-rank graph does not fit this machine
        nlohmann::json moe = simai("workload_analytical.txt");
        moe["topology"] = {{"generator", "rail-optimized"}, {"gpus", 9216}, {"gpus_per_server", 8}, {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}};
        moe["workload"]["network_mode"] = "flow";
        row("6. AICB MoE 9,216 GPUs (TP2 EP16 PP12 vpp8 GA24), rail-optimized 400 Gb/s", moe, presets, tables, threads, false, false);
    }
    return 0;
}
