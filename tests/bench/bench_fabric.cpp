// Fabric and routing build: time and memory for the papers' fabrics, up to the k = 60 fat-tree of
// Multiverse's use case #4 (target: under 10 s and 2 GB with its routes). Prints a table and, with
// --json FILE, writes the figures for comparison between runs. Also the largest path metrics over pairs of one
// host per destination group (what compile_batch computes for the reference's GLOBAL_T), walked pair by pair and
// through a PathMemo per destination; the two must agree, or the program fails. --route-workers N searches the routes on N
// threads (default: one per core of the machine, as every run does).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_measure.h"

#include "common/quantity.h"
#include "net/ns3_arith.h"
#include "topology/generators.h"
#include "topology/routing.h"

using namespace orrery;

namespace {
using bench::peak_rss_mib;
using bench::seconds_since;

// The largest (RTT, BDP) over pairs of one host per destination group, destinations outer as compile_batch goes.
struct PairMaxima {
    uint64_t rtt_ns = 0, bdp_bytes = 0;
    bool operator==(const PairMaxima&) const = default;
};
template <class Metrics>
PairMaxima pair_maxima(const std::vector<NodeId>& hosts, Metrics metrics) {
    PairMaxima out;
    for (NodeId dst : hosts)
        for (NodeId src : hosts) {
            if (src == dst) continue;
            const PathMetrics m = metrics(src, dst);
            if (m.hops < 0) continue;
            const uint64_t rtt = m.delay_ns * 2 + m.tx_delay_ns;
            out.rtt_ns = std::max(out.rtt_ns, rtt);
            out.bdp_bytes = std::max(out.bdp_bytes, uint64_t((net::uint128)rtt * m.min_bw / 1000000000ull / 8));
        }
    return out;
}
}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Fabric and routing build time and memory, up to k = 60.",
                                              {{"--route-workers", "threads searching the routes (default: the machine's cores)"},
                                               {"--json", "write the figures to this file"}});
    const std::string json_path = args.count("--json") ? args.at("--json") : "";
    const unsigned route_workers = unsigned(bench::bench_number(args, "--route-workers", 0));
    const LinkClass l100{gbps(100), microseconds(1)}, l400{gbps(400), microseconds(1)};
    std::vector<std::pair<std::string, std::function<Fabric()>>> cases = {
        {"fat-tree k=8", [&] { return generate(fat_tree(8, l100, l100, l100)); }},
        {"fat-tree k=16", [&] { return generate(fat_tree(16, l100, l100, l100)); }},
        {"fat-tree k=32", [&] { return generate(fat_tree(32, l100, l100, l100)); }},
        {"fat-tree k=60", [&] { return generate(fat_tree(60, l100, l100, l100)); }},
        {"fat-tree k=64", [&] { return generate(fat_tree(64, l100, l100, l100)); }},
        {"rail-optimized 1024 GPUs", [&] {
             RailOptimizedParams p;
             p.gpus = 1024, p.gpus_per_server = 8, p.hosts_per_leaf = 32, p.spines_per_pod = 32;
             p.host = p.tier1 = p.tier2 = l400;
             p.nvlink = {8, {BitsPerSecond(7'200'000'000'000), Picoseconds(25'000)}};
             return generate(p);
         }},
        {"rail-optimized 32768 GPUs, 3 tiers", [&] {
             RailOptimizedParams p;
             p.gpus = 32768, p.gpus_per_server = 8, p.hosts_per_leaf = 32, p.spines_per_pod = 32, p.tiers = 3, p.servers_per_pod = 256;
             p.host = p.tier1 = p.tier2 = l400;
             return generate(p);
         }},
    };
    nlohmann::json out = nlohmann::json::array();
    if (route_workers) std::printf("routes searched on %u thread%s\n", route_workers, route_workers == 1 ? "" : "s");
    else std::printf("routes searched on the machine's cores\n");
    std::printf("%-36s %8s %8s %8s %12s %12s %12s %12s %12s %14s\n", "fabric", "hosts", "switches", "links", "generate s", "routes s",
                "pairs walk s", "pairs memo s", "tables MiB", "peak RSS MiB");
    for (auto& [name, make] : cases) {
        auto t0 = std::chrono::steady_clock::now();
        Fabric f = make();
        const double generate_s = seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        Routes r = build_routes(f, route_workers);
        const double routes_s = seconds_since(t0);
        const double tables = double(memory_bytes(r)) / 1048576.0;
        std::map<uint32_t, NodeId> one_per_group;
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.is_host(n)) one_per_group.emplace(r.host_group[n], n);
        std::vector<NodeId> hosts;
        for (const auto& [group, host] : one_per_group) hosts.push_back(host);
        const uint32_t mtu = 1000;
        t0 = std::chrono::steady_clock::now();
        const PairMaxima walked = pair_maxima(hosts, [&](NodeId a, NodeId b) { return path_metrics(f, r, a, b, mtu); });
        const double walk_s = seconds_since(t0);
        PathMemo memo;
        t0 = std::chrono::steady_clock::now();
        const PairMaxima memoized = pair_maxima(hosts, [&](NodeId a, NodeId b) { return path_metrics(f, r, a, b, mtu, memo); });
        const double memo_s = seconds_since(t0);
        if (!(walked == memoized)) {
            std::fprintf(stderr, "%s: the memo's largest RTT / BDP (%llu ns, %llu B) differ from the walk's (%llu ns, %llu B)\n", name.c_str(),
                         (unsigned long long)memoized.rtt_ns, (unsigned long long)memoized.bdp_bytes, (unsigned long long)walked.rtt_ns,
                         (unsigned long long)walked.bdp_bytes);
            return 1;
        }
        std::printf("%-36s %8zu %8zu %8zu %12.3f %12.3f %12.3f %12.3f %12.1f %14.1f\n", name.c_str(), f.count(NodeKind::host),
                    f.count(NodeKind::network_switch), f.link_count(), generate_s, routes_s, walk_s, memo_s, tables, peak_rss_mib());
        out.push_back({{"fabric", name}, {"hosts", f.count(NodeKind::host)}, {"switches", f.count(NodeKind::network_switch)},
                       {"links", f.link_count()}, {"generate_s", generate_s}, {"routes_s", routes_s}, {"route_workers", route_workers}, {"group_pairs", hosts.size() * (hosts.size() - 1)},
                       {"pairs_walk_s", walk_s}, {"pairs_memo_s", memo_s}, {"max_rtt_ns", walked.rtt_ns}, {"route_tables_mib", tables},
                       {"peak_rss_mib_so_far", peak_rss_mib()}});
    }
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
    return 0;
}
