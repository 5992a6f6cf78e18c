// Steady-state skipping (issue 6's targets), skipping on against off:
//  1. the reference ring (16 × 10 MB on the k = 4 fat-tree, 100 Gb/s) and incast (15 × 1 MB into host 0)
//     under each CC: wall-time ratio (best of five runs each), per-flow FCT error (mean, max), share of
//     events skipped;
//  2. the same ring again with the memo file its first run wrote: memo hit rate, FCT error;
//  3. GPT-3 13B TP8 PP4 DP4 on 128 GPUs (roft-128, 400 Gb/s, DCQCN), one iteration: wall-time ratio,
//     iteration-time error, per-flow FCT error, events skipped, then again with the memo file of that run
//     (--llm 0 leaves it out: the run without skipping takes 30-50 s);
//  4. the MoE row of Wormhole's Table 1 (8×13B, TP8 EP8 DP4 PP4 on 128 GPUs), the same figures (--moe 1). The
//     MoE rows use NCCL's PXN as the wormhole-moe scenario does (cross-rail all-to-all data moves over NVLink to
//     the GPU on the receiver's rail, so EP traffic stays on its rails); --pxn 0 sends it over the spines.
//  5. a sweep of GPT-3 13B (--sweep N: N seeds under each --cc), skipping on, with skipping.share_memo off and
//     on: wall, events, memo misses against the distinct transients of the sweep, and how far sharing moves
//     each experiment's iteration time and flows from its run without sharing.
//  6. Wormhole Table 1's 1,024-GPU rows (--table1 gpt175b,moe32x22b: GPT-3 175B TP8 PP8 DP16, MoE 32x22B TP8 EP8
//     PP8 DP16, roft-1024), skipping on, one run each. Without skipping a whole iteration takes hours here, so
//     with --stop-ms T both runs stop at T ms of simulated time and are compared on the flows that finished
//     in both (the same collectives of the same prefix of the iteration); a stop past the iteration's end
//     compares the whole iteration, its time too. --seed N runs them under seed N (default 1); --noise 1 adds
//     the same prefix without skipping under seed N + 1, compared with seed N: how far the packet level moves
//     its own flows. --seeds K runs both under seeds N..N+K-1 and sets skipping's error against the packet
//     level's own spread over them: iterations and their range, per-flow error against the same seed beside
//     the packet level's under one seed against another, each by flow size. --packet-cache DIR keeps their runs
//     without skipping there and reuses them (packet_run_cache.h): a change to the skipper is then measured
//     against several seeds at the cost of its skip-on runs.
// --cc runs the LLM rows under each listed CC (the 400 Gb/s presets); --off 0 leaves out their skip-off runs; with
// --packet-cache DIR the GPT-3 13B and MoE 8x13B rows' runs without skipping are kept and reused too.
// Each LLM run is repeated --llm-repeats times (default 3; identical results every time) and its best wall
// time kept, as for the flow scenarios: this VM's wall times vary by up to 1.7x from one run to the next.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "bench_args.h"
#include "llm_packet_run.h"
#include "packet_run_cache.h"

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "workload/llm_job.h"
#include "wormhole/memo.h"
#include "common/sha256.h"
#include "common/version.h"

using namespace orrery;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); }

struct Run {
    double wall = 0;
    std::vector<double> fct;  // ps per flow row, -1 unfinished
    std::vector<int64_t> start;  // ps per flow row: when the job released it (LLM flows start as their dependencies finish)
    std::vector<uint64_t> size;  // bytes per flow row
    ExperimentResult result;
    double iteration_s = 0;
    double prepare = 0;  // s of `wall` spent building the LLM job (its task graph), before any step
};

void record(Run& r, const Batch& b, const ExperimentResult& res) {
    r.result = res;
    r.fct.assign(b.flow.size(), -1);
    r.start.assign(b.flow.size(), 0);
    r.size.assign(b.flow.size(), 0);
    for (size_t f = 0; f < b.flow.size(); ++f) r.start[f] = b.flow[f].start, r.size[f] = b.flow[f].size;
    for (const FlowResult& f : res.flows)
        if (f.finish != net::kNever) r.fct[f.flow] = double(f.finish - b.flow[f.flow].start);
}

// "(N skips, ...)": what a skip-on run's skipper did.
std::string skip_counts(const wormhole::SkipReport& k) {
    char text[256];
    std::snprintf(text, sizeof text, "(%zu skips, %u finishing their flows, memo %u hits / %u misses / %u followed, tails %u measured / %u replayed)", k.skips.size(),
                  k.completion_skips, k.memo_hits, k.memo_misses, k.memo_follows, k.tails_measured, k.tail_replays);
    return text;
}

void compare(const char* label, const Run& off, const Run& on) {
    double sum = 0, worst = 0;
    size_t n = 0;
    for (size_t f = 0; f < off.fct.size(); ++f) {
        if (off.fct[f] <= 0 || on.fct[f] <= 0) continue;
        const double e = std::abs(on.fct[f] - off.fct[f]) / off.fct[f];
        sum += e, worst = std::max(worst, e), ++n;
    }
    const double saved = double(on.result.skipping.events_saved);
    std::printf("%-22s wall %8.3f s -> %7.3f s (%6.1fx)   FCT error mean %.3f%% max %.2f%%   events %llu -> %llu, skipped %.1f%% %s"
                "   steps %llu (%llu split over threads) -> %llu (%llu)\n",
                label, off.wall, on.wall, off.wall / on.wall, 100 * sum / double(std::max<size_t>(n, 1)), 100 * worst,
                (unsigned long long)off.result.events, (unsigned long long)on.result.events, 100 * saved / (saved + double(on.result.events)),
                skip_counts(on.result.skipping).c_str(),
                (unsigned long long)off.result.steps,
                (unsigned long long)off.result.split_steps, (unsigned long long)on.result.steps, (unsigned long long)on.result.split_steps);
}

