// LLM training iterations end to end (issue 4's targets):
//  1. GPT-3 13B, TP8 PP4 DP4 (SP, 4 micro-batches, ZeRO-1) on 128 H100s in a rail-optimized fat-tree
//     (400 Gb/s, DCQCN), one iteration at packet level: wall time, iteration time, per-rank breakdown.
//     Target: under 10 minutes on this machine (the reference tools take hours).
//  2. GPT-3 175B, TP8 PP8 DP16 on 1,024 GPUs: its task graph and flows, the memory check per stage, and the
//     iteration time on the analytic α-β network of an idle non-blocking fabric (no packets).
// The same GPT-3 13B job on the analytic network is printed beside the packet run for comparison.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "bench_args.h"
#include "bench_measure.h"
#include "llm_packet_run.h"

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "topology/routing.h"
#include "workload/flow_mode.h"
#include "workload/llm_job.h"

using namespace orrery;

namespace {

constexpr double kGiB = double(1ull << 30);

using bench::peak_rss_mib;
using bench::seconds_since;

nlohmann::json scenario(const std::string& fabric, const std::string& model, int tp, int pp, int dp, int micro_batches, const char* mode) {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "bench"},
            {"topology", {{"preset", fabric}}},
            {"network", {{"preset", "reference-400g"}}},
            {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload",
             {{"kind", "llm"},
              {"model", {{"preset", model}}},
              {"gpu", "H100"},
              {"network_mode", mode},
              {"parallel", {{"tp", tp}, {"pp", pp}, {"dp", dp}, {"sp", true}, {"micro_batches", micro_batches}, {"zero", 1}, {"recompute", true}}}}}};
}

void print_outcome(const char* label, const LlmOutcome& o, double wall) {
    const nlohmann::json j = llm_summary_json(o);
    const nlohmann::json& b = j["breakdown_mean_per_rank"];
    std::printf("%-26s iteration %9.3f ms   wall %8.2f s   ops %9zu   flows %7zu\n", label, o.iteration_time_s * 1e3, wall, o.ops, o.flows);
    std::printf("%-26s mean per rank (ms): compute %.2f (optimizer %.2f), exposed TP %.2f PP %.2f DP %.2f EP %.2f, bubble %.2f, idle %.2f\n", "",
                b["compute_s"].get<double>() * 1e3, b["optimizer_s"].get<double>() * 1e3, b["exposed_tp_s"].get<double>() * 1e3,
                b["exposed_pp_s"].get<double>() * 1e3, b["exposed_dp_s"].get<double>() * 1e3, b["exposed_ep_s"].get<double>() * 1e3,
                b["bubble_s"].get<double>() * 1e3, b["idle_s"].get<double>() * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "GPT-3 13B on 128 GPUs at packet level; GPT-3 175B on 1,024 GPUs analytic and flow, per rank and in lockstep lanes.",
                                              {{"--threads", "CPU threads for the packet run (default 1)"},
                                               {"--skip-packet", "1: only the analytic runs"}});
    const int threads = args.count("--threads") ? std::atoi(args.at("--threads").c_str()) : 1;
    const bool skip_packet = args.count("--skip-packet") && args.at("--skip-packet") == "1";
    const PresetLibrary presets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});
    const WorkloadTables tables = load_workload_tables(presets);

    // 1. GPT-3 13B on roft-128.
    for (const char* mode : {"analytic", "flow", "packet"}) {
        if (skip_packet && std::string(mode) == "packet") continue;
        const LoadedScenario sc = load_scenario_document(scenario("roft-128", "gpt3-13b", 8, 4, 4, 4, mode), "bench", ".", presets, LoadOptions{false});
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const auto t0 = std::chrono::steady_clock::now();
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, tables);
        LlmOutcome o;
        if (std::string(mode) == "analytic") {
            o = run_llm_analytic(job, f, build_routes(f), uint32_t(s.network.packet_payload.count));
        } else if (std::string(mode) == "flow") {
            o = run_llm_flow(job, f, build_routes(f), wire_format(s), tables);
        } else {
            const bench::LlmPacketRun run = bench::run_llm_packet(s, f, job, tables, threads);
            if (run.unfinished) {
                std::printf("GPT-3 13B packet run did not finish: %zu tasks left\n", run.unfinished);
                return 1;
            }
            o = run.outcome;
            const auto& results = run.results;
            std::printf("GPT-3 13B packet level: %llu packet-hops, %llu events, %d thread(s)\n", (unsigned long long)results[0].packet_hops,
                        (unsigned long long)results[0].events, threads);
        }
        print_outcome(std::string("GPT-3 13B 128 GPUs ").append(mode).c_str(), o, seconds_since(t0));
    }

    // 2. GPT-3 175B on 1,024 GPUs, analytic and flow: per rank, then in lockstep lanes (one per stage).
    for (const char* granularity : {"rank", "stage"}) {
        nlohmann::json doc = scenario("roft-1024", "gpt3-175b", 8, 8, 16, 16, "analytic");
        doc["workload"]["granularity"] = granularity;
        std::printf("granularity %s:\n", granularity);
        const LoadedScenario sc = load_scenario_document(doc, "bench", ".", presets, LoadOptions{false});
        const Scenario& s = sc.scenarios[0];
        const Fabric f = build_fabric(s.topology);
        const auto t0 = std::chrono::steady_clock::now();
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, tables);
        const double build_s = seconds_since(t0);
        std::printf("GPT-3 175B TP8 PP8 DP16, 16 micro-batches, SP, ZeRO-1, recompute on 1,024 H100s: task graph %zu ops, %zu transfer ops (built in %.2f s)\n",
                    job.graph.size(), job.transfers.size(), build_s);
        for (const RankMemory& m : job.memory.per_stage)
            std::printf("  stage %d (rank %u): %.2f GiB = weights %.2f + gradients %.2f + optimizer %.2f + activations %.2f + overhead %.2f (of %.2f GiB)\n",
                        m.stage, m.rank, m.total() / kGiB, m.weights / kGiB, m.gradients / kGiB, m.optimizer / kGiB, m.activations / kGiB, m.overhead / kGiB,
                        job.memory.available / kGiB);
        if (!job.oom_message.empty()) {
            std::printf("  oom: %s\n", job.oom_message.c_str());
        } else {
            const auto t1 = std::chrono::steady_clock::now();
            const LlmOutcome o = run_llm_analytic(job, f, build_routes(f), uint32_t(s.network.packet_payload.count));
            print_outcome("GPT-3 175B 1,024 analytic", o, seconds_since(t1));
            const auto t2 = std::chrono::steady_clock::now();
            const LlmOutcome of = run_llm_flow(job, f, build_routes(f), wire_format(s), tables);
            print_outcome("GPT-3 175B 1,024 flow", of, seconds_since(t2));
        }
    }
    std::printf("peak memory %.0f MiB\n", peak_rss_mib());
    return 0;
}
