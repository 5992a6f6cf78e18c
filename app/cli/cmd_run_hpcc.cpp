#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/hpcc_job.h"
#include "telemetry/hpcc_files.h"

namespace orrery::cli {

Runner add_run_hpcc(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string config;
        int threads = 1;
        bool force = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("CONFIG", o->config, "An HPCC/SimAI config.txt; the files it names resolve as the reference resolves them")->required();
    app.add_option("--threads", o->threads, "CPU threads (results are identical for any number)")->check(CLI::Range(1, 1024));
    app.add_flag("--force", o->force, "Replace output files that exist");
    return [&presets, o]() -> int {
        const std::filesystem::path path = o->config;
        Diagnostics warnings;
        std::unique_ptr<HpccJob> job = load_hpcc_job(path, std::filesystem::current_path(), presets, warnings);
        print_diagnostics(warnings);
        const Scenario& s = *job->input.scenario;
        const ExperimentInput& input = job->input;
        // Outputs go where the reference writes them: the names in the config, relative to the working directory.
        std::vector<std::pair<std::string, std::string>> outputs;  // (file, which)
        if (!s.output.hpcc_fct_file.empty()) outputs.push_back({s.output.hpcc_fct_file, "fct"});
        if (!s.output.hpcc_pfc_file.empty()) outputs.push_back({s.output.hpcc_pfc_file, "pfc"});
        if (!s.output.hpcc_qlen_file.empty()) outputs.push_back({s.output.hpcc_qlen_file, "qlen"});
        for (auto& [file, which] : outputs)
            if (std::filesystem::exists(file) && !o->force)
                throw InputError(file, "already exists; not overwriting it (pass --force to replace it)");
        const auto t0 = std::chrono::steady_clock::now();
        Batch batch = compile_batch({input});
        RunOptions run;
        run.threads = o->threads;
        if (isatty(2)) run.progress = [&](const RunProgress& p) {
            std::fprintf(stderr, "\rstep %llu  simulated %s  flows done %u/%zu   ", (unsigned long long)p.step,
                         describe_time(Picoseconds(p.clocks[0])).c_str(), p.flows_done[0], input.flows.size());
        };
        std::vector<ExperimentResult> results = run_cpu(batch, run);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const ExperimentResult& r = results.at(0);
        for (auto& [file, which] : outputs) {
            const std::string text = which == "fct" ? format_hpcc_fct(batch, r) : which == "pfc" ? format_hpcc_pfc(r) : format_hpcc_qlen(r);
            write_output(file, text, o->force);
        }
        size_t finished = 0;
        for (const FlowResult& f : r.flows) finished += f.finish != net::kNever;
        std::fprintf(stderr, "\r%s: %zu of %zu flows finished by %s simulated; %zu PFC frames; %llu events in %.3f s wall (%.3g events/s), %zu threads\n",
                     path.string().c_str(), finished, r.flows.size(), describe_time(Picoseconds(r.end_time)).c_str(), r.pfc.size(),
                     (unsigned long long)r.events, wall, double(r.events) / wall, size_t(o->threads));
        if (r.stalled) std::fprintf(stderr, "warning: the run stopped with flows unfinished and nothing left to happen\n");
        if (r.drops) std::fprintf(stderr, "warning: %u packets dropped for lack of switch headroom\n", r.drops);
        for (auto& [file, which] : outputs) std::fprintf(stderr, "wrote %s\n", file.c_str());
        return kOk;
    };
}

}  // namespace orrery::cli
