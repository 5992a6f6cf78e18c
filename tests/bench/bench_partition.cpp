// The partition target (issue: one experiment over ranks): a k-ary fat-tree permutation of 1 MB flows under
// DCQCN (as bench_scale builds it: the same shuffle) run by `orrery-cli run --partition` under mpirun on 1 rank
// and on --ranks ranks (default 2), best of --repeats runs each (default 1): the wall times, their ratio, each
// rank's share (nodes, boundary rings, bytes exchanged per step, time waiting at step boundaries, as the run
// prints them), and whether both stores hold the same flows and event counts.
// Usage: bench_partition [--k K] [--ranks N] [--repeats R]   (default k = 32: 8,192 hosts)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_mpi.h"

int main(int argc, char** argv) {
    const auto args = orrery::bench::parse_bench_args(argc, argv, "orrery-cli run --partition of a k-ary fat-tree permutation on 1 MPI rank and on several.",
                                                      {{"--k", "fat-tree radix, even (default 32: 8,192 hosts)"},
                                                       {"--ranks", "ranks of the second run (default 2)"},
                                                       {"--repeats", "runs of each, best wall kept (default 1)"}});
    const int k = int(orrery::bench::bench_number(args, "--k", 32));
    const int ranks = int(orrery::bench::bench_number(args, "--ranks", 2));
    const int repeats = int(orrery::bench::bench_number(args, "--repeats", 1));
    if (k % 2 != 0 || k < 4 || k > 128) {
        std::fprintf(stderr, "option --k: expected an even radix from 4 to 128, found %d\n", k);
        return 2;
    }
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "orrery_bench_partition";
    std::filesystem::create_directories(dir);
    const int hosts = k * k * k / 4;
    std::vector<int> perm(size_t(hosts), 0);
    for (int i = 0; i < hosts; ++i) perm[size_t(i)] = i;
    std::mt19937_64 rng(1);
    std::shuffle(perm.begin(), perm.end(), rng);
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i)
        if (perm[size_t(i)] != i) flows.push_back({{"src", i}, {"dst", perm[size_t(i)]}, {"size", "1000000B"}});
    const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", "bench partition"},
                                {"topology", {{"generator", "fat-tree"}, {"k", k}}}, {"cc", {{"algorithm", "dcqcn"}}},
                                {"workload", {{"kind", "flows"}, {"flows", flows}}}, {"output", {{"record", {"fct"}}}}};
    std::ofstream(dir / "permutation.json") << doc.dump();
    auto run = [&](int n, const std::string& store) { return orrery::bench::best_mpirun_wall(dir, n, "permutation.json --partition", store, repeats); };
    const double one = run(1, "one.sqlite");
    const double many = run(ranks, "many.sqlite");
    const bool same = orrery::bench::store_rows(dir / "one.sqlite") == orrery::bench::store_rows(dir / "many.sqlite");
    std::printf("k = %d fat-tree, %zu flows of 1 MB (DCQCN), partitioned, best of %d (process wall, start-up included): 1 rank %.2f s, %d ranks %.2f s: "
                "%.2fx; same flows and events: %s\n",
                k, flows.size(), repeats, one, ranks, many, one / many, same ? "yes" : "NO");
    std::istringstream log(orrery::bench::read_text(dir / "many.sqlite.log"));
    for (std::string line; std::getline(log, line);)
        if (line.rfind("rank ", 0) == 0) std::printf("  %s\n", line.c_str());
    return same ? 0 : 1;
}
