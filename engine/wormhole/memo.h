#pragma once
// Memoization of transients (Wormhole §4): the flow conflict graph (FCG) of a partition — one vertex per
// flow labelled with its quantized rate, remaining size and base RTT (and under HPCC whether it still waits for
// its first round trip's feedback); an edge between two flows that share
// ports, weighted by how many and how many of those both send data through (edge_weight) — keys what the
// partition did until it became steady: how long it took, the
// bytes each flow got through, and each flow's rate at the end. A context string (congestion control and
// every parameter of it, the MTU, the link rates and ECN thresholds of the partition's ports) is part of the
// key, so a different CC setting or link speed never matches.
//
// A transient ends when the partition is steady or when its first flow finishes, whichever comes first.
//
// Lookup: a Weisfeiler-Lehman hash of the labelled graph finds candidates; a candidate equal to the query
// vertex for vertex maps each flow to itself, and otherwise Boost.Graph's VF2 verifies the isomorphism,
// honouring labels and weights, and yields which stored flow is which new flow.
//
// Sharing and determinism: an experiment reads the memo as it stood when its run began (the persisted file)
// plus the entries it made itself; what every experiment learned is merged when the run ends, in experiment
// order. So a sweep's results do not depend on the thread count or on which experiment ran first, and the
// next run of the sweep reuses all of it.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/cc_snapshot.h"