nlohmann::json flows_scenario(const std::string& cc, bool skipping, const nlohmann::json& flows) {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"preset", "fat-tree-k4"}}}, {"network", {{"preset", "reference-100g"}}},
            {"cc", {{"preset", cc + "-100g"}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}, {"skipping", {{"enabled", skipping}}}};
}

nlohmann::json ring(const std::string& cc, bool skipping) {
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < 16; ++i) flows.push_back({{"src", i}, {"dst", (i + 1) % 16}, {"size", "10MB"}, {"start", "2s"}});
    return flows_scenario(cc, skipping, flows);
}

nlohmann::json incast(const std::string& cc, bool skipping) {
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 1; i < 16; ++i) flows.push_back({{"src", i}, {"dst", 0}, {"size", "1MB"}, {"start", "2s"}});
    return flows_scenario(cc, skipping, flows);
}

int g_window = 0;  // --window: skipping.window of the LLM rows (0: appendix F's per partition), set once by main
int g_sample_ns = 0;  // --sample-ns: skipping.sample_interval of the LLM rows (0: the largest base RTT), set once by main
bool g_moe_pxn = true;  // --pxn: the MoE rows send cross-rail all-to-all data over NVLink to the receiver's rail first (NCCL's PXN, as the bundled wormhole-moe scenario), set once by main

nlohmann::json llm(const std::string& fabric, const std::string& model, nlohmann::json parallel, bool skipping, const std::string& cc) {
    nlohmann::json skip = {{"enabled", skipping}};
    if (g_window > 0) skip["window"] = g_window;
    if (g_sample_ns > 0) skip["sample_interval"] = std::to_string(g_sample_ns) + "ns";
    nlohmann::json workload = {{"kind", "llm"}, {"model", {{"preset", model}}}, {"gpu", "H100"}, {"network_mode", "packet"}, {"parallel", parallel}};
    if (parallel.value("ep", 1) > 1 && g_moe_pxn) workload["collectives"] = {{"pxn", true}};
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"topology", {{"preset", fabric}}},
            {"network", {{"preset", "reference-400g"}}},
            {"cc", {{"preset", cc + "-400g"}}},
            {"workload", workload},
            {"skipping", skip}};
}


// The flow scenarios run in tens of milliseconds, where this VM's noise is a few: each is run five times
// (identical results every time) and its best wall time kept.
Run run_flows(const PresetLibrary& presets, const nlohmann::json& doc, const wormhole::MemoTable* memo = nullptr) {
    const LoadedScenario sc = load_scenario_document(doc, "bench", ".", presets, LoadOptions{false});
    const Fabric f = build_fabric(sc.scenarios[0].topology);
    Run r;
    r.wall = 1e300;
    for (int repeat = 0; repeat < 5; ++repeat) {
        Batch b = compile_batch({{"e0000", &sc.scenarios[0], &f, workload_flows(sc.scenarios[0])}});
        RunOptions o;
        o.memo = memo;
        const auto t0 = std::chrono::steady_clock::now();
        const auto res = run_cpu(b, o);
        r.wall = std::min(r.wall, seconds_since(t0));
        record(r, b, res[0]);
    }
    return r;
}

// What a run learned, through a memo file, as `skipping.memo_file` carries it from one run to the next.
wormhole::MemoTable through_memo_file(const std::vector<wormhole::MemoEntry>& learned) {
    const std::filesystem::path file = std::filesystem::temp_directory_path() / "orrery_bench_skip_memo.sqlite";
    std::filesystem::remove(file);
    wormhole::save_memo(file, learned);
    wormhole::MemoTable memo = wormhole::load_memo(file);
    std::filesystem::remove(file);
    return memo;
}

double hit_rate(const wormhole::SkipReport& k) { return 100.0 * k.memo_hits / std::max(1u, k.memo_hits + k.memo_misses); }

// Per-flow FCT error of `on` against `off` over the flows finished in both, whole and by flow size: an LLM job's
// flows come in a few sizes (all-to-all pieces, pipeline transfers, ring steps), each with its own exposure to
// congestion.
struct SizeClass {
    size_t flows = 0;
    double error = 0, signed_error = 0;  // sums of |relative error| and relative error
};
struct FlowErrors {
    size_t flows = 0;
    double error = 0;  // sum of |relative error|
    std::map<uint64_t, SizeClass> by_size;
    double mean() const { return flows ? error / double(flows) : 0; }
};
FlowErrors flow_errors(const Run& off, const Run& on) {
    FlowErrors out;
    for (size_t f = 0; f < off.fct.size(); ++f)
        if (off.fct[f] > 0 && on.fct[f] > 0) {
            const double e = (on.fct[f] - off.fct[f]) / off.fct[f];
            SizeClass& c = out.by_size[off.size[f]];
            ++c.flows, c.error += std::abs(e), c.signed_error += e;
            ++out.flows, out.error += std::abs(e);
        }
    return out;
}
// The `count` sizes carrying most of the mean: (percentage points of the mean, size), heaviest first.
std::vector<std::pair<double, uint64_t>> heaviest_sizes(const FlowErrors& errors, size_t count) {
    std::vector<std::pair<double, uint64_t>> heaviest;
    for (const auto& [size, c] : errors.by_size) heaviest.push_back({100 * c.error / double(std::max<size_t>(errors.flows, 1)), size});
    std::sort(heaviest.rbegin(), heaviest.rend());
    if (heaviest.size() > count) heaviest.resize(count);
    return heaviest;
}

