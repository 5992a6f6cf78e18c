// The MPI sweep target (issue: sweeps over ranks): a 64-experiment k = 8 fat-tree sweep run by
// `orrery-cli run` under mpirun on 1 rank and on --ranks ranks (default 2), best of --repeats runs each
// (default 3): the wall times, their ratio, and whether both stores hold the same results (every table but
// wall times and the run record). Each experiment: a 128-flow ring of --size bytes per flow (default 2MB)
// under DCQCN, the sweep varying the ECN thresholds (8 Kmin/Kmax pairs) and DCQCN's additive increase (8 values).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_mpi.h"

int main(int argc, char** argv) {
    const auto args = orrery::bench::parse_bench_args(argc, argv, "orrery-cli run of a 64-experiment k = 8 sweep on 1 MPI rank and on several.",
                                                      {{"--ranks", "ranks of the second run (default 2)"},
                                                       {"--repeats", "runs of each, best wall kept (default 3)"},
                                                       {"--size", "bytes per flow (default 2MB)"}});
    const int ranks = int(orrery::bench::bench_number(args, "--ranks", 2));
    const int repeats = int(orrery::bench::bench_number(args, "--repeats", 3));
    const std::string size = args.count("--size") ? args.at("--size") : "2MB";
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "orrery_bench_mpi_sweep";
    std::filesystem::create_directories(dir);
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < 128; ++i) flows.push_back({{"src", i}, {"dst", (i + 17) % 128}, {"size", size}});
    nlohmann::json thresholds = nlohmann::json::array(), rate_ai = nlohmann::json::array();
    for (int i = 0; i < 8; ++i) {
        thresholds.push_back(nlohmann::json::array(
            {{{"rate", "100Gbps"}, {"kmin", std::to_string(20 + 20 * i) + "KB"}, {"kmax", std::to_string(400 + 100 * i) + "KB"}, {"pmax", 0.2}}}));
        rate_ai.push_back(std::to_string(5 << i) + "Mbps");
    }
    const nlohmann::json doc = {
        {"format", "orrery-scenario"}, {"version", 1}, {"name", "bench mpi sweep"},
        {"topology", {{"generator", "fat-tree"}, {"k", 8}}}, {"network", {{"preset", "reference-100g"}}}, {"cc", {{"preset", "dcqcn-100g"}}},
        {"workload", {{"kind", "flows"}, {"flows", flows}}},
        {"sweep", {{"parameters", {{{"path", "network.ecn.thresholds"}, {"values", thresholds}}, {{"path", "cc.dcqcn.rate_ai"}, {"values", rate_ai}}}}}}};
    std::ofstream(dir / "sweep.json") << doc.dump(1);
    auto run = [&](int n, const std::string& store) { return orrery::bench::best_mpirun_wall(dir, n, "sweep.json", store, repeats); };
    const double one = run(1, "one.sqlite");
    const double many = run(ranks, "many.sqlite");
    const bool same = orrery::bench::store_rows(dir / "one.sqlite") == orrery::bench::store_rows(dir / "many.sqlite");
    std::printf("64 experiments (k = 8 fat-tree, 128 flows of %s each), best of %d: 1 rank %.2f s, %d ranks %.2f s: %.2fx; same flows and events: %s\n",
                size.c_str(), repeats, one, ranks, many, one / many, same ? "yes" : "NO");
    return same ? 0 : 1;
}
