#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "telemetry/hpcc_files.h"
#include "telemetry/results_store.h"
#include "telemetry/samples.h"

namespace orrery::cli {
namespace {

std::atomic<bool> g_cancel{false};  // set by SIGINT/SIGTERM: the only state a signal handler may touch
extern "C" void on_signal(int) { g_cancel.store(true); }

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

struct Summary {
    nlohmann::json json;
    std::vector<std::tuple<std::string, double, std::string>> metrics;
};

Summary summarize(const Batch& b, uint32_t e, const ExperimentResult& r, double wall) {
    std::vector<double> fct_us, slowdown;
    for (const FlowResult& f : r.flows) {
        if (f.finish == net::kNever) continue;
        const net::FlowInfo& info = b.flow[f.flow];
        fct_us.push_back(double(f.finish - info.start) / 1e6);
        slowdown.push_back(double(f.finish - info.start) / 1000.0 / double(info.standalone_fct_ns));
    }
    size_t pauses = 0;
    for (const net::PfcEvent& p : r.pfc) pauses += p.pause;
    double mean = 0;
    for (double x : fct_us) mean += x / double(fct_us.size());
    double mean_slowdown = 0;
    for (double x : slowdown) mean_slowdown += x / double(slowdown.size());
    Summary s;
    s.metrics = {{"flows", double(r.flows.size()), "flows"},
                 {"flows_finished", double(fct_us.size()), "flows"},
                 {"fct_mean", mean, "us"},
                 {"fct_p50", percentile(fct_us, 0.5), "us"},
                 {"fct_p99", percentile(fct_us, 0.99), "us"},
                 {"fct_max", fct_us.empty() ? 0 : *std::max_element(fct_us.begin(), fct_us.end()), "us"},
                 {"slowdown_mean", mean_slowdown, "ratio"},
                 {"slowdown_p99", percentile(slowdown, 0.99), "ratio"},
                 {"pfc_pauses", double(pauses), "frames"},
                 {"drops", double(r.drops), "packets"},
                 {"simulated_time", double(r.end_time - b.flow[b.experiments[e].flow_begin].start) / 1e6, "us"},
                 {"events", double(r.events), "events"},
                 {"packet_hops", double(r.packet_hops), "packets"},
                 {"wall_time", wall, "s"}};
    s.json = {{"experiment", r.id},
              {"status", r.cancelled ? "cancelled" : r.stalled ? "stalled" : "finished"}};
    for (const auto& [name, value, unit] : s.metrics) s.json[name] = {{"value", value}, {"unit", unit}};
    return s;
}

}  // namespace

Runner add_run(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string scenario, out;
        int threads = 1;
        bool json = false, force = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("SCENARIO", o->scenario, "Scenario .json")->required();
    app.add_option("--out", o->out, "Results store (SQLite); default: the scenario's output.store beside the scenario. An existing "
                                    "store keeps its runs and gains this one");
    app.add_option("--threads", o->threads, "CPU threads (results are identical for any number)")->check(CLI::Range(1, 1024));
    app.add_flag("--json", o->json, "Print a summary per experiment as JSON on stdout");
    app.add_flag("--force", o->force, "Replace reference-format output files (output.hpcc_files) that exist");
    return [&presets, o]() -> int {
        const std::filesystem::path path = o->scenario;
        LoadedScenario loaded = load_scenario_file(path, presets, LoadOptions{false});
        print_diagnostics(loaded.warnings);
        const Scenario& base = loaded.base;

        // One fabric per distinct topology; experiments of a sweep usually share it.
        std::map<std::string, std::unique_ptr<Fabric>> fabrics;
        std::vector<ExperimentInput> inputs;
        Diagnostics problems;
        for (size_t i = 0; i < loaded.experiments.size(); ++i) {
            const Scenario& s = loaded.scenarios[i];
            const std::string key = s.document["topology"].dump();
            auto it = fabrics.find(key);
            if (it == fabrics.end()) it = fabrics.emplace(key, std::make_unique<Fabric>(build_fabric(s.topology))).first;
            check_against_fabric(s, *it->second, problems);
            inputs.push_back({loaded.experiments[i].id, &s, it->second.get(), workload_flows(s)});
            if (inputs.back().flows.empty()) problems.error(s.source + ": workload", "experiment " + loaded.experiments[i].id + " has no flows to run");
        }
        if (problems.has_errors()) throw InputError(problems);

        const std::filesystem::path store_path = !o->out.empty() ? std::filesystem::path(o->out)
                                               : std::filesystem::path(base.output.store).is_absolute() ? std::filesystem::path(base.output.store)
                                                                                                        : base.base_dir / base.output.store;
        ResultsStore store(store_path);
        std::vector<ExperimentRecord> records;
        for (const Experiment& x : loaded.experiments) records.push_back({x.id, x.index, x.seed, x.sha256, x.parameters});
        RunRecord run;
        run.scenario_name = base.name;
        run.scenario_file = std::filesystem::absolute(path).string();
        run.scenario_sha256 = loaded.experiments.size() == 1 ? loaded.experiments[0].sha256 : sha256_of_document(base.document);
        run.threads = o->threads;
        run.device = std::to_string(std::thread::hardware_concurrency()) + " CPU threads available";
        store.begin_run(run, records);

        const auto t0 = std::chrono::steady_clock::now();
        Batch batch = compile_batch(inputs);
        std::mutex report_lock;
        std::vector<std::chrono::steady_clock::time_point> started(inputs.size(), t0);
        std::vector<nlohmann::json> summaries(inputs.size());
        size_t finished = 0;
        RunOptions options;
        options.threads = o->threads;
        options.cancel = &g_cancel;
        options.on_experiment_start = [&](uint32_t e) {
            started[e] = std::chrono::steady_clock::now();
            store.experiment_started(inputs[e].id);
        };
        options.on_sample = [&](uint32_t e, int64_t time) {
            const OutputSpec& out = inputs[e].scenario->output;
            SampleSet s = take_samples(batch, e, out.record_queues, out.record_flow_rates);
            store.samples(inputs[e].id, time, std::move(s.queues), std::move(s.tiers), std::move(s.rates));
        };
        options.on_experiment_done = [&](uint32_t e, const ExperimentResult& r) {
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started[e]).count();
            Summary sum = summarize(batch, e, r, wall);
            std::vector<FlowRow> flows;
            const OutputSpec& out = inputs[e].scenario->output;
            if (out.record_fct)
                for (const FlowResult& f : r.flows) {
                    const net::FlowInfo& i = batch.flow[f.flow];
                    flows.push_back({f.flow - batch.experiments[e].flow_begin, batch.node_fabric_id[i.src], batch.node_fabric_id[i.dst],
                                     i.sport, i.dport, i.pg, i.size, i.start, f.finish == net::kNever ? -1 : f.finish,
                                     int64_t(i.standalone_fct_ns) * 1000});
                }
            std::vector<std::tuple<int64_t, uint32_t, uint32_t, uint32_t, uint32_t>> pfc;
            if (out.record_pfc)
                for (const net::PfcEvent& p : r.pfc) pfc.emplace_back(p.time, p.node, p.node_type, p.ifindex, p.pause);
            store.experiment_finished(r.id, sum.json["status"], r.stalled ? "nothing left to happen with flows unfinished" : "",
                                      r.end_time, r.events, r.packet_hops, wall, std::move(flows), std::move(pfc), sum.metrics);
            std::lock_guard<std::mutex> g(report_lock);
            summaries[e] = sum.json;
            ++finished;
            std::fprintf(stderr, "[%zu/%zu] %s %s: %zu flows, mean FCT %.3f us, p99 %.3f us, %.0f PFC pauses, %.3f s wall\n", finished,
                         inputs.size(), r.id.c_str(), sum.json["status"].get<std::string>().c_str(), r.flows.size(),
                         sum.json["fct_mean"]["value"].get<double>(), sum.json["fct_p99"]["value"].get<double>(),
                         sum.json["pfc_pauses"]["value"].get<double>(), wall);
        };
        auto previous_int = std::signal(SIGINT, on_signal);
        auto previous_term = std::signal(SIGTERM, on_signal);
        std::vector<ExperimentResult> results;
        try {
            results = run_cpu(batch, options);
        } catch (...) {
            std::signal(SIGINT, previous_int);
            std::signal(SIGTERM, previous_term);
            store.end_run("failed", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            throw;
        }
        std::signal(SIGINT, previous_int);
        std::signal(SIGTERM, previous_term);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const bool cancelled = g_cancel.load();
        store.end_run(cancelled ? "cancelled" : "finished", wall);

        // Reference-format files, when the scenario asks for them (one set per experiment).
        const OutputSpec& out = base.output;
        for (size_t e = 0; e < results.size(); ++e) {
            auto name = [&](const std::string& file) {
                std::filesystem::path p = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : base.base_dir / file;
                if (results.size() > 1) p = p.parent_path() / (p.stem().string() + "_" + results[e].id + p.extension().string());
                return p;
            };
            if (!out.hpcc_fct_file.empty()) write_output(name(out.hpcc_fct_file), format_hpcc_fct(batch, results[e]), o->force);
            if (!out.hpcc_pfc_file.empty()) write_output(name(out.hpcc_pfc_file), format_hpcc_pfc(results[e]), o->force);
            if (!out.hpcc_qlen_file.empty()) write_output(name(out.hpcc_qlen_file), format_hpcc_qlen(results[e]), o->force);
        }
        std::fprintf(stderr, "%s: %zu experiment%s %s in %.3f s; results in %s (run %lld)\n", path.string().c_str(), results.size(),
                     results.size() == 1 ? "" : "s", cancelled ? "cancelled" : "finished", wall, store_path.string().c_str(),
                     (long long)store.run_id());
        if (o->json) std::cout << nlohmann::json(summaries).dump(2) << "\n";
        return cancelled ? kInvalidInput + 129 : kOk;  // 130: interrupted, as shells report it
    };
}

}  // namespace orrery::cli
