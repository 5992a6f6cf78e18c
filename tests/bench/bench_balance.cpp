// Load balancing and NIC delivery: a k-ary fat-tree (default k = 8) with a random permutation (seed 1) of 2 MB
// flows under DCQCN, one experiment per (load balancing, delivery) pair in one batch. Prints, per pair, the mean
// and p99 flow completion time, each against the ideal (a flow alone on its path: its bytes at line rate plus
// the base round trip), the last completion, drops, packet-hops and the run's cost per packet-hop (figures:
// tests/bench/RESULTS.md).
// With --fail AT, the first aggregation–core link an ECMP path of the permutation crosses fails at AT, routing
// moving around it --convergence later: the table adds the packets lost to the failure, those switches sent into
// the dead link, retransmission timeouts and packets sent again.
// Usage: bench_balance [--k K] [--size BYTES] [--threads N] [--only BALANCING/DELIVERY] [--cc NAME] [--ecn on|off]
//                      [--fail TIME] [--convergence TIME] [--rto TIME|off]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "topology/routing.h"

using namespace orrery;

namespace {
struct Mode {
    const char* balancing;
    const char* delivery;
};
constexpr Mode kModes[] = {{"ecmp", "in_order"},     {"ecmp", "out_of_order"},     {"spray", "in_order"}, {"spray", "out_of_order"},
                           {"adaptive", "in_order"}, {"adaptive", "out_of_order"}, {"flowlet", "in_order"}};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}
}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Load balancing and NIC delivery on a fat-tree permutation under DCQCN.",
                                              {{"--k", "fat-tree radix, even (default 8: 128 hosts)"},
                                               {"--size", "bytes per flow (default 2000000)"},
                                               {"--threads", "worker threads (default 1)"},
                                               {"--only", "one balancing/delivery pair, e.g. spray/out_of_order (default: all)"},
                                               {"--cc", "congestion control (default dcqcn)"},
                                               {"--ecn", "on (default) or off: switches mark ECN"},
                                               {"--fail", "a time: one aggregation-core link on an ECMP path fails then"},
                                               {"--convergence", "routing convergence after the failure (default 1ms)"},
                                               {"--rto", "NIC retransmission timeout, a time or off (default: the scenario's, NCCL's)"}});
    const std::string cc = args.count("--cc") ? args.at("--cc") : "dcqcn";
    const std::string ecn = args.count("--ecn") ? args.at("--ecn") : "on";
    if (ecn != "on" && ecn != "off") {
        std::fprintf(stderr, "option --ecn: expected on or off, found %s\n", ecn.c_str());
        return 2;
    }
    const std::string only = args.count("--only") ? args.at("--only") : "";
    const int k = static_cast<int>(bench::bench_number(args, "--k", 8));
    const long long size = bench::bench_number(args, "--size", 2000000);
    const int threads = static_cast<int>(bench::bench_number(args, "--threads", 1));
    if (k % 2 != 0 || k < 2 || k > 64) {
        std::fprintf(stderr, "option --k: expected an even radix from 2 to 64, found %d\n", k);
        return 2;
    }
    const int hosts = k * k * k / 4;
    std::vector<int> perm(static_cast<size_t>(hosts));
    for (int i = 0; i < hosts; ++i) perm[size_t(i)] = i;
    std::mt19937_64 rng(1);
    std::shuffle(perm.begin(), perm.end(), rng);
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i)
        if (perm[size_t(i)] != i) flows.push_back({{"src", i}, {"dst", perm[size_t(i)]}, {"size", std::to_string(size) + "B"}});

    std::vector<LoadedScenario> loaded;
    std::vector<Fabric> fabrics;
    std::vector<Mode> modes;
    for (const Mode& m : kModes)
        if (only.empty() || only == std::string(m.balancing) + "/" + m.delivery) modes.push_back(m);
    if (modes.empty()) {
        std::fprintf(stderr, "option --only: no pair named %s\n", only.c_str());
        return 2;
    }
    // The failed link: the first aggregation-to-core hop of an ECMP path of the permutation.
    nlohmann::json events = nlohmann::json::array();
    if (args.count("--fail")) {
        nlohmann::json healthy = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", k}}},
                                  {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        const LoadedScenario h = load_scenario_document(healthy, "balance", ".", PresetLibrary(), LoadOptions{false});
        const Fabric f = build_fabric(h.scenarios[0].topology);
        const Routes routes = build_routes(f);
        LinkId failed = kNone;
        for (const FlowSpec& fs : workload_flows(h.scenarios[0])) {
            for (const Hop& hop : flow_path(f, routes, fs.src, fs.dst, fs.sport, fs.dport)) {
                const uint32_t port = f.port_begin[hop.node] + hop.port;
                if (f.node_tier[hop.node] == 2 && f.node_tier[f.port_peer[port]] == 3) {
                    failed = f.port_link[port];
                    break;
                }
            }
            if (failed != kNone) break;
        }
        if (failed == kNone) {
            std::fprintf(stderr, "option --fail: no ECMP path of the permutation crosses an aggregation-core link\n");
            return 2;
        }
        events.push_back({{"at", args.at("--fail")}, {"link", failed}, {"state", "down"}});
        std::printf("link %u (node %u - node %u) fails at %s, routing converges %s later\n", failed, f.link_a[failed], f.link_b[failed], args.at("--fail").c_str(),
                    args.count("--convergence") ? args.at("--convergence").c_str() : "1ms");
    }
    std::vector<Mode> accepted;
    for (const Mode& m : modes) {
        nlohmann::json topology = {{"generator", "fat-tree"}, {"k", k}};
        if (!events.empty()) topology["events"] = events;
        nlohmann::json network = {{"load_balancing", m.balancing}, {"nic", {{"delivery", m.delivery}}}, {"ecn", {{"enabled", ecn == "on"}}}};
        if (args.count("--rto")) network["nic"]["retransmit_timeout"] = args.at("--rto");
        if (args.count("--convergence")) network["routing"] = {{"convergence", args.at("--convergence")}};
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology}, {"network", network},
                              {"cc", {{"algorithm", cc}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
        try {  // a pair the CC cannot run (HPCC balances per flow only) is said and left out
            loaded.push_back(load_scenario_document(doc, "balance", ".", PresetLibrary(), LoadOptions{false}));
        } catch (const InputError& e) {
            std::printf("%s/%s left out: %s\n", m.balancing, m.delivery, e.what());
            continue;
        }
        fabrics.push_back(build_fabric(loaded.back().scenarios[0].topology));
        accepted.push_back(m);
    }
    modes = accepted;
    if (modes.empty()) return 2;
    std::vector<ExperimentInput> inputs;
    for (size_t i = 0; i < loaded.size(); ++i)
        inputs.push_back({std::string(modes[i].balancing) + "/" + modes[i].delivery, &loaded[i].scenarios[0], &fabrics[i],
                          workload_flows(loaded[i].scenarios[0])});
    Batch batch = compile_batch(inputs);
    RunOptions options;
    options.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = run_cpu(batch, options);
    const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::printf("k = %d fat-tree, %zu flows of %lld B (random permutation, seed 1), %s, ECN %s, %d thread(s), %.2f s for the batch\n", k, flows.size(),
                size, cc.c_str(), ecn.c_str(), threads, run_s);
    std::printf("%-24s %12s %10s %12s %10s %12s %8s %14s %8s %8s %8s %8s\n", "balancing/delivery", "mean FCT us", "mean/ideal", "p99 FCT us", "p99/ideal",
                "last us", "drops", "packet-hops", "lost", "sent-in", "timeouts", "resent");
    unsigned long long hops = 0;
    for (size_t e = 0; e < results.size(); ++e) {
        const ExperimentResult& r = results[e];
        hops += r.packet_hops;
        std::vector<double> fct, ideal;
        size_t unfinished = 0;
        for (const FlowResult& f : r.flows) {
            if (f.finish == net::kNever) {
                ++unfinished;
                continue;
            }
            const net::FlowInfo& info = batch.flow[f.flow];
            fct.push_back(double(f.finish - info.start) / 1e6);
            ideal.push_back(double(info.standalone_fct_ns) / 1e3);
        }
        if (fct.empty()) {
            std::printf("%-24s no flow finished\n", r.id.c_str());
            continue;
        }
        double mean = 0, mean_ideal = 0;
        for (size_t i = 0; i < fct.size(); ++i) mean += fct[i] / double(fct.size()), mean_ideal += ideal[i] / double(ideal.size());
        const double p99 = percentile(fct, 0.99), p99_ideal = percentile(ideal, 0.99);
        std::printf("%-24s %12.1f %10.3f %12.1f %10.3f %12.1f %8llu %14llu %8llu %8llu %8llu %8llu%s\n", r.id.c_str(), mean, mean / mean_ideal, p99,
                    p99 / p99_ideal, *std::max_element(fct.begin(), fct.end()), (unsigned long long)r.drops, (unsigned long long)r.packet_hops,
                    (unsigned long long)r.lost_to_failures, (unsigned long long)r.sent_into_failures, (unsigned long long)r.timeouts,
                    (unsigned long long)r.retransmits, unfinished ? (" (" + std::to_string(unfinished) + " unfinished)").c_str() : "");
    }
    std::printf("%llu packet-hops in all, %.1f ns each\n", hops, run_s * 1e9 / double(hops));
    return 0;
}
