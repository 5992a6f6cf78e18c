// `orrery-cli export timeline RESULTS --experiment ID -o trace.json[.gz]`: an LLM experiment's timeline from
// the results store as Chrome trace JSON for Perfetto. A large multi-iteration timeline is written one file
// per iteration (trace.it0.json, …) so each opens quickly; --iteration picks one.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/diagnostics.h"
#include "common/gzip.h"
#include "telemetry/chrome_trace.h"
#include "telemetry/store_reader.h"

namespace orrery::cli {
namespace {

struct ExportOptions {
    std::string store, experiment, out, scenario_out;
    int64_t run = 0;
    int iteration = -1;
    size_t ports = 8;
    size_t split_above = 500000;  // spans; larger timelines with several iterations are split per iteration
    bool force = false;
};

bool gzipped(const std::filesystem::path& p) { return p.extension() == ".gz"; }

// trace.json.gz + iteration 3 → trace.it3.json.gz
std::filesystem::path iteration_file(const std::filesystem::path& out, int iteration) {
    std::string name = out.filename().string();
    const std::string suffix = gzipped(out) ? ".json.gz" : ".json";
    const bool has = name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string stem = has ? name.substr(0, name.size() - suffix.size()) : name;
    return out.parent_path() / (stem + ".it" + std::to_string(iteration) + (has ? suffix : ".json"));
}

int export_timeline(const ExportOptions& o) {
    const std::filesystem::path out = o.out;
    refuse_inputs_as_outputs({out}, {o.store});
    const std::string ext = out.extension().string();
    if (ext != ".json" && !(ext == ".gz" && out.stem().extension() == ".json"))
        throw InputError(o.out, "the trace is Chrome trace JSON: name the output .json or .json.gz");
    StoreReader store(o.store);
    const int64_t run = store.find_run(o.experiment, o.run);
    const std::vector<TimelineRow> rows = store.timeline(run, o.experiment);
    if (rows.empty()) {
        const std::string status = store.experiment_status(run, o.experiment);
        throw InputError(o.store, "experiment \"" + o.experiment + "\" of run " + std::to_string(run) + " has no timeline (status " + status +
                                      "; timelines are written for LLM workloads that ran)");
    }
    const std::vector<PortSeries> ports = store.busiest_ports(run, o.experiment, o.ports);
    const std::vector<SkippedSpan> skipped = store.skipped_spans(run, o.experiment);
    const std::vector<JobRow> jobs = store.jobs(run, o.experiment);
    const std::vector<int> iterations = timeline_iterations(rows);
    if (o.iteration >= 0 && std::find(iterations.begin(), iterations.end(), o.iteration) == iterations.end())
        throw InputError("--iteration", "experiment \"" + o.experiment + "\" has iterations " + std::to_string(iterations.front()) + "…" +
                                            std::to_string(iterations.back()) + ", not " + std::to_string(o.iteration));
    std::vector<std::pair<std::filesystem::path, TraceWindow>> files;
    const std::string title = o.store + " run " + std::to_string(run) + " experiment " + o.experiment;
    if (o.iteration >= 0) {
        files.push_back({out, {o.iteration, title + " iteration " + std::to_string(o.iteration)}});
    } else if (rows.size() > o.split_above && iterations.size() > 1) {
        for (int it : iterations) files.push_back({iteration_file(out, it), {it, title + " iteration " + std::to_string(it)}});
    } else {
        files.push_back({out, {-1, title}});
    }
    std::vector<std::filesystem::path> paths;
    for (const auto& [path, window] : files) paths.push_back(path);
    refuse_outputs(paths, o.force, {o.store});
    for (const auto& [path, window] : files) {
        const std::string text = chrome_trace(rows, ports, window, skipped, jobs).dump();
        write_output(path, gzipped(path) ? gzip_compress(text) : text, o.force);
        std::cerr << "wrote " << path.string() << " (" << (window.iteration >= 0 ? "iteration " + std::to_string(window.iteration) : "every iteration")
                  << ", " << text.size() / 1024 << " KiB of JSON)\n";
    }
    if (ports.empty()) std::cerr << "note: no queue samples in this experiment (output.record without \"queues\"): the trace has no port counters\n";
    return 0;
}

// The scenario a run ran, as the store kept it: what reproduces the run when its file is gone.
int export_scenario(const ExportOptions& o) {
    const std::filesystem::path out = o.scenario_out;
    refuse_inputs_as_outputs({out}, {o.store});
    if (out.extension() != ".json") throw InputError(o.scenario_out, "a scenario is JSON: name the output .json");
    refuse_outputs({out}, o.force, {o.store});
    const auto [run, json] = StoreReader(o.store).scenario_of(o.run);
    write_output(out, nlohmann::json::parse(json).dump(2) + "\n", o.force);
    std::cerr << "wrote " << out.string() << ": the scenario of run " << run << " of " << o.store << " as it was written (run it with `orrery-cli run "
              << out.string() << "`; its relative file names, if any, are relative to the folder it ran from)\n";
    return 0;
}

}  // namespace

Runner add_export(CLI::App& app, const PresetLibrary&) {
    app.require_subcommand(1);
    auto o = std::make_shared<ExportOptions>();
    CLI::App* t = app.add_subcommand("timeline", "An LLM experiment's per-rank timeline as Chrome trace JSON (opens in Perfetto, ui.perfetto.dev)");
    t->add_option("RESULTS", o->store, "Results store written by `orrery-cli run --out`")->required();
    t->add_option("--experiment", o->experiment, "Experiment id (e0000, … as `orrery-cli expand` lists them)")->required();
    t->add_option("-o,--output", o->out, "Output .json or .json.gz")->required();
    t->add_option("--run", o->run, "Run id in the store (default: the newest run holding the experiment)")->check(CLI::PositiveNumber);
    t->add_option("--iteration", o->iteration, "Only this training iteration (0-based)")->check(CLI::NonNegativeNumber);
    t->add_option("--ports", o->ports, "Queue-occupancy counter tracks for this many of the busiest switch ports (0: none)")->capture_default_str();
    t->add_option("--split-above", o->split_above, "Write one file per iteration (OUT.itN.json) when the timeline has more spans than this")
        ->capture_default_str();
    t->add_flag("--force", o->force, "Replace output files that exist");
    CLI::App* s = app.add_subcommand("scenario", "The scenario a run ran, as the store kept it (what reproduces the run when its file is gone)");
    s->add_option("RESULTS", o->store, "Results store or workbench project")->required();
    s->add_option("-o,--output", o->scenario_out, "Output scenario .json")->required();
    s->add_option("--run", o->run, "Run id in the store (default: the newest run)")->check(CLI::PositiveNumber);
    s->add_flag("--force", o->force, "Replace the output file if it exists");
    return [o, t, s]() -> int {
        if (t->parsed()) return export_timeline(*o);
        if (s->parsed()) return export_scenario(*o);
        return kUsage;
    };
}

}  // namespace orrery::cli
