#pragma once
// The next event among a node's ports, kept in a tournament tree per node so that finding it costs
// O(1) and a port's change O(log ports), instead of a scan of every port per event (a 32-port switch
// handles each of its events against 64 candidates otherwise: half the engine's time, measured).
//
// A port has at most two events of its own: the arrival of the next packet visible in its receive ring
// and the completion of its transmission. Its leaf holds the earlier of the two under the node's tie
// order (time, then when it was scheduled, then kind, then port row: node.h); an inner entry holds the
// earlier of its two children, so the root is the node's next port event — exactly what a scan finds.
//
// The tree of a node is kept from one of its steps to the next and updated wherever a port's events change:
// a packet taken from a ring or newly visible in one it had seen empty, a transmission started (link.h) or
// completed. It is rebuilt whole only after the host wrote the node (the host may have moved events in
// between: wormhole/shift.cpp; node.h: process_node).
#include "net/state.h"

namespace orrery::net {

ORRERY_HD inline bool earlier(const PortEvent& a, const PortEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.scheduled != b.scheduled) return a.scheduled < b.scheduled;
    if (a.source != b.source) return a.source < b.source;
    return a.row < b.row;
}

// Port `row`'s own next event, from its two event columns.
ORRERY_HD inline PortEvent port_own_event(const NetView& v, uint32_t row) {
    const PortTimes& t = v.times[row];
    const PortEvent arrival{t.next_arrival, t.arrival_scheduled, row, t.next_arrival != kNever ? uint8_t(kSrcArrival) : uint8_t(kSrcNone)};
    if (t.tx_done == kNever) return arrival;
    const PortEvent done{t.tx_done, t.busy_since, row, kSrcTxDone};
    return earlier(done, arrival) ? done : arrival;
}

// Leaves per node: the node's port count rounded up to a power of two. The tree's entry 0, outside the
// tree, keeps that count in its `row` (set when the batch is compiled), next to the root.
ORRERY_HD inline uint32_t port_tree_leaves(const PortEvent* tree) { return tree[0].row; }

ORRERY_HD inline bool same(const PortEvent& a, const PortEvent& b) { return a.time == b.time && a.scheduled == b.scheduled && a.row == b.row && a.source == b.source; }

// Recomputes port `row`'s leaf and the entries above it, up to the first that comes out unchanged (the
// entries above it depend on nothing else that changed).
ORRERY_HD inline void port_event_changed(NetView& v, uint32_t node, uint32_t row) {
    PortEvent* tree = v.port_tree + v.node_tree_begin[node];
    uint32_t k = port_tree_leaves(tree) + (row - v.node_port_begin[node]);
    tree[k] = port_own_event(v, row);
    for (k /= 2; k >= 1; k /= 2) {
        const PortEvent& winner = earlier(tree[2 * k + 1], tree[2 * k]) ? tree[2 * k + 1] : tree[2 * k];
        if (same(winner, tree[k])) return;
        tree[k] = winner;
    }
}

// Every leaf of `node` from its ports' columns, then every inner entry.
ORRERY_HD inline void port_events_build(NetView& v, uint32_t node) {
    PortEvent* tree = v.port_tree + v.node_tree_begin[node];
    const uint32_t leaves = port_tree_leaves(tree);
    const uint32_t first = v.node_port_begin[node], ports = v.node_port_begin[node + 1] - first;
    for (uint32_t i = 0; i < leaves; ++i) tree[leaves + i] = i < ports ? port_own_event(v, first + i) : PortEvent{kNever, kNever, kNoRow, kSrcNone};
    for (uint32_t k = leaves - 1; k >= 1; --k) tree[k] = earlier(tree[2 * k + 1], tree[2 * k]) ? tree[2 * k + 1] : tree[2 * k];
}

// The node's next port event (time kNever when none).
ORRERY_HD inline const PortEvent& port_events_first(const NetView& v, uint32_t node) { return v.port_tree[v.node_tree_begin[node] + 1]; }

}  // namespace orrery::net
