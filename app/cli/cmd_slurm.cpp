// `orrery-cli slurm`: writes an sbatch script that runs a scenario's sweep over MPI ranks with srun. Offered
// only by builds with MPI (a build without it would run the whole sweep once per rank).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/mpi_partition.h"
#include "cli/mpi_sweep.h"
#include "scenario/load.h"

namespace orrery::cli {

Runner add_slurm(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string scenario, out, script, time = "01:00:00", mpi = "pmix";
        int nodes = 1, ranks_per_node = 1, threads = 1;
        bool force = false, partition = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("SCENARIO", o->scenario, "Scenario .json, or the name of a bundled scenario")->required();
    app.add_option("--nodes", o->nodes, "Cluster nodes")->check(CLI::Range(1, 100000));
    app.add_option("--ranks-per-node", o->ranks_per_node, "MPI ranks on each node (each runs one experiment at a time, or with --partition its share of each)")->check(CLI::Range(1, 4096));
    app.add_option("--threads", o->threads, "CPU threads of each rank (--cpus-per-task)")->check(CLI::Range(1, 1024));
    app.add_option("--time", o->time, "Slurm time limit, HH:MM:SS (default 01:00:00)");
    app.add_option("--srun-mpi", o->mpi, "srun's --mpi plugin for OpenMPI on this cluster (default pmix; `srun --mpi=list`)");
    app.add_option("--out", o->out, "Results store the job writes (default: <scenario name>.sqlite in the current directory)");
    app.add_option("-o,--script", o->script, "Write the script here instead of printing it");
    app.add_flag("--force", o->force, "Replace the script file if it exists");
    app.add_flag("--partition", o->partition,
                 "Split each experiment's fabric over all ranks (run --partition) instead of handing whole experiments to ranks; "
                 "flow workloads without skipping, one thread per rank");
    return [&presets, o]() -> int {
        const std::filesystem::path path = scenario_argument(o->scenario, presets, nullptr);
        // Checked now, on the login node, rather than after the job has waited in the queue.
        const LoadedScenario loaded = load_scenario_file(path, presets, LoadOptions{false});
        print_diagnostics(loaded.warnings);
        refuse_what_ranks_cannot_do(loaded);
        if (o->partition) refuse_what_partitions_cannot_do(loaded, Backend{o->threads, false, nullptr});
        const int colons = int(std::count(o->time.begin(), o->time.end(), ':'));
        if (colons != 2 || o->time.find_first_not_of("0123456789:") != std::string::npos)
            throw InputError("--time", "a Slurm time limit as HH:MM:SS, not \"" + o->time + "\"");
        SlurmJob job;
        job.cli = std::filesystem::canonical("/proc/self/exe");
        job.scenario = std::filesystem::absolute(path);
        job.store = std::filesystem::absolute(o->out.empty() ? path.stem().string() + ".sqlite" : o->out);
        job.name = "orrery-" + path.stem().string();
        for (char& c : job.name)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
        job.nodes = o->nodes;
        job.ranks_per_node = o->ranks_per_node;
        job.threads = o->threads;
        job.time_limit = o->time;
        job.mpi_plugin = o->mpi;
        job.partition = o->partition;
        const std::string script = sbatch_script(job);
        if (o->script.empty()) {
            std::fputs(script.c_str(), stdout);
            return kOk;
        }
        write_output(o->script, script, o->force);
        std::filesystem::permissions(o->script, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec, std::filesystem::perm_options::add);
        std::fprintf(stderr, "%s: %d node(s) x %d rank(s), %d thread(s) each; results in %s. Submit with: sbatch %s\n", o->script.c_str(), job.nodes,
                     job.ranks_per_node, job.threads, job.store.string().c_str(), o->script.c_str());
        return kOk;
    };
}

}  // namespace orrery::cli