// How the per-flow errors spread (a mean can hide a few flows held back for milliseconds), and the outliers
// by flow row, to trace (docs/history/wormhole-skipping.md explains the ones found so far).
void spread(const Run& off, const Run& on) {
    std::vector<std::pair<double, size_t>> by_error;  // signed relative error, flow row
    double signed_sum = 0;
    for (size_t f = 0; f < off.fct.size(); ++f)
        if (off.fct[f] > 0 && on.fct[f] > 0) {
            by_error.push_back({(on.fct[f] - off.fct[f]) / off.fct[f], f});
            signed_sum += by_error.back().first;
        }
    if (by_error.empty()) return;
    std::sort(by_error.begin(), by_error.end());
    std::vector<double> errors;
    for (const auto& [e, f] : by_error) errors.push_back(std::abs(e));
    std::sort(errors.begin(), errors.end());
    auto at = [&](double q) { return 100 * errors[std::min(errors.size() - 1, size_t(q * double(errors.size())))]; };
    size_t over = 0;
    for (double e : errors) over += e > 0.1;
    auto signed_at = [&](double q) { return 100 * by_error[std::min(by_error.size() - 1, size_t(q * double(by_error.size())))].first; };
    std::printf("   per-flow FCT error: median %.3f%%, p90 %.2f%%, p99 %.1f%%; %.1f%% of flows off by more than 10%%; signed mean %+.2f%%, signed p10 / p50 / p90 "
                "%+.3f%% / %+.3f%% / %+.3f%%\n",
                at(0.5), at(0.9), at(0.99), 100.0 * double(over) / double(errors.size()), 100 * signed_sum / double(errors.size()), signed_at(0.1),
                signed_at(0.5), signed_at(0.9));
    // An LLM flow starts when its dependencies finish, so errors upstream move its start, and with it whom it
    // meets on its ports.
    std::vector<double> shift;
    for (const auto& [e, f] : by_error) shift.push_back(std::abs(double(on.start[f] - off.start[f])) / 1e6);
    std::sort(shift.begin(), shift.end());
    std::printf("   start times moved by skipping: median %.3f us, p90 %.3f us, max %.3f us\n", shift[shift.size() / 2], shift[shift.size() * 9 / 10],
                shift.back());
    // Where along the run they moved: the flows in tenths by their start in the first run (`off`), each tenth's
    // median signed start shift and mean per-flow error (an early shift that later ones inherit shows as a step).
    std::vector<std::pair<double, size_t>> by_start = by_error;  // the same (error, flow) pairs, in start order
    std::sort(by_start.begin(), by_start.end(), [&](const auto& a, const auto& b) {
        return off.start[a.second] != off.start[b.second] ? off.start[a.second] < off.start[b.second] : a.second < b.second;
    });
    std::printf("   by start time in the first run, tenths of the flows (first start: median signed start shift, mean per-flow error):\n  ");
    for (size_t t = 0; t < 10; ++t) {
        const size_t begin = by_start.size() * t / 10, end = by_start.size() * (t + 1) / 10;
        if (begin == end) continue;
        std::vector<double> moved;
        double error_sum = 0;
        for (size_t i = begin; i < end; ++i) {
            const auto [e, f] = by_start[i];
            moved.push_back(double(on.start[f] - off.start[f]) / 1e6);
            error_sum += std::abs(e);
        }
        std::nth_element(moved.begin(), moved.begin() + moved.size() / 2, moved.end());
        std::printf(" [%.1f ms: %+.1f us, %.2f%%]", double(off.start[by_start[begin].second]) / 1e9, moved[moved.size() / 2], 100 * error_sum / double(end - begin));
    }
    std::printf("\n");
    // Which kinds of transfer carry the mean: an LLM job's flows come in a few sizes (all-to-all pieces, pipeline
    // transfers, ring steps), each with its own exposure to congestion. Per size: flows, mean and signed mean
    // per-flow error, and its points of the overall mean.
    const FlowErrors sizes = flow_errors(off, on);
    const std::vector<std::pair<double, uint64_t>> heaviest = heaviest_sizes(sizes, 8);
    std::printf("   by flow size (the %zu carrying most of the mean; flows, mean / signed mean per-flow error, percentage points of the mean):\n  ", heaviest.size());
    for (const auto& [points, size] : heaviest) {
        const SizeClass& c = sizes.by_size.at(size);
        std::printf(" [%llu B: %zu, %.3f%% / %+.3f%%, %.3f pt]", (unsigned long long)size, c.flows, 100 * c.error / double(c.flows), 100 * c.signed_error / double(c.flows),
                    points);
    }
    std::printf("\n");
    auto show = [&](const char* what, size_t i) {
        const auto [e, f] = by_error[i];
        std::printf("%s flow %zu %+.1f%% (%.1f -> %.1f us, started %+.3f us)", what, f, 100 * e, off.fct[f] / 1e6, on.fct[f] / 1e6,
                    double(on.start[f] - off.start[f]) / 1e6);
    };
    std::printf("   slowest:");
    for (size_t i = 0; i < 3 && i < by_error.size(); ++i) show(i ? "," : "", by_error.size() - 1 - i);
    std::printf("; fastest:");
    for (size_t i = 0; i < 3 && i < by_error.size(); ++i) show(i ? "," : "", i);
    std::printf("\n");
}

