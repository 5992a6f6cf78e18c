#pragma once
// `orrery-cli run --partition` under MPI: every rank compiles the whole batch and steps the share of each
// experiment's nodes that plan_partition gives it (engine/runtime/partition.h), exchanging boundary packets
// with its neighbour ranks every step over MPI point-to-point messages. Rank 0 alone writes the results store
// and prints; at the end it prints each rank's share: nodes, boundary rings, bytes sent per step and the time
// spent waiting at step boundaries.
#include <filesystem>
#include <functional>

#include "cli/run_session.h"
#include "runtime/partition.h"
#include "scenario/load.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

struct PartitionedJob {
    std::filesystem::path store_path;                          // rank 0's results store
    ProgressLines* progress = nullptr;                         // rank 0's
    std::function<void(ResultsStore& store, int ranks)> begin_run;  // rank 0: the run record (ranks set)
    // Every rank: compiles the batch and runs it with `backend.partition` set (store and progress are rank
    // 0's, null and quiet elsewhere).
    std::function<SessionResult(ResultsStore* store, ProgressLines& progress, PartitionComm& comm)> run;
};

// Initializes MPI, runs the job on every rank, finalizes MPI. Returns the exit code: 0, 130 when cancelled.
// Check the input before: an error on any rank here is printed and aborts the job (MPI_Abort), since the
// other ranks may be waiting for it at a step boundary.
int run_partitioned_over_ranks(const PartitionedJob& job);

// Throws InputError for what --partition does not split, naming the field or option: LLM workloads (their
// driver), skipping, the device backend, more than one thread per rank.
void refuse_what_partitions_cannot_do(const LoadedScenario& loaded, const Backend& backend);

// What one rank did, as the closing lines print it.
std::string describe_partition_rank(int rank, const PartitionStats& s);

}  // namespace orrery::cli
