// The device backend against the CPU backend (engine/runtime/device). Cases:
//   sweep64  (default) the 64-experiment k = 4 ring sweep of bench_engine (Kmin/Kmax varied, DCQCN), one
//            batch, on both backends with the same thread count, alternating, best of --repeats; checks the
//            results are identical. Under the OpenMP device system this is the "within 2x" target.
//   sweep500 500 experiments of a k = 8 fat-tree: all-to-all and ring traffic, DCQCN and HPCC parameters
//            varied (for a GPU machine).
//   k64      a k = 64 permutation of 1 MB flows, DCQCN (for a GPU machine: 65,536 hosts); --k sets another k
//            (k³/4 hosts: 60 gives 54,000).
// Every case prints wall time, packet-hops per second and the device memory at the end.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/device/device_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"

using namespace orrery;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); }

nlohmann::json scenario(int k, const nlohmann::json& flows, const std::string& cc, int kmin_kb, int kmax_kb, double rate_ai_mbps) {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", k}}},
            {"network", {{"ecn", {{"thresholds", {{{"rate", "100Gbps"}, {"kmin", std::to_string(kmin_kb) + "KB"},
                                                    {"kmax", std::to_string(kmax_kb) + "KB"}, {"pmax", 0.2}}}}}}}},
            {"cc", {{"algorithm", cc}, {cc, {{"rate_ai", std::to_string(rate_ai_mbps) + "Mbps"}}}}},
            {"workload", {{"kind", "flows"}, {"flows", flows}}}};
}

nlohmann::json ring(int hosts, const std::string& size) {
    nlohmann::json f = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i) f.push_back({{"src", i}, {"dst", (i + 1) % hosts}, {"size", size}});
    return f;
}

nlohmann::json all_to_all(int hosts, const std::string& size) {
    nlohmann::json f = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i)
        for (int j = 0; j < hosts; ++j)
            if (i != j) f.push_back({{"src", i}, {"dst", j}, {"size", size}});
    return f;
}

nlohmann::json permutation(int hosts, const std::string& size) {
    nlohmann::json f = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i) f.push_back({{"src", i}, {"dst", (i + hosts / 2) % hosts}, {"size", size}});
    return f;
}

struct Sweep {
    std::vector<LoadedScenario> loaded;
    std::vector<Fabric> fabrics;
    std::vector<ExperimentInput> inputs;
    void add(const nlohmann::json& doc) { loaded.push_back(load_scenario_document(doc, "bench", ".", PresetLibrary(), LoadOptions{false})); }
    void finish() {
        fabrics.reserve(loaded.size());
        for (const LoadedScenario& l : loaded) fabrics.push_back(build_fabric(l.scenarios[0].topology));
        for (size_t i = 0; i < loaded.size(); ++i) {
            char id[32];
            std::snprintf(id, sizeof id, "e%04zu", i);
            inputs.push_back({id, &loaded[i].scenarios[0], &fabrics[i], workload_flows(loaded[i].scenarios[0])});
        }
    }
};

std::string digest(const std::vector<ExperimentResult>& results) {
    std::string s;
    for (const ExperimentResult& r : results) {
        s += r.id + ":" + std::to_string(r.events) + ":" + std::to_string(r.end_time) + ";";
        for (const FlowResult& f : r.flows) s += std::to_string(f.finish) + ",";
    }
    return s;
}

