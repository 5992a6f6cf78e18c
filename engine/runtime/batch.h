#pragma once
// A batch: the tables of every experiment of a sweep, laid out one after the other. compile_batch builds
// them from scenarios; the runners (cpu_runner) step them; the view hands the systems raw pointers.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "net/cc.h"
#include "net/state.h"
#include "runtime/block_arena.h"
#include "runtime/fabric_changes.h"
#include "runtime/huge_page_table.h"
#include "runtime/zeroed_counts.h"
#include "scenario/scenario.h"
#include "topology/fabric.h"
#include "topology/routing.h"

namespace orrery {

struct ExperimentInput {
    std::string id;                 // "e0000"
    const Scenario* scenario = nullptr;
    const Fabric* fabric = nullptr;
    std::vector<FlowSpec> flows;
};

// Where an experiment's rows sit in the batch, and its clock.
struct ExperimentSlice {
    std::string id;
    uint32_t node_begin = 0, node_end = 0;
    uint32_t port_begin = 0, port_end = 0;
    uint32_t flow_begin = 0, flow_end = 0;
    int64_t lookahead = 0;          // ps: the minimum link delay
    int64_t clock = 0;              // ps: start of its next step
    bool done = false;
    uint64_t max_rtt_ns = 0, max_bdp = 0;
    const Fabric* fabric = nullptr;
    int64_t peak_blocks = 0;        // most packet blocks its FIFOs held at a step's end
    SkippingSpec skipping;          // steady-state skipping (engine/wormhole)
    std::vector<FabricChange> changes;  // topology.events after the start, in time order (runtime/fabric_changes.h)
    size_t next_change = 0;         // the first not yet applied
    uint64_t lost_to_failures = 0;  // packets lost when links went down (queued toward them, on their wires)
    std::vector<FabricEvent> fabric_events;  // its topology.events, resolved (what: "link 12 (3 – 17) down at 100us")
};

// The storage of a column of net/columns.h: a CC's flow state is a CcTable (only its own flows' rows written).
template <class T, bool cc_state>
using BatchColumn = std::conditional_t<cc_state, CcTable<T>, Table<T>>;

struct Batch {
    std::vector<ExperimentSlice> experiments;
    // Every column of net/columns.h, in its order.
#define ORRERY_COLUMN(T, name, access, dim, hooks, share, ...) BatchColumn<net::T, net::ColumnShare::share == net::ColumnShare::Cc> name;
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    Table<uint32_t> node_fabric_id;      // the node's id inside its experiment's fabric (host side only)
    // Every packet in a ring or a queue: blocks of one arena (net/blocks.h), taken and given back by the step.
    std::unique_ptr<BlockArena> arena;
    std::vector<ZeroedCounts> qlen_hist;  // per experiment, allocated when its monitor starts (zeroed_counts.h)
    std::vector<uint32_t*> qlen_ptr;

    Batch() { set_begin.push_back(0); }  // routing sets are offsets: the first set starts at 0
    // per experiment with skipping on: flows released since its skipper last looked (release_flow appends)
    std::vector<std::vector<uint32_t>> released;


    // The systems' view of the tables; the worker's block stock and PFC log are set by each worker.
    net::NetView view();
    // The tables and the packet storage committed so far.
    size_t memory_bytes() const;
    size_t cc_state_bytes() const;            // every experiment's flows' own-CC rows (CcTable)
    size_t cc_state_bytes(uint32_t e) const;  // experiment e's
    // Experiment e's share: its rows of every per-node, per-port and per-flow column (routing sets and paths
    // by its share of nodes and flows), the most packet blocks it held at once, its queue histogram.
    size_t experiment_memory_bytes(uint32_t e) const;
};

// Throws InputError when an experiment cannot be simulated (a host with two network ports, a zero link
// delay, a flow between unreachable hosts, no ECN threshold for a port rate).
// `arena`: packet storage to reuse, from a batch whose experiments all ended (their blocks are back in its free
// list). Its pages are already committed, so a process that runs a sweep one experiment at a time (an MPI rank)
// does not fault them in again for every experiment; results are the same either way. It is dropped when its
// packet size is not the batch's.
// `slots`: packets take half a line unless an experiment carries HPCC's INT hops (net/blocks.h); `whole_line`
// stores every packet in a whole line, to compare the two (results are the same, memory and speed are not).
enum class PacketSlots : uint8_t { by_cc, whole_line };
Batch compile_batch(const std::vector<ExperimentInput>& inputs, std::unique_ptr<BlockArena> arena = nullptr, PacketSlots slots = PacketSlots::by_cc);

// Gives back every packet block experiment e still holds (its rings and queues), into `cache`: its results
// are taken and nothing will step it again.
void release_experiment_storage(Batch& b, uint32_t e, net::BlockCache& cache);

// Every packet in port `row`'s receive ring, from the head (host hooks between steps).
template <class Visit>
void for_each_ring_packet(const Batch& b, uint32_t row, Visit visit) {
    const net::RingHead& h = b.ring_head[row];
    const net::RingTail& t = b.ring_tail[row];
    if (h.head == t.tail) return;
    net::chain_for_each(b.arena->store(nullptr), net::ring_head_block(h, t, b.arena->next()), h.head, t.tail, visit);
}

// Port `row`'s receive ring read to its end, as its reader would (the packets are dropped): each block it leaves
// goes back to `store`'s cache, the last one is kept (the writer links the next block to it).
void empty_ring(Batch& b, uint32_t row, const net::BlockStore& store);

// The reference's standalone FCT of `size` payload bytes on a path: its base RTT plus the wire bytes (48 B of
// header per packet, no INT) at the path's bottleneck rate, in integer ns.
uint64_t standalone_fct_ns(const PathMetrics& m, uint64_t size, uint32_t mtu);

// Sets the start of a flow compiled with no start (kNever) and puts it in its NIC's start order (by start,
// then by release). `start` must not be before the experiment's clock.
void release_flow(Batch& b, uint32_t flow, int64_t start);

// Every host hook that changes a node's state between steps (its ports, rings, queues, NIC or its flows'
// sender or receiver state) marks the node, so that it takes its next step in full (net/node.h: process_node). A
// ring's packets are its reader's: a hook that moves or drops them marks the reader too.
inline void mark_host_wrote(Batch& b, uint32_t node) { b.out[node].host_wrote = 1; }

// Allocates experiment e's queue-monitor histograms (one 1 KB bucket per KB of switch buffer, per port).
void allocate_queue_monitor(Batch& b, uint32_t e);
// How many buckets those histograms hold in all.
size_t queue_monitor_buckets(const Batch& b, uint32_t e);

}  // namespace orrery
