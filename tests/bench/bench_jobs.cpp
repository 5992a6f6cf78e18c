// Several jobs on one fabric (issue 84's targets), through the session every front end runs:
//  1. A 4:1 oversubscribed leaf-spine of 64 GPUs, two GPT-3 6.7B jobs of 32 GPUs (TP8 DP4): packed (no link
//     shared: slowdown within 1 % of 1.0) and spread (both under every leaf: both above 1.05), at flow level
//     and at packet level (agreeing within 3 % per job).
//  2. roft-128, two GPT-3 13B TP8 PP2 DP4 jobs: slowdown per job under packed, spread and random (seeds 1–8) at
//     flow level, and at packet level with skipping (--packet 1); skipping's wall-time gain on the packed mix against
//     its gain on one job (target: at least half).
//  3. Sixteen 64-GPU jobs on roft-1024 at flow level, isolation runs included (target: under 60 s on 2 threads).
// Packet-level runs carry ACKs in the switches' control queue (network.ack.switch_queue "control", --acks): with
// the reference's "data", DCQCN's high-priority ACKs overflow a paused port's headroom and a lossless fabric drops.
// Prints per row each job's iteration time, alone and slowdown, and the wall time.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "bench_args.h"
#include "bench_measure.h"

#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "session/llm_session.h"

using namespace orrery;

namespace {

using bench::seconds_since;

nlohmann::json job(const std::string& name, const std::string& model, const nlohmann::json& parallel, const nlohmann::json& placement) {
    return {{"name", name}, {"model", {{"preset", model}}}, {"gpu", "H100"}, {"parallel", parallel}, {"placement", placement}};
}

// `acks`: network.ack.switch_queue, set at packet level only (the other levels have no switch queues).
nlohmann::json scenario(const nlohmann::json& topology, const nlohmann::json& jobs, const std::string& mode, const std::string& acks = "control") {
    nlohmann::json network = {{"preset", "reference-400g"}};
    if (mode == "packet") network["ack"] = {{"switch_queue", acks}};
    return {{"format", "orrery-scenario"}, {"version", 1}, {"name", "bench_jobs"},
            {"topology", topology}, {"network", network}, {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", {{"kind", "jobs"}, {"network_mode", mode}, {"jobs", jobs}}}};
}

struct Run {
    std::vector<nlohmann::json> summaries;
    double wall = 0;
};

Run run(nlohmann::json doc, const PresetLibrary& presets, int threads, bool skipping = false) {
    if (skipping) doc["skipping"] = {{"enabled", true}};
    const LoadedScenario sc = load_scenario_document(doc, "bench", ".", presets, LoadOptions{false});
    std::vector<Fabric> fabrics;
    for (const Scenario& s : sc.scenarios) fabrics.push_back(build_fabric(s.topology));
    std::vector<const Fabric*> pointers;
    for (const Fabric& f : fabrics) pointers.push_back(&f);
    const std::filesystem::path file = std::filesystem::temp_directory_path() / ("bench_jobs_" + std::to_string(::getpid()) + ".sqlite");
    std::filesystem::remove(file);
    Run out;
    {
        ResultsStore store(file);
        std::vector<ExperimentRecord> records;
        for (const Experiment& x : sc.experiments) records.push_back({x.id, x.index, x.seed, x.sha256, x.parameters});
        store.begin_run(RunRecord{}, records);
        std::atomic<bool> cancel{false};
        SessionBackend backend;
        backend.threads = threads;
        const auto t0 = std::chrono::steady_clock::now();
        out.summaries = run_llm_session(sc, pointers, presets, store, backend, {}, cancel).summaries;
        out.wall = seconds_since(t0);
    }
    std::filesystem::remove(file);
    return out;
}

void print_jobs(const char* label, const Run& r) {
    for (const nlohmann::json& s : r.summaries) {
        if (s.value("status", "") != "ok") {
            std::printf("   %-28s %s: %s\n", label, s.value("status", "?").c_str(), s.value("message", "").c_str());
            continue;
        }
        for (const nlohmann::json& j : s["jobs"])
            std::printf("   %-28s job %-4s %9.3f ms  alone %9.3f ms  slowdown %.4f  (hosts %s)\n", label, j["name"].get<std::string>().c_str(),
                        j["iteration_time_s"].get<double>() * 1e3, j.value("alone_iteration_time_s", 0.0) * 1e3, j.value("slowdown", 0.0),
                        j["hosts"].get<std::string>().c_str());
    }
    std::printf("   %-28s wall %.2f s\n", label, r.wall);
}

}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Several jobs on one fabric: placement, interference, slowdowns (issue 84).",
                                              {{"--rows", "which rows to run (default 123)"},
                                               {"--threads", "CPU threads (default 2)"},
                                               {"--packet", "1: also the packet-level runs (default 1)"},
                                               {"--acks", "network.ack.switch_queue of the packet-level runs: control (default) or data"}});
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, also into a file
    const std::string rows = args.count("--rows") ? args.at("--rows") : "123";
    const std::string acks = args.count("--acks") ? args.at("--acks") : "control";
    const int threads = args.count("--threads") ? std::atoi(args.at("--threads").c_str()) : 2;
    const bool packet = !args.count("--packet") || args.at("--packet") != "0";
    const PresetLibrary presets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

