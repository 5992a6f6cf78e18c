#pragma once
// The fabric: nodes, full-duplex links and the ports they make, as plain columns.
//
// Port numbering follows the reference (HPCC ns-3): every node numbers its ports in the order its links
// were added, starting at 0 here (the reference's ifindex is port + 1, ifindex 0 being its loopback).
#include <cstdint>
#include <string>
#include <vector>

#include "common/units.h"

namespace orrery {

using NodeId = uint32_t;
using LinkId = uint32_t;
inline constexpr uint32_t kNone = 0xffffffffu;

// The numeric values are SimAI's node types (0 host, 1 switch, 2 NVSwitch), so files map one to one.
enum class NodeKind : uint8_t { host = 0, network_switch = 1, nvswitch = 2 };

const char* node_kind_name(NodeKind kind);

struct Fabric {
    std::string name;                    // generator spec or file it came from (for reports)
    std::string gpu_type;                // from SimAI topology files ("H100"); empty when unknown
    int gpus_per_server = 0;             // NVLink domain size; 0 when the fabric has no server grouping
    bool hosts_forward = false;          // ASTRA-sim Ring/FullyConnected NPUs forward traffic; RDMA NICs do not
    // SimAI topology files: an NVSwitch link's rate is the bus bandwidth a collective inside the server reaches,
    // with no latency term, as SimAI times it. Elsewhere it is the GPU's raw NVLink bandwidth, of which
    // collectives reach the calibrated fraction of data/intra_server.json (engine/workload README).
    bool nvlink_rate_is_bus_bandwidth = false;

    // Nodes. Written by the builder, read by routing, the engine and exporters.
    std::vector<NodeKind> node_kind;
    std::vector<uint8_t> node_tier;      // 0 host or NVSwitch, 1 leaf/ToR, 2 spine/aggregation, 3 core
    std::vector<int32_t> node_server;    // server (NVLink domain) index of hosts and NVSwitches; -1 elsewhere
    std::vector<int32_t> node_group;     // pod (fat-tree), rail (rail-optimized) or -1: for levels of detail

    // Links, full duplex: the same rate and delay both ways.
    std::vector<NodeId> link_a, link_b;
    std::vector<BitsPerSecond> link_rate;
    std::vector<Picoseconds> link_delay; // one-way propagation delay
    std::vector<double> link_error_rate; // per-packet loss probability at the receiver (0 = none)

    // Ports in CSR form: node n owns ports [port_begin[n], port_begin[n+1]). Built by finalize_ports().
    std::vector<uint32_t> port_begin;
    std::vector<LinkId> port_link;
    std::vector<NodeId> port_peer;

    size_t node_count() const { return node_kind.size(); }
    size_t link_count() const { return link_a.size(); }
    uint32_t port_count(NodeId n) const { return port_begin[n + 1] - port_begin[n]; }
    size_t count(NodeKind kind) const;
    bool is_host(NodeId n) const { return node_kind[n] == NodeKind::host; }
};

// Appends nodes and links; finalize_ports() must run after the last link.
NodeId add_node(Fabric& f, NodeKind kind, uint8_t tier, int32_t server = -1, int32_t group = -1);
LinkId add_link(Fabric& f, NodeId a, NodeId b, BitsPerSecond rate, Picoseconds delay, double error_rate = 0.0);
void finalize_ports(Fabric& f);

// Sets node_tier of switches to their hop distance from the nearest host (1 = leaf), for imported fabrics
// whose files carry no tiers. NVSwitches stay at tier 0.
void infer_tiers(Fabric& f);

// Structural checks every fabric must pass: no self-loops, positive rates, no host without a link.
// Returns messages naming the node or link; empty when the fabric is sound.
std::vector<std::string> check_fabric(const Fabric& f);

// Reference addressing: node i has IP 11.(i/256).(i%256).1.
constexpr uint32_t node_ip(NodeId id) { return 0x0b000001u + (id / 256) * 0x10000u + (id % 256) * 0x100u; }
constexpr NodeId ip_node(uint32_t ip) { return (ip >> 8) & 0xffffu; }

}  // namespace orrery
