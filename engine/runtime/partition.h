#pragma once
// One batch split over ranks: processes that share no memory (MPI ranks: app/cli/mpi_partition.cpp; threads
// in the tests). Every rank compiles the same batch and steps only the nodes the plan gives it; after each
// step it sends the packets its nodes put into rings read on other ranks to those ranks (neighbour exchange:
// only ranks that share a link talk), and the ranks agree on each experiment's summary (the host step's
// input), so every rank takes the same host decisions. A node's step reads only its own rows and its receive
// rings, so results are those of one process, byte for byte (test_partition, test_mpi).
//
// Not here: steady-state skipping and workload drivers (LLM jobs), whose hooks rewrite any node's rows
// between steps; run_partitioned refuses them.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"

namespace orrery {

// Which rank steps each node of a batch.
struct PartitionPlan {
    int ranks = 1;
    std::vector<uint16_t> owner;   // by node row
    std::vector<uint64_t> weight;  // by rank: nodes plus ports it steps (the balance the plan keeps)
};

// Each experiment's nodes cut into `ranks` parts: racks (a switch and its hosts) in locality order, in
// contiguous runs of equal weight, so a pod stays whole where it can; then each switch without hosts goes to
// the rank holding most of its neighbours (aggregation switches with their pod), or, when that rank is full or
// none holds more, to the least loaded (core switches spread). Weight = 1 + ports.
PartitionPlan plan_partition(const Batch& b, int ranks);

// The transport between ranks. Every call is collective: all ranks make the same calls in the same order.
struct PartitionComm {
    virtual ~PartitionComm() = default;
    virtual int rank() const = 0;
    virtual int ranks() const = 0;
    // Sends to[i] to rank peers[i] and returns in from[i] what peers[i] sent to this rank. Both sides name
    // each other as peers.
    virtual void exchange(const std::vector<int>& peers, const std::vector<std::vector<uint8_t>>& to,
                          std::vector<std::vector<uint8_t>>& from) = 0;
    // Every rank's `mine`, by rank (this rank's own included).
    virtual void allgather(const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>& all) = 0;
};

// What one rank did, for the benchmark and the run's closing lines.
struct PartitionStats {
    uint32_t nodes = 0;            // nodes it stepped
    uint32_t peers = 0;            // ranks it exchanges packets with
    uint32_t boundary_rings = 0;   // rings between its nodes and another rank's, both directions
    uint64_t steps = 0;
    uint64_t bytes_sent = 0;       // packet exchange payload sent to its peers
    uint64_t packets_sent = 0;
    double step_seconds = 0;       // stepping its nodes
    double wait_seconds = 0;       // inside the exchange and the agreement at step boundaries
    double wall_seconds = 0;
};

// Runs `b` on this rank's share of its nodes, with `comm` to the others; every rank calls it with the same
// batch, options (hooks may differ; which hooks are set may not) and plan. Each rank returns every
// experiment's complete results: when an experiment ends, its rows are gathered from their owners. A failure
// on one rank ends the run on every rank (the others throw std::runtime_error saying so). Throws
// std::invalid_argument for what a partitioned run does not do: skipping, a workload driver. `stats`, when
// given, receives every rank's figures, by rank.
std::vector<ExperimentResult> run_partitioned(Batch& b, const RunOptions& options, const PartitionPlan& plan, PartitionComm& comm,
                                              std::vector<PartitionStats>* stats = nullptr);

}  // namespace orrery