// Wall time: preparing the job (its task graph) and running it; the best of `repeats` runs.
Run run_llm(const PresetLibrary& presets, const WorkloadTables& tables, const nlohmann::json& doc, int threads, int repeats,
            const wormhole::MemoTable* memo = nullptr) {
    const LoadedScenario sc = load_scenario_document(doc, "bench", ".", presets, LoadOptions{false});
    const Scenario& s = sc.scenarios[0];
    const Fabric f = build_fabric(s.topology);
    Run r;
    r.wall = 1e300;
    for (int repeat = 0; repeat < repeats; ++repeat) {
        const auto t0 = std::chrono::steady_clock::now();
        const LlmJob job = prepare_llm_job(*s.workload.llm, f, tables);
        const double prepare = seconds_since(t0);
        const bench::LlmPacketRun run = bench::run_llm_packet(s, f, job, tables, threads, memo);
        const double wall = seconds_since(t0);
        if (wall < r.wall) r.wall = wall, r.prepare = prepare;
        record(r, run.batch, run.results[0]);
        r.iteration_s = run.unfinished ? -1 : run.outcome.iteration_time_s;
    }
    return r;
}

std::filesystem::path g_packet_cache;  // --packet-cache: where the LLM rows keep their packet-level runs (empty: nowhere), set once by main

// An LLM row without skipping: from --packet-cache when that folder has this very document's run, else run and
// stored there. A run taken from the folder says so, with the revision that made it (packet_run_cache.h).
Run packet_level_run(const PresetLibrary& presets, const WorkloadTables& tables, const nlohmann::json& doc, int threads) {
    if (g_packet_cache.empty()) return run_llm(presets, tables, doc, threads, 1);
    const std::string document = doc.dump();
    const std::filesystem::path file = g_packet_cache / (sha256_hex(document) + ".pktrun");
    if (const auto stored = bench::load_packet_run(file, document)) {
        std::printf("   (the run without skipping read from %s, made by revision %s; its wall is that run's)\n", file.c_str(), stored->revision.c_str());
        Run r;
        r.wall = stored->wall, r.prepare = stored->prepare, r.iteration_s = stored->iteration_s;
        r.result.events = stored->events, r.result.steps = stored->steps, r.result.split_steps = stored->split_steps;
        r.fct = stored->fct, r.start = stored->start, r.size = stored->size;
        return r;
    }
    Run r = run_llm(presets, tables, doc, threads, 1);
    std::filesystem::create_directories(g_packet_cache);
    bench::save_packet_run(file, {git_revision(), document, r.wall, r.prepare, r.iteration_s, r.result.events, r.result.steps, r.result.split_steps,
                                  r.fct, r.start, r.size});
    return r;
}

// Skipping off against on for one LLM row under `cc`, then on again with the memo file of the first skip-on
// run. Without `with_off` only the skip-on figures are printed (the run without skipping takes 30-130 s).
void llm_row(const char* label, const PresetLibrary& presets, const WorkloadTables& tables, const std::string& model,
             const nlohmann::json& parallel, const std::string& cc, bool with_off, int threads, int repeats) {
    const Run on = run_llm(presets, tables, llm("roft-128", model, parallel, true, cc), threads, repeats);
    const auto& k = on.result.skipping;
    const double saved = double(k.events_saved);
    if (!with_off) {
        std::printf("%s, %s, one iteration, %d thread(s), best of %d runs, skipping on only: wall %.3f s, iteration %.3f ms, events %llu, "
                    "skipped %.2f%% %s\n",
                    label, cc.c_str(), threads, repeats, on.wall, on.iteration_s * 1e3, (unsigned long long)on.result.events,
                    100 * saved / (saved + double(on.result.events)), skip_counts(k).c_str());
        return;
    }
    // With --packet-cache the run without skipping is taken from there once made (one run, its wall that run's).
    const nlohmann::json off_doc = llm("roft-128", model, parallel, false, cc);
    const Run off = g_packet_cache.empty() ? run_llm(presets, tables, off_doc, threads, repeats) : packet_level_run(presets, tables, off_doc, threads);
    std::printf("%s, %s, one iteration, %d thread(s), best of %d runs: iteration %.3f ms -> %.3f ms (error %+.3f%%)\n", label, cc.c_str(), threads,
                repeats, off.iteration_s * 1e3, on.iteration_s * 1e3, 100 * (on.iteration_s / off.iteration_s - 1));
    compare(("   " + model + " " + cc).c_str(), off, on);
    spread(off, on);
    std::printf("   of those walls, building the job's task graph: %.3f s and %.3f s\n", off.prepare, on.prepare);
    const wormhole::MemoTable memo = through_memo_file(on.result.skipping.learned);
    const Run again = run_llm(presets, tables, llm("roft-128", model, parallel, true, cc), threads, repeats, &memo);
    std::printf("   %s re-run with the memo file of the first run (%zu transients): hit rate %.0f%% (%u of %u lookups), iteration %.3f ms (error %+.3f%%)\n",
                model.c_str(), memo.size(), hit_rate(again.result.skipping), again.result.skipping.memo_hits,
                again.result.skipping.memo_hits + again.result.skipping.memo_misses, again.iteration_s * 1e3, 100 * (again.iteration_s / off.iteration_s - 1));
    compare(("   " + model + " " + cc + " memo").c_str(), off, again);
    spread(off, again);
}

