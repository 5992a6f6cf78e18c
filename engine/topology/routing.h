#pragma once
// Shortest-path routing by hop count with ECMP next-hop sets, stored per destination group.
//
// Hosts that attach to the same set of switches share every route except the last hop, so tables are kept
// per (forwarding node, destination group) — a k = 60 fat-tree has 1,800 groups instead of 54,000 hosts.
// Next-hop sets are interned: each table cell holds the id of a set of local ports, in increasing port
// order, which is the reference's candidate order for its hash (reference/ns3-hpcc README §8).
// NVSwitch links carry intra-server traffic only and take no part in network routing.
#include <cstdint>
#include <vector>

#include "topology/ecmp_hash.h"
#include "topology/fabric.h"

namespace orrery {

struct Routes {
    uint32_t group_count = 0;
    uint32_t forwarder_count = 0;
    std::vector<uint32_t> host_group;     // per node: destination group of a host, kNone otherwise
    std::vector<uint32_t> forwarder_row;  // per node: row in the tables, kNone for nodes that do not forward
    std::vector<uint8_t> hops;            // [row·groups + g]: hops to the group's attachment switches; kUnreachable
    std::vector<uint32_t> hop_set;        // [row·groups + g]: next-hop set id, or kDeliver at an attachment switch
    std::vector<uint32_t> set_begin;      // set s holds set_ports[set_begin[s] .. set_begin[s+1])
    std::vector<uint16_t> set_ports;      // local port indices
    std::vector<uint32_t> set_weights;    // beside set_ports: each port's weight (weight_by_capacity); empty: all equal
    static constexpr uint8_t kUnreachable = 0xff;
    static constexpr uint32_t kDeliver = 0xfffffffeu;
};

// worker_count: threads that search the groups, 0 to choose by their number and the machine's cores. The tables
// are the same for every count. `link_down` (by link, 1 = failed): links between forwarders that routing leaves
// out; a host's links always count (a host cut off is reached through them and lost there: net/switch.h), so
// the destination groups are the same whatever fails.
Routes build_routes(const Fabric& f, unsigned worker_count = 0, const std::vector<uint8_t>* link_down = nullptr);
size_t memory_bytes(const Routes& r);

// Weighted ECMP (network.routing.weights "capacity"): each next hop's weight is its link's rate scaled by the
// share of what leads into the next node toward the group that the node can carry on (its own next hops'
// weights summed, over the rates of the links into it that route to the group through it), found nearest to
// the group first. On a symmetric fabric every weight is equal and normalized to 1, so choices are ECMP's; a
// slower uplink, or a switch beyond that lost links (routes built around them), gets less. Sets are interned
// again by ports and weights.
void weight_by_capacity(const Fabric& f, Routes& r);

// The routing a run forwards by while the links `down` marks (1 each) are down: around them (none marked, or
// null: `healthy` when given, else the fabric's own routes), weighted by capacity when asked. The packet level's
// compile and the levels without packets both take it, at the start and after each failure or repair.
Routes routes_around(const Fabric& f, const std::vector<uint8_t>* down, bool capacity_weights, const Routes* healthy = nullptr);

// The weights of `node`'s next hops toward host `dst`, beside the ports next_hops lists; nullptr when they are
// equal (routes not weighted, a host, or delivery to dst).
const uint32_t* next_hop_weights(const Routes& r, NodeId node, NodeId dst);



// The equal-cost egress ports of `node` toward host `dst`, in increasing port order (local indices).
// Empty when node is dst or dst cannot be reached from node.
std::vector<uint32_t> next_hops(const Fabric& f, const Routes& r, NodeId node, NodeId dst);
// The same into `out` (cleared first), reusing its storage: the walks below take one such list per hop.
void next_hops(const Fabric& f, const Routes& r, NodeId node, NodeId dst, std::vector<uint32_t>& out);

// Hop count of the shortest path from host src to host dst, or -1 when unreachable.
int path_length(const Fabric& f, const Routes& r, NodeId src, NodeId dst);

struct Hop {
    NodeId node;    // the node that transmits
    uint32_t port;  // its local egress port
};
// The path of a flow as the reference picks it: at every node with several candidates,
// candidate[ecmp_hash(sip, dip, sport, dport, seed = node id) % n]. Empty when unreachable.
std::vector<Hop> flow_path(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint16_t sport, uint16_t dport);
// The same into `path` (cleared first; false and empty when unreachable), `candidates` its scratch: compile_batch
// walks two paths a flow (MoE 8x13B: 512,000), and a list allocated per hop and per path was 3 % of a skip-on run.
bool flow_path(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint16_t sport, uint16_t dport, std::vector<Hop>& path,
               std::vector<uint32_t>& candidates);

struct PathMetrics {
    uint64_t delay_ns = 0, tx_delay_ns = 0, min_bw = UINT64_MAX;
    int hops = 0;                 // -1: unreachable
};
// The reference's pairDelay / pairTxDelay / pairBw along one shortest path (reference/ns3-hpcc README §2):
// propagation delays, one `mtu`-byte serialization per hop (integer ns), and the smallest rate.
PathMetrics path_metrics(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint32_t mtu);

// The same figures for many sources toward one destination (compile_batch's largest RTT and BDP over a k = 60
// fat-tree's 1,800 × 1,800 destination-group pairs: 3.2 M walks of six hops). A forwarder's path toward dst
// depends on nothing else, so each forwarder's remainder is followed once per destination and kept in the memo,
// which belongs to one fabric, routes and mtu (it starts over when they or dst change). Pair for pair the same as
// the walk above: sums of the same integers per link.
struct PathMemo {
    const Routes* routes = nullptr;
    NodeId dst = kNone;
    uint32_t mtu = 0;
    uint32_t generation = 0;
    std::vector<uint32_t> stamp;      // per forwarder row: == generation when `known` holds its metrics toward dst
    std::vector<PathMetrics> known;
    std::vector<std::pair<NodeId, uint32_t>> walk;  // scratch: the hops (node, global port) not yet known
    std::vector<uint32_t> candidates;               // scratch: next_hops
};
PathMetrics path_metrics(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint32_t mtu, PathMemo& memo);

}  // namespace orrery
