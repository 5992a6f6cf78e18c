#pragma once
// The task graph of a training iteration: one table of operations over all ranks, each with its
// predecessors (CSR). Compute runs on its rank's compute stream in program order; communication is
// decomposed into transfers (between servers: network flows; inside a server: α-β timed copies) and
// zero-time joins that mark where a collective starts and ends.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <string>
#include <tuple>
#include <vector>

#include "workload/compute.h"
#include "workload/tables.h"

namespace orrery {

enum class OpKind : uint8_t { compute, transfer, local, join };
// embedding: the tied-embedding gradient all-reduce between the first and last pipeline stage (Megatron's
// embedding group), neither data nor pipeline parallelism.
enum class Group : uint8_t { none, tp, pp, dp, ep, embedding };
inline constexpr size_t kGroupCount = 6;
const char* group_name(Group g);

struct Op {
    OpKind kind = OpKind::join;
    Group group = Group::none;
    Phase phase = Phase::forward;
    bool optimizer = false;        // compute: the optimizer step (reported apart)
    uint32_t rank = 0;             // compute: its rank; transfer: the sender; local/join: the first member
    uint32_t peer = 0;             // transfer: the receiver
    int64_t bytes = 0;             // transfer / local: payload bytes
    int64_t duration = 0;          // ps: compute (before slowdown) and local ops; a lockstep transfer: one step of a pair inside a server;
                                   // a join waits this long (0 but for a job's start in a mix, workload/job_mix.h)
    uint32_t name = 0;             // index into TaskGraph::names
    uint32_t collective = UINT32_MAX;  // the collective a transfer/local/join belongs to
    uint16_t iteration = 0;        // the training iteration the op belongs to
    CollectiveKind local_kind = CollectiveKind::send_recv;  // local: the intra-server collective it times
    bool step = false;             // local: one move of a larger collective (NVLink latency, not a launch α)
    uint32_t members = UINT32_MAX; // local: index into TaskGraph::member_sets (the GPUs whose NVLink it loads)
    uint32_t group_size = 0;       // local, lockstep graphs: member_sets[members] is one group after another of this many
    uint32_t pairs = UINT32_MAX;   // transfer, lockstep graphs: index into TaskGraph::pair_sets (else the one pair rank → peer)
    uint32_t steps = 1;            // transfer, lockstep graphs: `bytes` moves in this many steps one after another (a ring)
};

using RankPair = std::pair<uint32_t, uint32_t>;  // (sender, receiver)

// The pairs of a lockstep transfer and its label (an NCCL channel: its pairs take their own ECMP paths).
struct PairSet {
    std::vector<RankPair> pairs;
    uint32_t label = 0;
    uint32_t cycle = 0;  // a ring: each group's `cycle` pairs in ring order (member i → i + 1); 0: pairs at once
};

// The latency of a lockstep transfer of `steps` steps whose pair p alone costs cost[p] per step: pairs at
// once finish with the slowest; a ring's steps pass from each member to the next, so its critical path
// sums the costs of `steps` consecutive pairs of one group (the worst window of the worst group).
int64_t lockstep_cost(const PairSet& set, const std::vector<int64_t>& cost, uint32_t steps);

// A ring's step larger than `chunk` bytes goes in pieces that pipeline through the ring: its latency path
// is steps + pieces − 1 pieces long. Returns the pieces of one step (1 for anything but a ring).
int64_t lockstep_pieces(const PairSet& set, const Op& op, int64_t chunk);

struct CollectiveRecord {
    uint32_t name;                 // index into names
    Group group;
    CollectiveKind kind;
    std::vector<uint32_t> ranks;
    int64_t bytes;                 // per rank (the NCCL "count × size")
    uint32_t start, end;           // their join ops
    uint32_t groups = 1;           // lockstep: the groups (or send pairs) it runs over at once; `ranks` is the first
};

// A graph is per rank (every op's `rank` is a rank), or lockstep: every op's `rank` is a lane, one program
// that all ranks of the lane run in step (a SimAI file's pipeline stage), and a transfer moves between all
// its pairs at once — a collective over every group of the stage as one task, expanded to pairs only when
// it is timed. `world` counts what op.rank indexes: ranks, or lanes.
struct TaskGraph {
    uint32_t world = 0;
    std::vector<std::vector<uint32_t>> lane_ranks;  // lockstep: per lane its ranks; empty: per rank
    std::vector<uint32_t> lane_of_rank;             // lockstep: per rank its lane
    std::vector<PairSet> pair_sets;                 // lockstep: interned pairs of transfers
    // Per lane, its compute's slowdown while it communicates (ComputeSpec::overlap_slowdown) where the lanes'
    // jobs differ (a mix of jobs); empty: the executor's one value.
    std::vector<double> lane_overlap_slowdown;
    std::map<std::tuple<uint32_t, uint32_t, std::vector<RankPair>>, uint32_t> pair_index;
    std::vector<Op> ops;
    std::vector<std::vector<uint32_t>> deps;  // per op: the ops it waits on
    std::vector<std::string> names;            // each distinct label once (name() interns)
    std::unordered_map<std::string, uint32_t> name_index;
    std::vector<CollectiveRecord> collectives;
    std::vector<std::vector<uint32_t>> member_sets;  // interned: the GPUs of local ops
    std::map<std::vector<uint32_t>, uint32_t> member_index;
    // A graph that outgrows the machine is refused while it is built (add() throws InputError at `where`):
    // kOpBytes is what an op costs through a run: the graph, the executor, the flow network and the timeline
    // (the peak resident memory of flow-level runs over their op count; engine/workload/README.md).
    static constexpr uint64_t kOpBytes = 700;
    uint64_t max_ops = UINT64_MAX;
    std::string where = "workload";

    uint32_t add(const Op& op, const std::vector<uint32_t>& after);
    void limit_to_memory(const std::string& where);  // sets max_ops from this machine's memory
    void add_dep(uint32_t op, uint32_t after);  // UINT32_MAX: nothing
    uint32_t name(const std::string& s);
    uint32_t intern_members(const std::vector<uint32_t>& ranks);
    uint32_t intern_pairs(const std::vector<RankPair>& pairs, uint32_t label, uint32_t cycle);
    bool lockstep() const { return !lane_ranks.empty(); }
    uint32_t lane(uint32_t rank) const { return lane_ranks.empty() ? rank : lane_of_rank[rank]; }
    uint32_t first_rank(uint32_t lane) const { return lane_ranks.empty() ? lane : lane_ranks[lane][0]; }
    // Makes the graph lockstep: lane l stands for ranks[l] (every rank in one lane).
    void set_lanes(std::vector<std::vector<uint32_t>> ranks, uint32_t total_ranks);
    size_t size() const { return ops.size(); }
};

}  // namespace orrery
