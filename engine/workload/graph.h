#pragma once
// The task graph of a training iteration: one table of operations over all ranks, each with its
// predecessors (CSR). Compute runs on its rank's compute stream in program order; communication is
// decomposed into transfers (between servers: network flows; inside a server: α-β timed copies) and
// zero-time joins that mark where a collective starts and ends.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include "workload/compute.h"
#include "workload/tables.h"

namespace orrery {

enum class OpKind : uint8_t { compute, transfer, local, join };
enum class Group : uint8_t { none, tp, pp, dp, ep };
const char* group_name(Group g);

struct Op {
    OpKind kind = OpKind::join;
    Group group = Group::none;
    Phase phase = Phase::forward;
    bool optimizer = false;        // compute: the optimizer step (reported apart)
    uint32_t rank = 0;             // compute: its rank; transfer: the sender; local/join: the first member
    uint32_t peer = 0;             // transfer: the receiver
    int64_t bytes = 0;             // transfer / local: payload bytes
    int64_t duration = 0;          // ps: compute (before slowdown) and local ops
    uint32_t name = 0;             // index into TaskGraph::names
    uint32_t collective = UINT32_MAX;  // the collective a transfer/local/join belongs to
    uint16_t iteration = 0;        // the training iteration the op belongs to
    CollectiveKind local_kind = CollectiveKind::send_recv;  // local: the intra-server collective it times
    bool step = false;             // local: one move of a larger collective (NVLink latency, not a launch α)
    uint32_t members = UINT32_MAX; // local: index into TaskGraph::member_sets (the GPUs whose NVLink it loads)
};

struct CollectiveRecord {
    uint32_t name;                 // index into names
    Group group;
    CollectiveKind kind;
    std::vector<uint32_t> ranks;
    int64_t bytes;                 // per rank (the NCCL "count × size")
    uint32_t start, end;           // their join ops
};

struct TaskGraph {
    uint32_t world = 0;
    std::vector<Op> ops;
    std::vector<std::vector<uint32_t>> deps;  // per op: the ops it waits on
    std::vector<std::string> names;            // each distinct label once (name() interns)
    std::unordered_map<std::string, uint32_t> name_index;
    std::vector<CollectiveRecord> collectives;
    std::vector<std::vector<uint32_t>> member_sets;  // interned: the GPUs of local ops
    std::map<std::vector<uint32_t>, uint32_t> member_index;
    // A graph that outgrows the machine is refused while it is built (add() throws InputError at `where`):
    // kOpBytes is what an op costs through a run (graph ~120 B, executor ~90 B, flow network, timeline).
    static constexpr uint64_t kOpBytes = 250;
    uint64_t max_ops = UINT64_MAX;
    std::string where = "workload";

    uint32_t add(const Op& op, const std::vector<uint32_t>& after);
    void limit_to_memory(const std::string& where);  // sets max_ops from this machine's memory
    void add_dep(uint32_t op, uint32_t after);  // UINT32_MAX: nothing
    uint32_t name(const std::string& s);
    uint32_t intern_members(const std::vector<uint32_t>& ranks);
    size_t size() const { return ops.size(); }
};

}  // namespace orrery
