#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/run_session.h"
#ifdef ORRERY_HAVE_MPI
#include "cli/mpi_partition.h"
#include "cli/mpi_sweep.h"
#endif
#include "runtime/batch.h"
#include "scenario/applicability.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "telemetry/hpcc_files.h"
#include "telemetry/results_store.h"

namespace orrery::cli {
namespace {

// A flow workload's experiments as the batch takes them, each checked against its fabric; throws every
// problem at once (a run over ranks checks its one experiment the same way).
std::vector<ExperimentInput> flow_inputs(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabric_of) {
    std::vector<ExperimentInput> inputs;
    Diagnostics problems;
    for (size_t i = 0; i < loaded.experiments.size(); ++i) {
        const Scenario& s = loaded.scenarios[i];
        check_against_fabric(s, *fabric_of[i], problems);
        inputs.push_back({loaded.experiments[i].id, &s, fabric_of[i], workload_flows(s)});
        if (inputs.back().flows.empty()) problems.error(s.source + ": workload", "experiment " + loaded.experiments[i].id + " has no flows to run");
    }
    if (problems.has_errors()) throw InputError(problems);
    return inputs;
}

#ifdef ORRERY_HAVE_MPI
// One experiment of `loaded` alone, as a scenario of its own (its id, index and seed kept).
LoadedScenario experiment_alone(const LoadedScenario& loaded, size_t i) {
    LoadedScenario one;
    one.base = loaded.base;
    one.experiments = {loaded.experiments[i]};
    one.scenarios = {loaded.scenarios[i]};
    return one;
}

// What an experiment is expected to cost, to hand out the longest first: an LLM job's GPUs × layers ×
// micro-batches, a flow workload's bytes.
double expected_cost(const Scenario& s) {
    if (s.workload.trains()) {
        double cost = 0;
        for (const LlmWorkload* w : s.workload.llm_workloads()) {
            const ParallelSpec& p = w->parallel;
            cost += double(p.tp) * p.pp * p.dp * std::max(1, w->model.layers) * p.micro_batches;
        }
        return cost;
    }
    double bytes = 0;
    for (const FlowSpec& f : workload_flows(s)) bytes += double(f.size.count);
    return bytes;
}
#endif

}  // namespace

Runner add_run(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string scenario, out;
        Backend backend;
        bool json = false, force = false, progress_json = false, mpi = false, partition = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("SCENARIO", o->scenario, "Scenario .json, or the name of a bundled scenario (`orrery-cli presets scenarios`)")->required();
    app.add_option("--out", o->out, "Results store (SQLite); default: the scenario's output.store beside the scenario. An existing "
                                    "store keeps its runs and gains this one");
    add_backend_options(app, o->backend);
    app.add_flag("--json", o->json, "Print each experiment's summary on stdout as it finishes: one JSON object per line");
    app.add_flag("--progress-json", o->progress_json, "Also report progress as one JSON object per line on stderr (run, start, progress, done)");
    app.add_flag("--force", o->force, "Replace reference-format output files (output.hpcc_files) that exist");
#ifdef ORRERY_HAVE_MPI
    app.add_flag("--mpi", o->mpi, "Run the sweep's experiments over MPI ranks (mpirun, srun); on by itself when launched with more than one rank");
    app.add_flag("--partition", o->partition,
                 "Under MPI: split each experiment's fabric over the ranks (by pod or rack) instead of handing whole experiments to "
                 "ranks; flow workloads without skipping, one thread per rank");
#endif
    return [&presets, o]() -> int {
        bool bundled = false;
        const std::filesystem::path path = scenario_argument(o->scenario, presets, &bundled);
        // A bundled scenario stores its results here, not beside it in the installation.
        if (bundled && o->out.empty()) o->out = path.stem().string() + ".sqlite";
        LoadedScenario loaded = load_scenario_file(path, presets, LoadOptions{false});
#ifdef ORRERY_HAVE_MPI
        const bool over_ranks = o->mpi || launched_with_several_ranks();
        if (!over_ranks || rank_from_environment() == 0) print_diagnostics(loaded.warnings);
#else
        print_diagnostics(loaded.warnings);
#endif
        const Scenario& base = loaded.base;

        // One fabric per distinct topology; experiments of a sweep usually share it.
        std::map<std::string, std::unique_ptr<Fabric>> fabrics;
        std::vector<const Fabric*> fabric_of;
        for (const Scenario& s : loaded.scenarios) {
            const std::string key = s.document["topology"].dump();
            auto it = fabrics.find(key);
            if (it == fabrics.end()) it = fabrics.emplace(key, std::make_unique<Fabric>(build_fabric(s.topology))).first;
            fabric_of.push_back(it->second.get());
        }
        const std::filesystem::path store_path = run_store_path(loaded, o->out);
        ProgressLines progress(o->progress_json, o->json);
        // The run record: `ranks` MPI ranks, the backend described by `device` (empty: as --threads/--backend say).
        auto begin_run_over = [&](ResultsStore& store, int ranks, const std::string& device) {
            std::vector<ExperimentRecord> records;
            for (const Experiment& x : loaded.experiments) records.push_back({x.id, x.index, x.seed, x.sha256, x.parameters});
            const std::string sha256 = loaded.experiments.size() == 1 ? loaded.experiments[0].sha256 : sha256_of_document(base.document);
            RunRecord record = cli_run_record(base.name, path, sha256, o->backend, loaded.written);
            record.ranks = ranks;
            if (!device.empty()) record.device = device;
            store.begin_run(record, records);
            progress.run(store.run_id(), records.size(), store_path);
        };
        auto begin_run = [&](ResultsStore& store) { begin_run_over(store, 1, ""); };
#ifdef ORRERY_HAVE_MPI
        if (o->partition) {
            refuse_what_partitions_cannot_do(loaded, o->backend);
            refuse_what_ranks_cannot_do(loaded);
            if (rank_from_environment() == 0) refuse_store_path(store_path, {}, scenario_inputs(path, loaded));
            // Checked and compiled before MPI starts: an input error is the same on every rank.
            const std::vector<ExperimentInput> inputs = flow_inputs(loaded, fabric_of);
            Batch batch = compile_batch(inputs);
            PartitionedJob job;
            job.store_path = store_path;
            job.progress = &progress;
            job.begin_run = [&](ResultsStore& store, int ranks) {
                begin_run_over(store, ranks, "CPU backend, each experiment partitioned over " + std::to_string(ranks) + " MPI ranks (1 thread each)");
            };
            job.run = [&](ResultsStore* store, ProgressLines& lines, PartitionComm& comm) {
                Backend backend = o->backend;
                backend.partition = &comm;
                const SessionResult r = run_session(batch, inputs, store, backend, {}, &lines);
                say(&lines, "%s: %zu experiment%s %s in %.3f s on %d rank%s; results in %s\n", path.string().c_str(), r.results.size(),
                    r.results.size() == 1 ? "" : "s", r.cancelled ? "cancelled" : "finished", r.wall_seconds, comm.ranks(), comm.ranks() == 1 ? "" : "s",
                    store_path.string().c_str());
                return r;
            };
            return run_partitioned_over_ranks(job);
        }
        if (over_ranks) {
            const bool rank0 = rank_from_environment() == 0;
            refuse_what_ranks_cannot_do(loaded);
            if (rank0) refuse_store_path(store_path, {}, scenario_inputs(path, loaded));
            RankedSweep sweep;
            for (size_t i = 0; i < loaded.experiments.size(); ++i) {
                sweep.ids.push_back(loaded.experiments[i].id);
                sweep.expected_cost.push_back(expected_cost(loaded.scenarios[i]));
            }
            sweep.store_path = store_path;
            sweep.progress = &progress;
            sweep.begin_run = [&](ResultsStore& store, int ranks) { begin_run_over(store, ranks, ""); };
            // A rank runs one experiment after another (on one thread: rank 0's local worker, or a serving rank):
            // each reuses the last one's packet storage, already in memory (2 ranks had 4.5x the page faults of
            // one process, and ran each experiment about 7 % slower).
            std::unique_ptr<BlockArena> spare_arena;
            sweep.run_one = [&](size_t i, ResultsStore& store, ProgressLines& quiet) {
                const LoadedScenario one = experiment_alone(loaded, i);
                const Experiment& x = one.experiments[0];
                store.begin_run(cli_run_record(base.name, path, x.sha256, o->backend, loaded.written), {{x.id, x.index, x.seed, x.sha256, x.parameters}});
                if (base.workload.trains()) return run_llm_session(one, {fabric_of[i]}, presets, store, o->backend, &quiet).summaries.at(0);
                const std::vector<ExperimentInput> inputs = flow_inputs(one, {fabric_of[i]});
                Batch batch = compile_batch(inputs, std::move(spare_arena));
                nlohmann::json summary = run_session(batch, inputs, &store, o->backend, {}, &quiet).summaries.at(0);
                spare_arena = std::move(batch.arena);
                return summary;
            };
            return run_sweep_over_ranks(sweep);
        }
#endif
        if (base.workload.trains()) {
            if (o->backend.device) {
                // The device backend steps packets: experiments on the analytic or flow network, or timed by
                // SimAI's busbw formula, run on the CPU whatever the backend.
                size_t packet_level = 0;
                for (const Scenario& s : loaded.scenarios)
                    packet_level += timing_mode(s) == TimingMode::packet;
                if (packet_level == 0)
                    throw InputError("--backend", "device steps the packet level, and no experiment of " + path.string() +
                                                      " runs there (workload.network_mode analytic or flow, or collectives.model busbw): run it without --backend device");
                if (packet_level < loaded.scenarios.size())
                    std::fprintf(stderr, "note: %zu of %zu experiments run at packet level on the device backend; the others (analytic, flow or busbw) run on the CPU\n",
                                 packet_level, loaded.scenarios.size());
            }
            refuse_store_path(store_path, {}, scenario_inputs(path, loaded));
            precheck_llm_experiments(loaded, fabric_of, presets);  // before the store: a job that cannot start stores no run
            ResultsStore store(store_path);
            begin_run(store);
            const FailedRunMark mark_failed(store);
            const LlmSessionResult r = run_llm_session(loaded, fabric_of, presets, store, o->backend, &progress);
            std::fprintf(stderr, "%s: %zu experiment%s %s; results in %s (run %lld)\n", path.string().c_str(), r.summaries.size(),
                         r.summaries.size() == 1 ? "" : "s", r.cancelled ? "cancelled" : "finished", store_path.string().c_str(), (long long)store.run_id());
            return r.cancelled ? 130 : kOk;
        }
        std::vector<ExperimentInput> inputs = flow_inputs(loaded, fabric_of);

        // Reference-format files, when the scenario asks for them: one set per experiment, refused before the
        // run when they exist.
        const OutputSpec& out = base.output;
        auto output_name = [&](const std::string& file, size_t e) { return hpcc_output_file(loaded, file, e); };
        const std::vector<std::filesystem::path> files = hpcc_output_files(loaded);
        const std::vector<std::filesystem::path> read = scenario_inputs(path, loaded);
        refuse_outputs(files, o->force, read);
        refuse_store_path(store_path, files, read);

        // Compiled before the store is opened: a batch that cannot be built (memory, address space) leaves no run behind.
        Batch batch = compile_batch(inputs);
        ResultsStore store(store_path);
        begin_run(store);
        const FailedRunMark mark_failed(store);

        const SessionResult session = run_session(batch, inputs, &store, o->backend, {}, &progress);
        const std::vector<ExperimentResult>& results = session.results;
        for (size_t e = 0; e < results.size(); ++e) {
            if (!out.hpcc_fct_file.empty()) write_output(output_name(out.hpcc_fct_file, e), format_hpcc_fct(batch, results[e]), o->force);
            if (!out.hpcc_pfc_file.empty()) write_output(output_name(out.hpcc_pfc_file, e), format_hpcc_pfc(results[e]), o->force);
            if (!out.hpcc_qlen_file.empty()) write_output(output_name(out.hpcc_qlen_file, e), format_hpcc_qlen(results[e]), o->force);
        }
        std::fprintf(stderr, "%s: %zu experiment%s %s in %.3f s; results in %s (run %lld)\n", path.string().c_str(), results.size(),
                     results.size() == 1 ? "" : "s", session.cancelled ? "cancelled" : "finished", session.wall_seconds,
                     store_path.string().c_str(), (long long)store.run_id());
        return session.cancelled ? 130 : kOk;  // 130: interrupted, as shells report it
    };
}

}  // namespace orrery::cli