uint64_t hops(const std::vector<ExperimentResult>& results) {
    uint64_t n = 0;
    for (const ExperimentResult& r : results) n += r.packet_hops;
    return n;
}
}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "The device backend against the CPU backend.",
                                              {{"--case", "sweep64 (default), sweep500 or k64"},
                                               {"--threads", "CPU threads for both backends (OpenMP device system: its threads), default 2"},
                                               {"--repeats", "runs per backend, alternating, best kept (default 3)"},
                                               {"--cpu", "also run the CPU backend: yes (default for sweep64) or no"},
                                               {"--k", "the fat-tree's k for --case k64 (default 64; even)"},
                                               {"--devices", "devices to divide the experiments over (default: the backend's choice; OpenMP: one group per thread)"}});
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines appear as they are printed, also into a pipe
    const std::string which = args.count("--case") ? args.at("--case") : "sweep64";
    const int threads = int(bench::bench_number(args, "--threads", 2));
    const int repeats = int(bench::bench_number(args, "--repeats", 3));
    const bool with_cpu = args.count("--cpu") ? args.at("--cpu") == "yes" : which == "sweep64";
    if (device_backend_system().empty()) {
        std::fprintf(stderr, "this build has no device backend (configure with -DORRERY_DEVICE_SYSTEM=CUDA or OMP)\n");
        return 1;
    }
    Sweep sweep;
    if (which == "sweep64") {
        for (int i = 0; i < 64; ++i) sweep.add(scenario(4, ring(16, "10MB"), "dcqcn", 100 + 25 * (i % 8), 800 + 200 * (i / 8), 5));
    } else if (which == "sweep500") {
        for (int i = 0; i < 500; ++i) {
            const bool hpcc = i % 2, a2a = (i / 2) % 2;
            sweep.add(scenario(8, a2a ? all_to_all(128, "64KB") : ring(128, "10MB"), hpcc ? "hpcc" : "dcqcn", 50 + 10 * (i % 10), 400 + 40 * (i / 10 % 10),
                               5 + 5 * (i / 100)));
        }
    } else if (which == "k64") {
        const int k = int(bench::bench_number(args, "--k", 64));
        if (k < 4 || k % 2) {
            std::fprintf(stderr, "--k: an even number of at least 4, not %d\n", k);
            return 2;
        }
        sweep.add(scenario(k, permutation(k * k * k / 4, "1MB"), "dcqcn", 100, 400, 5));
    } else {
        std::fprintf(stderr, "--case: sweep64, sweep500 or k64, not %s\n", which.c_str());
        return 2;
    }
    sweep.finish();
    std::printf("%s: %zu experiments; device backend: %s; %d thread%s\n", which.c_str(), sweep.inputs.size(), device_backend_system().c_str(), threads,
                threads == 1 ? "" : "s");
    RunOptions o;
    o.threads = threads;
    std::vector<double> cpu_s, device_s;
    std::string cpu_digest, device_digest;
    uint64_t packet_hops = 0;
    DeviceReport report;
    for (int repeat = 0; repeat < repeats; ++repeat) {
        if (with_cpu) {
            Batch b = compile_batch(sweep.inputs);
            const auto t0 = std::chrono::steady_clock::now();
            const auto r = run_cpu(b, o);
            cpu_s.push_back(seconds_since(t0));
            cpu_digest = digest(r);
        }
        Batch b = compile_batch(sweep.inputs);
        DeviceOptions d;
        d.report = &report;
        if (args.count("--devices")) d.devices = int(bench::bench_number(args, "--devices", 1));
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_device(b, o, d);
        device_s.push_back(seconds_since(t0));
        device_digest = digest(r);
        packet_hops = hops(r);
    }
    const double device_best = *std::min_element(device_s.begin(), device_s.end());
    std::printf("device backend: best %.3f s of %d, %.3g packet-hops/s, %llu group%s, %llu steps in %llu passes, at most %.1f MiB on a device "
                "(%.2f MiB per experiment, %llu packet blocks)\n",
                device_best, repeats, double(packet_hops) / device_best, (unsigned long long)report.groups, report.groups == 1 ? "" : "s",
                (unsigned long long)report.steps, (unsigned long long)report.passes, double(report.device_bytes) / (1 << 20),
                double(report.device_bytes) / (1 << 20) / double(sweep.inputs.size()), (unsigned long long)report.block_capacity);
    if (with_cpu) {
        const double cpu_best = *std::min_element(cpu_s.begin(), cpu_s.end());
        std::printf("CPU backend:    best %.3f s of %d, %.3g packet-hops/s\n", cpu_best, repeats, double(packet_hops) / cpu_best);
        std::printf("device / CPU wall time: %.2fx; results %s\n", device_best / cpu_best, cpu_digest == device_digest ? "identical" : "DIFFER");
        if (cpu_digest != device_digest) return 1;
    }
    return 0;
}