    if (rows.find('1') != std::string::npos) {
        std::printf("1. leaf-spine 64 GPUs (4 leaves of 16, 4 spines, 4:1), two GPT-3 6.7B TP8 DP4 jobs\n");
        const nlohmann::json topo = {{"generator", "leaf-spine"}, {"leaves", 4}, {"spines", 4}, {"hosts_per_leaf", 16}, {"oversubscription", 4},
                                     {"servers", {{"gpus_per_server", 8}}}, {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}};
        const nlohmann::json parallel = {{"tp", 8}, {"dp", 4}, {"micro_batches", 4}};
        for (const char* policy : {"packed", "spread"}) {
            const nlohmann::json jobs = {job("a", "gpt3-6.7b", parallel, {{"policy", policy}}), job("b", "gpt3-6.7b", parallel, {{"policy", policy}})};
            const Run flow = run(scenario(topo, jobs, "flow"), presets, threads);
            print_jobs((std::string(policy) + ", flow").c_str(), flow);
            if (!packet) continue;
            const Run pk = run(scenario(topo, jobs, "packet", acks), presets, threads);
            print_jobs((std::string(policy) + ", packet").c_str(), pk);
            for (size_t j = 0; j < 2 && pk.summaries[0].contains("jobs"); ++j)
                std::printf("   %-28s job %zu: packet / flow − 1 = %+.2f %%\n", policy, j,
                            100 * (pk.summaries[0]["jobs"][j]["iteration_time_s"].get<double>() / flow.summaries[0]["jobs"][j]["iteration_time_s"].get<double>() - 1));
        }
    }
    if (rows.find('2') != std::string::npos) {
        std::printf("2. roft-128, two GPT-3 13B TP8 PP2 DP4 jobs\n");
        const nlohmann::json topo = {{"preset", "roft-128"}};
        const nlohmann::json parallel = {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"micro_batches", 8}};
        std::vector<nlohmann::json> placements = {{{"policy", "packed"}}, {{"policy", "spread"}}};
        for (int seed = 1; seed <= 8; ++seed) placements.push_back({{"policy", "random"}, {"seed", seed}});
        for (const nlohmann::json& p : placements) {
            nlohmann::json pb = p;
            if (pb.contains("seed")) pb["seed"] = pb["seed"].get<int>() + 100;  // the second job's own draw
            const nlohmann::json jobs = {job("a", "gpt3-13b", parallel, p), job("b", "gpt3-13b", parallel, pb)};
            const std::string label = p.dump();
            print_jobs((label + ", flow").c_str(), run(scenario(topo, jobs, "flow"), presets, threads));
            if (packet)
                print_jobs((label + ", packet+skip").c_str(), run(scenario(topo, jobs, "packet", acks), presets, threads, true));
        }
        if (packet) {
            // What skipping gains on the mix against what it gains on one job (packed, no isolation runs: walls of
            // the experiment alone). Target: the mix keeps at least half of the one job's gain.
            auto gain = [&](const nlohmann::json& jobs, const char* what) {
                nlohmann::json doc = scenario(topo, jobs, "packet", acks);
                doc["workload"]["isolation"] = false;
                const Run plain = run(doc, presets, threads), skipped = run(doc, presets, threads, true);
                const double t_plain = plain.summaries[0].value("iteration_time_s", 0.0), t_skip = skipped.summaries[0].value("iteration_time_s", 0.0);
                std::printf("   %-28s without skipping %.2f s wall (%.3f ms), with %.2f s wall (%.3f ms, %+.3f %%): gain %.2fx\n", what, plain.wall,
                            t_plain * 1e3, skipped.wall, t_skip * 1e3, 100 * (t_skip / t_plain - 1), plain.wall / skipped.wall);
                return plain.wall / skipped.wall;
            };
            const nlohmann::json packed = {{"policy", "packed"}};
            const double one = gain(nlohmann::json::array({job("a", "gpt3-13b", parallel, packed)}), "one job, packet");
            const double mix = gain({job("a", "gpt3-13b", parallel, packed), job("b", "gpt3-13b", parallel, packed)}, "two jobs packed, packet");
            std::printf("   skipping's gain on the mix / on one job: %.2f (target at least 0.5)\n", mix / one);
        }
    }
    if (rows.find('3') != std::string::npos) {
        std::printf("3. roft-1024, sixteen GPT-3 6.7B TP8 DP8 jobs of 64 GPUs, flow level, isolation runs included\n");
        nlohmann::json jobs = nlohmann::json::array();
        for (int j = 0; j < 16; ++j)
            jobs.push_back(job("j" + std::to_string(j), "gpt3-6.7b", {{"tp", 8}, {"dp", 8}, {"micro_batches", 4}}, {{"policy", "random"}, {"seed", j + 1}}));
        const Run r = run(scenario({{"preset", "roft-1024"}}, jobs, "flow"), presets, threads);
        print_jobs("16 jobs, flow", r);
        std::printf("   target: under 60 s on 2 threads: %.2f s on %d thread(s), peak RSS %.0f MiB\n", r.wall, threads, bench::peak_rss_mib());
    }
    return 0;
}