// A --table1 row's scenario: roft-1024, stopped at `stop_ms` of simulated time when positive.
nlohmann::json table1_document(const std::string& model, const nlohmann::json& parallel, const std::string& cc, int stop_ms, bool skipping, int seed) {
    nlohmann::json d = llm("roft-1024", model, parallel, skipping, cc);
    if (stop_ms > 0) d["workload"]["stop_time"] = std::to_string(stop_ms) + "ms";
    d["seed"] = seed;
    return d;
}

// Row 6: a 1,024-GPU row of Wormhole's Table 1 under one seed, skipping on; with `stop_ms`, on and off up to that
// simulated time (`off` is left empty without it).
struct SeedRuns {
    int seed = 0;
    Run on, off;
};

SeedRuns table1_seed(const char* label, const PresetLibrary& presets, const WorkloadTables& tables, const std::string& model,
                     const nlohmann::json& parallel, const std::string& cc, int threads, int stop_ms, int seed) {
    SeedRuns runs;
    runs.seed = seed;
    runs.on = run_llm(presets, tables, table1_document(model, parallel, cc, stop_ms, true, seed), threads, 1);
    const Run& on = runs.on;
    const auto& k = on.result.skipping;
    const double saved = double(k.events_saved);
    std::printf("%s, %s, seed %d, %d thread(s), one run%s, skipping on: wall %.1f s, %s, events %llu, skipped %.2f%% %s\n",
                label, cc.c_str(), seed, threads, stop_ms > 0 ? (", stopped at " + std::to_string(stop_ms) + " ms simulated").c_str() : "", on.wall,
                on.iteration_s > 0 ? ("iteration " + std::to_string(on.iteration_s * 1e3) + " ms").c_str() : "iteration unfinished at the stop",
                (unsigned long long)on.result.events, 100 * saved / (saved + double(on.result.events)), skip_counts(k).c_str());
    if (stop_ms <= 0) return runs;
    runs.off = packet_level_run(presets, tables, table1_document(model, parallel, cc, stop_ms, false, seed), threads);
    const Run& off = runs.off;
    size_t both = 0;
    for (size_t f = 0; f < off.fct.size(); ++f) both += off.fct[f] > 0 && on.fct[f] > 0;
    std::printf("   the same %d ms without skipping: %zu flows finished in both runs\n", stop_ms, both);
    if (off.iteration_s > 0 && on.iteration_s > 0)  // a stop past the iteration's end: the whole iteration is compared
        std::printf("   iteration %.6f ms without skipping -> %.6f ms with it (error %+.3f%%)\n", off.iteration_s * 1e3, on.iteration_s * 1e3,
                    100 * (on.iteration_s / off.iteration_s - 1));
    compare(("   " + model + " " + cc + " to " + std::to_string(stop_ms) + " ms").c_str(), off, on);
    spread(off, on);
    return runs;
}

