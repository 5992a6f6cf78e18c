#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/run_session.h"
#include "runtime/batch.h"
#include "runtime/hpcc_job.h"
#include "telemetry/hpcc_files.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

Runner add_run_hpcc(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string config, out;
        Backend backend;
        uint64_t seed = 1;
        bool force = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("CONFIG", o->config, "An HPCC/SimAI config.txt; the files it names resolve as the reference resolves them")->required();
    add_backend_options(app, o->backend);
    app.add_option("--out", o->out, "Also store the run in this results store (SQLite; an existing store gains a run)");
    app.add_option("--seed", o->seed,
                   "Seed of the random ECN marks (DCQCN between Kmin and Kmax), default 1. Like the reference's RngRun, one seed is one "
                   "sample of a random run: compare several seeds, not one run with one run (seed N is not the reference's RngRun N)")
        ->check(CLI::Range(uint64_t(0), uint64_t(INT64_MAX)));
    app.add_flag("--force", o->force, "Replace output files that exist");
    return [&presets, o]() -> int {
        const std::filesystem::path path = o->config;
        Diagnostics warnings;
        std::unique_ptr<HpccJob> job = load_hpcc_job(path, std::filesystem::current_path(), presets, warnings, o->seed);
        print_diagnostics(warnings);
        const Scenario& s = *job->input.scenario;
        const ExperimentInput& input = job->input;
        // Outputs go where the reference writes them: the names in the config, relative to the working directory.
        std::vector<std::pair<std::string, std::string>> outputs;  // (file, which)
        if (!s.output.hpcc_fct_file.empty()) outputs.push_back({s.output.hpcc_fct_file, "fct"});
        if (!s.output.hpcc_pfc_file.empty()) outputs.push_back({s.output.hpcc_pfc_file, "pfc"});
        if (!s.output.hpcc_qlen_file.empty()) outputs.push_back({s.output.hpcc_qlen_file, "qlen"});
        std::vector<std::filesystem::path> files;
        for (auto& [file, which] : outputs) files.push_back(file);
        const std::vector<std::filesystem::path> inputs = scenario_inputs(path, job->loaded);
        refuse_outputs(files, o->force, inputs);
        if (!o->out.empty()) refuse_store_path(o->out, files, inputs);
        Batch batch = compile_batch({input});  // before the store: a batch that cannot be built leaves no run behind
        std::unique_ptr<ResultsStore> store;
        if (!o->out.empty()) {
            store = std::make_unique<ResultsStore>(o->out);
            const Experiment& x = job->loaded.experiments[0];
            store->begin_run(cli_run_record(path.stem().string(), path, x.sha256, o->backend, job->loaded.written),
                             {{x.id, x.index, x.seed, x.sha256, x.parameters}});
        }
        SessionResult session = run_session(batch, {input}, store.get(), o->backend);
        const std::vector<ExperimentResult>& results = session.results;
        const double wall = session.wall_seconds;
        const ExperimentResult& r = results.at(0);
        for (auto& [file, which] : outputs) {
            const std::string text = which == "fct" ? format_hpcc_fct(batch, r) : which == "pfc" ? format_hpcc_pfc(r) : format_hpcc_qlen(r);
            write_output(file, text, o->force);
        }
        size_t finished = 0;
        int64_t first_start = net::kNever;
        for (const FlowResult& f : r.flows) {
            finished += f.finish != net::kNever;
            first_start = std::min(first_start, batch.flow[f.flow].start);
        }
        std::fprintf(stderr, "%s: %zu of %zu flows finished, the last %.3f us after the first start; %zu PFC frames; %llu events in %.3f s wall (%.3g events/s), %s\n",
                     path.string().c_str(), finished, r.flows.size(), double(r.end_time - first_start) / 1e6, r.pfc.size(),
                     (unsigned long long)r.events, wall, double(r.events) / wall, describe_backend(o->backend).c_str());
        if (r.stalled)
            std::fprintf(stderr, "warning: the run stopped with flows unfinished and nothing left to happen%s\n",
                         r.drops || r.lost ? " (a flow whose last packet or last ACK is lost never finishes: the reference's NIC has no retransmission timeout)" : "");
        if (r.drops) std::fprintf(stderr, "warning: %u packets dropped for lack of switch buffer\n", r.drops);
        if (r.lost) std::fprintf(stderr, "note: %llu packets lost on links (error rate)\n", (unsigned long long)r.lost);
        for (auto& [file, which] : outputs) std::fprintf(stderr, "wrote %s\n", file.c_str());
        if (store) std::fprintf(stderr, "results in %s (run %lld)\n", o->out.c_str(), (long long)store->run_id());
        return session.cancelled ? 130 : kOk;  // 130: interrupted, as shells report it
    };
}

}  // namespace orrery::cli
