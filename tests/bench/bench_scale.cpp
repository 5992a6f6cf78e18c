// Scale: a k-ary fat-tree (default k = 60: 54,000 hosts) with a random permutation of 1 MB flows, one per
// host, all starting together, under DCQCN. Prints compile and run time, events, packet-hops, steps (split over
// threads, streamed), batch memory at start and end, the process's peak resident memory and where the packet
// storage went (current figures: tests/bench/RESULTS.md).
// Usage: bench_scale [--k K] [--size BYTES] [--threads N] [--stream-above BYTES] [--packet-bytes 32|64] [--json FILE]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_measure.h"

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"

using namespace orrery;

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "A k-ary fat-tree with a permutation of flows under DCQCN.",
                                              {{"--k", "fat-tree radix, even (default 60: 54,000 hosts)"},
                                               {"--size", "bytes per flow (default 1000000)"},
                                               {"--threads", "worker threads (default 1)"},
                                               {"--stream-above", "bytes of a worker's packets in a step above which they are written by non-temporal stores (default: a core's L2 cache; a large value turns streaming off)"},
                                               {"--packet-bytes", "32 (default: what a batch without HPCC stores) or 64 (the whole line HPCC's INT needs), to compare the two"},
                                               {"--json", "write the figures to this file"}});
    const int k = static_cast<int>(bench::bench_number(args, "--k", 60));
    const long long size = bench::bench_number(args, "--size", 1000000);
    const int threads = static_cast<int>(bench::bench_number(args, "--threads", 1));
    const long long stream_above = bench::bench_number(args, "--stream-above", 0);
    const long long packet_bytes = bench::bench_number(args, "--packet-bytes", 32);
    const std::string json_path = args.count("--json") ? args.at("--json") : "";
    if (packet_bytes != 32 && packet_bytes != 64) {
        std::fprintf(stderr, "option --packet-bytes: expected 32 or 64, found %lld\n", packet_bytes);
        return 2;
    }
    if (k % 2 != 0 || k > 128) {
        std::fprintf(stderr, "option --k: expected an even radix from 2 to 128, found %d\n", k);
        return 2;
    }
    const int hosts = k * k * k / 4;
    std::vector<int> perm(hosts);
    for (int i = 0; i < hosts; ++i) perm[i] = i;
    std::mt19937_64 rng(1);
    std::shuffle(perm.begin(), perm.end(), rng);
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i)
        if (perm[i] != i) flows.push_back({{"src", i}, {"dst", perm[i]}, {"size", std::to_string(size) + "B"}});
    nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", k}}},
                          {"cc", {{"algorithm", "dcqcn"}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
    auto t0 = std::chrono::steady_clock::now();
    LoadedScenario s = load_scenario_document(doc, "scale", ".", PresetLibrary(), LoadOptions{false});
    const Fabric fabric = build_fabric(s.scenarios[0].topology);
    Batch batch = compile_batch({{"e0000", &s.scenarios[0], &fabric, workload_flows(s.scenarios[0])}}, nullptr,
                                packet_bytes == 64 ? PacketSlots::whole_line : PacketSlots::by_cc);
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double start_mb = double(batch.memory_bytes()) / 1048576.0;
    RunOptions options;
    options.threads = threads;
    options.stream_packets_above = uint64_t(stream_above);
    t0 = std::chrono::steady_clock::now();
    const auto r = run_cpu(batch, options);
    const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    size_t finished = 0;
    double max_fct_us = 0;
    for (const FlowResult& f : r[0].flows)
        if (f.finish != net::kNever) {
            ++finished;
            max_fct_us = std::max(max_fct_us, double(f.finish - batch.flow[f.flow].start) / 1e6);
        }
    const double rss_gb = bench::peak_rss_gib();
    std::printf("k=%d fat-tree, %zu flows of %lld B (permutation), DCQCN, %d thread%s: compile %.2f s, run %.2f s, %zu/%zu flows finished, "
                "last FCT %.1f us, %.3g events, %.3g packet-hops (%.3g/s), batch %.0f MB at start and %.0f MB at end, peak RSS %.2f GB\n",
                k, flows.size(), size, threads, threads == 1 ? "" : "s", compile_s, run_s, finished, r[0].flows.size(), max_fct_us,
                double(r[0].events), double(r[0].packet_hops), double(r[0].packet_hops) / run_s, start_mb,
                double(batch.memory_bytes()) / 1048576.0, rss_gb);
    std::printf("  steps: %llu, %llu of them split over threads, %llu writing packets by non-temporal stores\n", (unsigned long long)r[0].steps,
                (unsigned long long)r[0].split_steps, (unsigned long long)r[0].streamed_steps);
    // Where the memory went: packet storage (blocks in rings and queues, net/blocks.h) against the tables.
    {
        const double mib = 1048576.0;
        const double committed = double(batch.arena->committed_blocks()) * batch.arena->bytes_per_block();
        const double peak = double(batch.experiments[0].peak_blocks) * batch.arena->bytes_per_block();
        std::printf("  packet storage: %.1f MiB committed, at most %.1f MiB held at a step's end (%lld blocks of %zu packets of %zu B); tables %.1f MiB\n",
                    committed / mib, peak / mib, (long long)batch.experiments[0].peak_blocks, size_t(net::kBlockPackets), size_t(1) << batch.arena->packet_shift(),
                    (double(batch.memory_bytes()) - committed) / mib);
    }
    if (!json_path.empty())
        std::ofstream(json_path) << nlohmann::json({{"k", k}, {"flows", flows.size()}, {"flow_bytes", size}, {"threads", threads},
                                                    {"compile_s", compile_s}, {"run_s", run_s}, {"finished", finished},
                                                    {"events", r[0].events}, {"packet_hops", r[0].packet_hops},
                                                    {"steps", r[0].steps}, {"streamed_steps", r[0].streamed_steps},
                                                    {"batch_mb_start", start_mb}, {"peak_rss_gb", rss_gb}})
                                        .dump(2)
                                 << "\n";
    return finished == r[0].flows.size() ? 0 : 1;
}