// Skipping against the packet level's own spread over several seeds (DCQCN marks at random, so one packet-level
// run is one draw): each seed's iteration with and without skipping, and the mean per-flow error of skipping
// against the packet level under the same seed beside that of the packet level under one seed against another.
void across_seeds(const std::vector<SeedRuns>& runs) {
    std::printf("   across seeds %d-%d, skipping against the packet level's own spread:\n", runs.front().seed, runs.back().seed);
    std::vector<double> off_ms, on_ms;
    for (const SeedRuns& r : runs) off_ms.push_back(r.off.iteration_s * 1e3), on_ms.push_back(r.on.iteration_s * 1e3);
    const bool whole = std::all_of(off_ms.begin(), off_ms.end(), [](double t) { return t > 0; }) &&
                       std::all_of(on_ms.begin(), on_ms.end(), [](double t) { return t > 0; });
    if (whole) {
        auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); };
        const auto [off_min, off_max] = std::minmax_element(off_ms.begin(), off_ms.end());
        std::printf("   iteration without skipping:");
        for (double t : off_ms) std::printf(" %.6f", t);
        std::printf(" ms (mean %.6f ms, range %.6f-%.6f ms: %.3f%% of the mean)\n", mean(off_ms), *off_min, *off_max, 100 * (*off_max - *off_min) / mean(off_ms));
        std::printf("   iteration with skipping:   ");
        for (double t : on_ms) std::printf(" %.6f", t);
        std::printf(" ms (mean %.6f ms: %+.3f%% against the mean without); against the same seed:", mean(on_ms), 100 * (mean(on_ms) / mean(off_ms) - 1));
        for (size_t i = 0; i < runs.size(); ++i) std::printf(" %+.3f%%", 100 * (on_ms[i] / off_ms[i] - 1));
        std::printf("; outside the range without skipping by:");
        for (double t : on_ms) std::printf(" %.3f%%", 100 * std::max({0.0, *off_min - t, t - *off_max}) / mean(off_ms));
        std::printf("\n");
    }
    // The sizes carrying most of skipping's error under the first seed, followed through every comparison.
    const FlowErrors first = flow_errors(runs[0].off, runs[0].on);
    const std::vector<std::pair<double, uint64_t>> sizes = heaviest_sizes(first, 4);
    auto line = [&](const std::string& what, const FlowErrors& e) {
        std::printf("   %-40s %.3f%% mean;", what.c_str(), 100 * e.mean());
        for (const auto& [points, size] : sizes) {
            const auto c = e.by_size.find(size);
            if (c != e.by_size.end()) std::printf(" %llu B %.3f%% (%.3f pt)", (unsigned long long)size, 100 * c->second.error / double(c->second.flows),
                                                  100 * c->second.error / double(e.flows));
        }
        std::printf("\n");
    };
    std::printf("   per-flow FCT error, mean and by flow size (its mean, percentage points of the whole mean):\n");
    double skipping = 0, reseeded = 0;
    for (const SeedRuns& r : runs) {
        const FlowErrors e = flow_errors(r.off, r.on);
        skipping += e.mean() / double(runs.size());
        line("skipping against seed " + std::to_string(r.seed) + ":", e);
    }
    const size_t pairs = runs.size() * (runs.size() - 1) / 2;
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j) {
            const FlowErrors e = flow_errors(runs[i].off, runs[j].off);
            reseeded += e.mean() / double(pairs);
            line("without skipping, seed " + std::to_string(runs[j].seed) + " against " + std::to_string(runs[i].seed) + ":", e);
        }
    std::printf("   mean per-flow error: skipping against the same seed %.3f%% (mean over %zu seeds), the packet level against another seed %.3f%% "
                "(mean over %zu pair(s) of seeds)\n",
                100 * skipping, runs.size(), 100 * reseeded, pairs);
}

void table1_row(const char* label, const PresetLibrary& presets, const WorkloadTables& tables, const std::string& model, const nlohmann::json& parallel,
                const std::string& cc, int threads, int stop_ms, bool noise, int seed, int seeds) {
    std::vector<SeedRuns> runs;
    for (int s = seed; s < seed + seeds; ++s) runs.push_back(table1_seed(label, presets, tables, model, parallel, cc, threads, stop_ms, s));
    if (stop_ms <= 0) return;
    if (runs.size() > 1) return across_seeds(runs);
    if (!noise) return;
    // The packet level against itself: the same prefix without skipping under another seed (DCQCN marks at
    // random, so which flows of an all-to-all are cut and held back is a sample). A per-flow error the model
    // shows against its own reseeding is not skipping's.
    const Run& off = runs[0].off;
    const Run reseeded = packet_level_run(presets, tables, table1_document(model, parallel, cc, stop_ms, false, seed + 1), threads);
    std::printf("   the same %d ms without skipping, seed %d against seed %d (the packet level's own per-flow spread):\n", stop_ms, seed + 1, seed);
    if (off.iteration_s > 0 && reseeded.iteration_s > 0)
        std::printf("   iteration %.6f ms under seed %d, %.6f ms under seed %d (%+.3f%%)\n", off.iteration_s * 1e3, seed, reseeded.iteration_s * 1e3, seed + 1,
                    100 * (reseeded.iteration_s / off.iteration_s - 1));
    compare(("   " + model + " " + cc + " seed " + std::to_string(seed + 1)).c_str(), off, reseeded);
    spread(off, reseeded);
}