namespace orrery::wormhole {

struct FlowConflictGraph {
    std::string context;
    std::vector<uint64_t> labels;                 // per vertex (flow)
    struct Edge {
        uint32_t a, b, shared;                    // a < b; edge_weight of the ports the two flows share
    };
    std::vector<Edge> edges;                      // sorted
    uint64_t hash = 0;                            // of everything above, invariant under vertex renumbering
};

// Rate as a share of line rate in 1/16 steps, remaining size in quarter-octaves (steps of 19 %) up to
// kLabelledBdps of the experiment's largest bandwidth-delay product, base RTT in 100 ns. (Half-octaves, 41 %
// steps, replayed MoE's all-to-all transients into flows too unlike the stored ones: its memo-file re-run was
// 1.28 % mean per-flow FCT error under DCQCN, 0.90 % with quarter-octaves.)
//
// Flows with more than kLabelledBdps round trips of line-rate data still to send are labelled alike: the
// 32-flow partitions of GPT-3 175B's gradient all-reduce, two rings of 14 MB transfers (35 BDPs) at different
// points, had 1,252 distinct keys in 1,331 misses, their flows all at line rate and 7-14 MB from their ends.
// Measured (docs/history/wormhole-skipping.md): capped at 8 BDPs that iteration handles 17 % fewer events, GPT-3 13B
// keeps its errors, MoE 8x13B does not move; capped at 4 BDPs, MoE 8x13B's all-to-all transfers (~2.6 MB,
// 6.5 BDPs) lose the sizes that tell their ages apart and its iteration moves -0.17 % (was +0.02 %); without
// sizes at all, the same.
constexpr uint64_t kLabelledBdps = 8;
//
// `awaiting_first_feedback`: the flow's HPCC has not yet had the ACK that ends its first round trip (it only
// remembers that ACK's INT and changes no rate before it), so its rate is the line rate because it has heard
// nothing yet, not because its path allows it. Labelled apart, MoE 8x13B's replays under HPCC were early by
// 0.22 % on average instead of 0.88 % (docs/history/wormhole-skipping.md).
uint64_t vertex_label(double rate_share_of_line, uint64_t remaining_bytes, uint64_t max_bdp_bytes, uint64_t base_rtt_ns,
                      bool awaiting_first_feedback = false);
// The label's bit for `awaiting_first_feedback`.
constexpr uint64_t kAwaitingFirstFeedbackBit = uint64_t(1) << 62;
// An edge's weight: how many ports (data and ACK paths) two flows share and how many of those both send data
// through. Counted without the second, a flow into a host and a flow out of it share two ports (the host's
// NIC and its ToR's downlink, one on each's data path and one on each's ACK path) just as two flows into it
// do, and the graph could not tell them apart. (Suspected, wrongly, of MoE 32x22B's over-line replays, whose
// cause was the pipeline refill; measured, it leaves DCQCN rows as they were and takes MoE 8x13B under HPCC
// from 110.1 M to 103.8 M events: docs/history/wormhole-skipping.md.)
inline uint32_t edge_weight(uint32_t shared_ports, uint32_t shared_data_ports) {  // inline: once per pair of flows
    return (std::min<uint32_t>(shared_data_ports, 0xffff) << 16) | std::min<uint32_t>(shared_ports, 0xffff);
}
// Computes the hash of a graph whose context, labels and edges are set.
void finish_graph(FlowConflictGraph& g);

// finish_graph's hashes kept by each graph's exact content (context, labels, edges in order). A skipper builds
// the same graph vertex for vertex again and again: each collective step recurs in every group and micro-batch
// (MoE 8x13B under DCQCN: 18,138 graphs, about 250 distinct), and the colour refinement behind each hash was 5.5 %
// of its skip-on run. A hit is checked equal member by member, so the hash is the one finish_graph computes.
struct GraphHashCache {
    std::unordered_multimap<uint64_t, FlowConflictGraph> graphs;  // by content hash; each with its hash set
    size_t held = 0;                                              // edges, labels and bytes of context over all graphs held, in words
    // Past this many (about 50 MB), the cache starts over: a run of ever new graphs keeps it bounded.
    static constexpr size_t kMaxHeld = size_t(1) << 22;
    uint64_t hits = 0, misses = 0;
};
// finish_graph through `cache`: the same hash, computed once per distinct graph.
void finish_graph(FlowConflictGraph& g, GraphHashCache& cache);

struct MemoEntry {
    FlowConflictGraph key;
    int64_t transient_ps = 0;                     // from the key's moment until the partition was steady (or its first flow finished)
    std::vector<uint64_t> bytes;                  // per vertex: bytes acknowledged during the transient
    std::vector<double> end_rate;                 // per vertex: rate at its end, bytes per ps (the steady rate when it ended steady)
    std::vector<uint64_t> end_inflight;           // per vertex: bytes sent and not yet acknowledged at its end
    // Per vertex: bytes acknowledged and bytes in flight at the key. A replay moves a flow keyed with other
    // bytes in flight than the original had by the difference too (key_inflight_credit in skipper.cpp).
    std::vector<uint64_t> key_acked, key_inflight;
    std::vector<CcSnapshot> end_cc;               // per vertex: its congestion control's state at its end
    bool ends_steady = true;                      // false: it ended with the first completion of a flow (Wormhole §4.3)
    // A tail measured to its completions (tails.h), not a transient: per vertex, ps from the key until the
    // flow finished; `bytes` then holds what each had left to get acknowledged at the key. Not in the file.
    std::vector<int64_t> finish_ps;
};

struct MemoTable {
    std::multimap<uint64_t, MemoEntry> entries;   // by hash
    // A stored transient isomorphic to `g`; `mapping[i]` = the vertex of `g` matching stored vertex i.
    const MemoEntry* find(const FlowConflictGraph& g, std::vector<uint32_t>& mapping) const;
    // Adds `entry` unless an isomorphic key is already there; returns whether it was added.
    bool add(MemoEntry entry);
    size_t size() const { return entries.size(); }
    size_t outdated = 0;                          // rows of the file read that lack the CC state at their end or the counts at the key: not replayed
};

// The memo file: a SQLite database with one table, `wormhole_memo`. A missing file reads as empty. Rows
// written before each flow's CC state was kept (column end_cc_state) or before its counts at the key were
// (key_acked, key_inflight) are counted in `outdated` and left out: replayed with their rates alone they held
// flows at a cut DCQCN rate for milliseconds, and without the counts a replay cannot tell how far a flow's
// pipeline differed from the original's. Their transients are measured again and saved beside them.
// Throws InputError naming the file when it exists but is not a memo.
MemoTable load_memo(const std::filesystem::path& file);
// Appends the entries of `added` (created if missing); returns how many were new to the file.
size_t save_memo(const std::filesystem::path& file, const std::vector<MemoEntry>& added);

}  // namespace orrery::wormhole
