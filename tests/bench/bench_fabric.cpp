// Fabric and routing build: time and memory for the papers' fabrics, up to the k = 60 fat-tree of
// Multiverse's use case #4 (target: under 10 s and 2 GB with its routes). Prints a table and, with
// --json FILE, writes the figures for comparison between runs.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_measure.h"

#include "common/quantity.h"
#include "topology/generators.h"
#include "topology/routing.h"

using namespace orrery;

namespace {
using bench::peak_rss_mib;
using bench::seconds_since;
}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Fabric and routing build time and memory, up to k = 60.",
                                              {{"--json", "write the figures to this file"}});
    const std::string json_path = args.count("--json") ? args.at("--json") : "";
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
    std::printf("%-36s %8s %8s %8s %12s %12s %12s %14s\n", "fabric", "hosts", "switches", "links", "generate s", "routes s",
                "tables MiB", "peak RSS MiB");
    for (auto& [name, make] : cases) {
        auto t0 = std::chrono::steady_clock::now();
        Fabric f = make();
        const double generate_s = seconds_since(t0);
        t0 = std::chrono::steady_clock::now();
        Routes r = build_routes(f);
        const double routes_s = seconds_since(t0);
        const double tables = double(memory_bytes(r)) / 1048576.0;
        std::printf("%-36s %8zu %8zu %8zu %12.3f %12.3f %12.1f %14.1f\n", name.c_str(), f.count(NodeKind::host),
                    f.count(NodeKind::network_switch), f.link_count(), generate_s, routes_s, tables, peak_rss_mib());
        out.push_back({{"fabric", name}, {"hosts", f.count(NodeKind::host)}, {"switches", f.count(NodeKind::network_switch)},
                       {"links", f.link_count()}, {"generate_s", generate_s}, {"routes_s", routes_s}, {"route_tables_mib", tables},
                       {"peak_rss_mib_so_far", peak_rss_mib()}});
    }
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
    return 0;
}