// Row 5: one job swept over CCs and seeds, with share_memo off then on.
void sweep_row(const PresetLibrary& presets, const WorkloadTables& tables, const std::vector<std::string>& ccs, int seeds, int threads) {
    const nlohmann::json parallel = {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}, {"recompute", true}};
    std::vector<LoadedScenario> loaded[2];
    std::vector<const Scenario*> sweep[2];
    for (int share = 0; share < 2; ++share)
        for (const std::string& cc : ccs)
            for (int seed = 1; seed <= seeds; ++seed) {
                nlohmann::json doc = llm("roft-128", "gpt3-13b", parallel, true, cc);
                doc["seed"] = seed;
                doc["skipping"]["share_memo"] = share == 1;
                loaded[share].push_back(load_scenario_document(doc, "bench", ".", presets, LoadOptions{false}));
            }
    for (int share = 0; share < 2; ++share)
        for (const LoadedScenario& l : loaded[share]) sweep[share].push_back(&l.scenarios[0]);
    const Fabric f = build_fabric(sweep[0][0]->topology);
    const LlmJob job = prepare_llm_job(*sweep[0][0]->workload.llm, f, tables);
    std::printf("5. sweep of GPT-3 13B TP8 PP4 DP4 on 128 GPUs, %zu experiments (%d seeds under each CC), skipping on, %d thread(s), one run each\n",
                sweep[0].size(), seeds, threads);
    bench::LlmSweepRun runs[2];
    double wall[2];
    for (int share = 0; share < 2; ++share) {
        const auto t0 = std::chrono::steady_clock::now();
        runs[share] = bench::run_llm_sweep(sweep[share], f, job, tables, threads);
        wall[share] = seconds_since(t0);
        uint64_t events = 0, saved = 0, learned = 0, hits = 0, misses = 0, follows = 0;
        wormhole::MemoTable distinct;
        for (const ExperimentResult& r : runs[share].results) {
            events += r.events, saved += r.skipping.events_saved, learned += r.skipping.learned.size();
            hits += r.skipping.memo_hits, misses += r.skipping.memo_misses, follows += r.skipping.memo_follows;
            for (const wormhole::MemoEntry& m : r.skipping.learned) distinct.add(m);
        }
        std::printf("   share_memo %-5s wall %8.3f s   events %llu, skipped %.2f%%   memo %llu hits / %llu misses / %llu followed, %llu transients stored "
                    "(%zu distinct)\n",
                    share ? "true" : "false", wall[share], (unsigned long long)events, 100.0 * double(saved) / double(saved + events), (unsigned long long)hits,
                    (unsigned long long)misses, (unsigned long long)follows, (unsigned long long)learned, distinct.size());
        // Per CC: its first experiment (nothing to share yet) against the mean of the later ones.
        for (size_t c = 0; c < ccs.size(); ++c) {
            double later_events = 0, later_misses = 0, later_learned = 0;
            for (int seed = 1; seed < seeds; ++seed) {
                const ExperimentResult& r = runs[share].results[c * size_t(seeds) + size_t(seed)];
                later_events += double(r.events), later_misses += r.skipping.memo_misses, later_learned += double(r.skipping.learned.size());
            }
            const ExperimentResult& first = runs[share].results[c * size_t(seeds)];
            const double n = std::max(1, seeds - 1);
            std::printf("      %-7s first experiment %.1f M events, %u misses, %zu stored; later ones %.1f M events, %.1f misses, %.1f stored on average\n",
                        ccs[c].c_str(), double(first.events) / 1e6, first.skipping.memo_misses, first.skipping.learned.size(), later_events / n / 1e6,
                        later_misses / n, later_learned / n);
        }
    }
    // What sharing changes in each experiment, against the same experiment measuring its own transients.
    double worst_iteration = 0, fct_sum = 0, fct_worst = 0;
    size_t fct_n = 0;
    for (size_t e = 0; e < sweep[0].size(); ++e) {
        const double off = runs[0].iteration_s[e], on = runs[1].iteration_s[e];
        worst_iteration = std::max(worst_iteration, std::abs(on / off - 1));
        Run a, c;
        record(a, runs[0].batch, runs[0].results[e]);
        record(c, runs[1].batch, runs[1].results[e]);
        for (size_t i = 0; i < a.fct.size(); ++i) {
            if (a.fct[i] <= 0 || c.fct[i] <= 0) continue;
            const double d = std::abs(c.fct[i] - a.fct[i]) / a.fct[i];
            fct_sum += d, fct_worst = std::max(fct_worst, d), ++fct_n;
        }
    }
    std::printf("   sharing: %.2fx less wall; each experiment against itself without sharing: iteration time within %.3f%%, per-flow FCT %.3f%% mean, "
                "%.2f%% max\n",
                wall[0] / wall[1], 100 * worst_iteration, 100 * fct_sum / double(std::max<size_t>(fct_n, 1)), 100 * fct_worst);
}

}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "Steady-state skipping on against off: reference ring, memo re-run, GPT-3 13B, MoE.",
                                              {{"--threads", "CPU threads for the LLM runs (default 1)"},
                                               {"--llm", "0: leave out GPT-3 13B (default 1)"},
                                               {"--moe", "1: add the MoE row (default 0)"},
                                               {"--llm-repeats", "runs per LLM row, best wall kept (default 3)"},
                                               {"--cc", "congestion controls of the LLM rows, comma-separated (default dcqcn; also hpcc, timely)"},
                                               {"--off", "0: leave out the LLM runs without skipping (only skip-on figures; default 1)"},
                                               {"--flows", "0: leave out the reference ring and incast rows (default 1)"},
                                               {"--window", "L: skipping.window of the LLM rows, 3-64 samples (default: appendix F's, per partition)"},
                                               {"--sample-ns", "T: skipping.sample_interval of the LLM rows in ns (default: the largest base RTT)"},
                                               {"--table1", "gpt175b and/or moe32x22b, comma-separated: Wormhole Table 1's 1,024-GPU rows, skipping on (default none)"},
                                               {"--stop-ms", "T: the --table1 rows stop at T ms simulated, also run without skipping and compared (default: whole iteration, skipping on only)"},
                                               {"--sweep", "N: add the GPT-3 13B sweep, N seeds under each --cc, share_memo off and on (default 0)"},
                                               {"--noise", "1: with --stop-ms, also run without skipping under the next seed and compare it with --seed's (default 0)"},
                                               {"--seed", "N: the --table1 rows' seed (default 1; DCQCN marks at random)"},
                                               {"--seeds", "K: with --stop-ms, run the --table1 rows under seeds N..N+K-1 with and without skipping and compare skipping with the packet level's spread over them (default 1)"},
                                               {"--packet-cache", "DIR: keep the LLM rows' runs without skipping in DIR and reuse them (delete DIR after any change to the packet level)"},
                                               {"--pxn", "0: the MoE rows send cross-rail all-to-all data over the spines (default 1: NCCL's PXN, as the wormhole-moe scenario)"}});
    const int llm_repeats = int(bench::bench_number(args, "--llm-repeats", 3));
    const int threads = args.count("--threads") ? std::atoi(args.at("--threads").c_str()) : 1;
    const bool with_llm = !(args.count("--llm") && args.at("--llm") == "0");
    const bool with_moe = args.count("--moe") && args.at("--moe") == "1";
    const bool with_off = !(args.count("--off") && args.at("--off") == "0");
    const bool with_flows = !(args.count("--flows") && args.at("--flows") == "0");
    const int sweep_seeds = int(bench::bench_number(args, "--sweep", 0));
    g_window = int(bench::bench_number(args, "--window", 0));
    g_sample_ns = int(bench::bench_number(args, "--sample-ns", 0));
    g_moe_pxn = !(args.count("--pxn") && args.at("--pxn") == "0");
    if (args.count("--packet-cache")) g_packet_cache = args.at("--packet-cache");
    const int stop_ms = int(bench::bench_number(args, "--stop-ms", 0));
    const bool noise = args.count("--noise") && args.at("--noise") == "1";
    const int table1_seed = int(bench::bench_number(args, "--seed", 1));
    const int table1_seeds = int(bench::bench_number(args, "--seeds", 1));
    if (table1_seeds < 1 || (table1_seeds > 1 && noise)) {
        std::fprintf(stderr, "%s: --seeds must be at least 1, and --noise 1 goes with one seed only (with --seeds N > 1 every pair of seeds is compared)\n",
                     argv[0]);
        return 2;
    }
    const std::vector<std::string> table1 = bench::bench_choices(args, "--table1", "", {"gpt175b", "moe32x22b"});
    const std::vector<std::string> ccs = bench::bench_choices(args, "--cc", "dcqcn", {"dcqcn", "hpcc", "timely", "dctcp"});
    const PresetLibrary presets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

    if (with_flows) {
    std::printf("1. reference ring (16 x 10 MB) and incast (15 x 1 MB), k=4 fat-tree, 100 Gb/s\n");
    for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) {
        const Run off = run_flows(presets, ring(cc, false));
        const Run on = run_flows(presets, ring(cc, true));
        compare((std::string("ring ") + cc).c_str(), off, on);
        if (std::string(cc) == "dcqcn") {
            const wormhole::MemoTable memo = through_memo_file(on.result.skipping.learned);
            const Run again = run_flows(presets, ring(cc, true), &memo);
            const auto& k = again.result.skipping;
            std::printf("2. %-19s memo file of the first run (%zu transients): hit rate %.0f%% (%u of %u lookups)\n", "ring dcqcn re-run", memo.size(),
                        hit_rate(k), k.memo_hits, k.memo_hits + k.memo_misses);
            compare("   ring dcqcn memo", off, again);
        }
    }
    for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) {
        const Run off = run_flows(presets, incast(cc, false));
        const Run on = run_flows(presets, incast(cc, true));
        compare((std::string("incast ") + cc).c_str(), off, on);
    }
    }
    if (with_llm || with_moe || sweep_seeds > 0 || !table1.empty()) {
        const WorkloadTables tables = load_workload_tables(presets);
        for (const std::string& cc : ccs) {
            if (with_llm)
                llm_row("3. GPT-3 13B TP8 PP4 DP4 on 128 GPUs", presets, tables, "gpt3-13b",
                        {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}, {"recompute", true}}, cc, with_off, threads,
                        llm_repeats);
            if (with_moe)
                llm_row("4. MoE 8x13B TP8 EP8 DP4 PP4 on 128 GPUs", presets, tables, "gpt-moe-8x13b",
                        {{"tp", 8}, {"pp", 4}, {"dp", 4}, {"ep", 8}, {"sp", true}, {"micro_batches", 4}, {"zero", 1}}, cc, with_off, threads, llm_repeats);
        }
        if (sweep_seeds > 0) sweep_row(presets, tables, ccs, sweep_seeds, threads);
        try {
            for (const std::string& row : table1)
                for (const std::string& cc : ccs) {
                    if (row == "gpt175b")
                        table1_row("6. GPT-3 175B TP8 PP8 DP16 on 1,024 GPUs", presets, tables, "gpt3-175b",
                                   {{"tp", 8}, {"pp", 8}, {"dp", 16}, {"sp", true}, {"micro_batches", 8}, {"micro_batch_size", 1}, {"zero", 1}}, cc, threads,
                                   stop_ms, noise, table1_seed, table1_seeds);
                    else
                        table1_row("6. MoE 32x22B TP8 EP8 PP8 DP16 on 1,024 GPUs", presets, tables, "gpt-moe-32x22b",
                                   {{"tp", 8}, {"ep", 8}, {"pp", 8}, {"dp", 16}, {"sp", true}, {"micro_batches", 8}, {"micro_batch_size", 1}, {"zero", 1}},
                                   cc, threads, stop_ms, noise, table1_seed, table1_seeds);
                }
        } catch (const std::exception& e) {  // a --packet-cache file that cannot be read or written
            std::fflush(stdout);
            std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
            return 1;
        }
    }
    return 0;
}
