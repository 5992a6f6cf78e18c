#pragma once
// Collectives decomposed into transfers, as NCCL runs them: ring, double binary tree, halving-doubling,
// direct, and hierarchical (inside each server by the α-β model, across servers by a ring among the GPUs
// of one local index); NCCL-like channels (the data split over parallel transfers) and chunks (a large
// transfer pipelined in pieces, each waiting for the same piece of the previous step and the previous
// piece on the same link); PXN (a cross-rail transfer first crosses NVLink to the sender's server GPU on
// the receiver's rail). Transfers between two GPUs of one server are α-β timed local copies.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/graph.h"
#include "workload/spec.h"
#include "workload/tables.h"

namespace orrery {

// Where each rank sits: its host node in the fabric, its server and its index inside the server.
struct Placement {
    std::vector<uint32_t> host;     // per rank: fabric node id
    std::vector<int32_t> server;    // per rank
    std::vector<int32_t> local;     // per rank: position inside its server (its rail)
    int gpus_per_server = 1;
    std::vector<uint32_t> rank_at;  // [server · gpus_per_server + local] → rank, UINT32_MAX where no rank sits
    int64_t nvlink_hop_ps = 50'000; // GPU → NVSwitch → GPU propagation (two NVLink link delays; SimAI's 25 ns each)
    // The fabric's GPU → NVSwitch link rate (link_defaults.nvlink.rate: the raw per-GPU NVLink bandwidth, one
    // direction), bytes/s; 0 where the fabric has no NVSwitch (the GPU's own bandwidth of data/gpus.json applies).
    double nvlink_bytes_per_s = 0;
    // The fabric's nvlink_rate_is_bus_bandwidth (SimAI topology files): collectives inside a server reach
    // nvlink_bytes_per_s itself, with no α.
    bool nvlink_rate_is_bus_bandwidth = false;
    uint32_t rank_on(int32_t server, int32_t local) const;
};

// A collective's α-β fit inside a server at the GPU's own NVLink bandwidth (data/gpus.json): the calibrated fit of
// data/intra_server.json, or, where the fabric's NVLink figure is the bus bandwidth (SimAI topology files),
// SimAI's model: that bandwidth itself, no α. CollectiveContext::intra_fit scales it to the fabric's rate; the
// flow level loads NVLink ports of that rate.
AlphaBeta gpu_nvlink_fit(const WorkloadTables& tables, const std::string& gpu, const Placement& place, CollectiveKind kind, int group);

struct CollectiveContext {
    const Placement& place;
    const WorkloadTables& tables;
    const std::string& gpu;
    const CollectiveSpec& spec;
    // The calibrated α-β fit inside a server (data/intra_server.json), its bandwidth scaled by the fabric's NVLink
    // rate over the GPU's own: collectives reach the same fraction of the NVLink rate in every network mode (the
    // flow and packet levels load NVLink ports of that rate; the analytic level times with this fit).
    AlphaBeta intra_fit(CollectiveKind kind, int group) const;
    int64_t intra_ps(CollectiveKind kind, int group, int64_t bytes) const;  // α + bytes × bus factor ÷ bandwidth
};

// Emits one collective over `ranks` (in ring order) of `bytes` per rank — the whole buffer: the input of an
// all-reduce or reduce-scatter, the output of an all-gather; for all-to-all what each rank sends in all;
// for broadcast the root's (ranks[0]) buffer. ready[i] is the op ranks[i] must finish first (UINT32_MAX:
// none). Returns the collective's index in g.collectives; its end op completes when every transfer has.
// Throws InputError when the algorithm cannot run on the group (halving-doubling on a group that is not a
// power of two).
uint32_t emit_collective(TaskGraph& g, const CollectiveContext& c, CollectiveKind kind, Group group, const std::vector<uint32_t>& ranks,
                         int64_t bytes, const std::vector<uint32_t>& ready, const std::string& name);

// The same collective over every group of `family` at once, on a lockstep graph (TaskGraph::lockstep):
// the groups' members in the same positions; its ops carry every group's pairs. A one-group family on a
// per-rank graph is the call above.
uint32_t emit_collective(TaskGraph& g, const CollectiveContext& c, CollectiveKind kind, Group group,
                         const std::vector<std::vector<uint32_t>>& family, int64_t bytes, const std::vector<uint32_t>& ready, const std::string& name);

// Lockstep: a send of `bytes` from every pair's sender to its receiver at once (pipeline stages).
uint32_t emit_sends(TaskGraph& g, const CollectiveContext& c, Group group, const std::vector<RankPair>& pairs, int64_t bytes, uint32_t after,
                    const std::string& name);

// A point-to-point send (pipeline parallelism) from rank `from` to `to` after op `after`; returns its last op.
uint32_t emit_send(TaskGraph& g, const CollectiveContext& c, Group group, uint32_t from, uint32_t to, int64_t bytes, uint32_t after,
                   const std::string& name);

}  // namespace orrery
