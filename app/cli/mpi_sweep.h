#pragma once
// `orrery-cli run` under MPI (mpirun or Slurm's srun): the experiments of a sweep are handed out to ranks one at
// a time, longest expected first. Rank 0 also runs experiments (on a thread of its own) and alone writes the
// results store: every rank runs an experiment into a private store (the same code as a one-process run),
// sends its bytes to rank 0, and rank 0 merges them into the run (ResultsStore::merge_experiment) as they
// arrive. So the store equals a one-process run's except wall times and the run's rank count.
//
// Only rank 0 prints: its progress lines, --json summaries and --progress-json events.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_session.h"
#include "scenario/load.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

// Whether this process was started by an MPI launcher with more than one process (OpenMPI's mpirun, or a
// PMI/PMIx launcher such as srun), read from the environment before MPI is initialized.
bool launched_with_several_ranks();
// This process's rank by the same environment (0 when not launched by MPI).
int rank_from_environment();

// Throws InputError for what a run over ranks does not do yet: a memo file shared between ranks, and
// reference-format output files (written by one-process runs only).
void refuse_what_ranks_cannot_do(const LoadedScenario& loaded);

// `orrery-cli slurm`: an sbatch script that runs `orrery-cli run` with srun over nodes × ranks per node: the
// sweep's experiments handed to ranks, or with `partition` each experiment split over all of them.
struct SlurmJob {
    std::filesystem::path cli, scenario, store;  // absolute
    std::string name;
    int nodes = 1, ranks_per_node = 1, threads = 1;
    std::string time_limit = "01:00:00";       // HH:MM:SS
    std::string mpi_plugin = "pmix";            // srun --mpi=
    bool partition = false;                     // each experiment split over the ranks (run --partition)
};
std::string sbatch_script(const SlurmJob& job);

struct RankedSweep {
    std::vector<std::string> ids;       // experiment ids, in experiment order
    std::vector<double> expected_cost;  // per experiment: larger runs first (any unit)
    // Runs experiment `i` into `store` (whose run the caller began with that experiment alone); returns its
    // summary. Called on every rank, with quiet progress lines on all but rank 0's coordinator.
    std::function<nlohmann::json(size_t i, ResultsStore& store, ProgressLines& progress)> run_one;
    // Rank 0: begins the run in the results store (all experiments, the rank count set).
    std::function<void(ResultsStore& store, int ranks)> begin_run;
    std::filesystem::path store_path;   // rank 0's results store
    ProgressLines* progress = nullptr;  // rank 0's
};

// Initializes MPI, runs the sweep over all ranks, finalizes MPI. Returns the process exit code (0, or 1 when
// an experiment failed with an input error, which rank 0 reports).
int run_sweep_over_ranks(const RankedSweep& sweep);

}  // namespace orrery::cli
