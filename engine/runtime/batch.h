#pragma once
// A batch: the tables of every experiment of a sweep, laid out one after the other. compile_batch builds
// them from scenarios; the runners (cpu_runner) step them; the view hands the systems raw pointers.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/state.h"
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
    SkippingSpec skipping;          // steady-state skipping (engine/wormhole)
};

struct Batch {
    std::vector<ExperimentSlice> experiments;
    // experiments
    std::vector<net::ExperimentParams> params;
    // nodes
    std::vector<uint32_t> node_experiment;
    std::vector<uint8_t> node_role;
    std::vector<uint32_t> node_fabric_id;      // the node's id inside its experiment's fabric
    std::vector<uint32_t> node_port_begin;     // size nodes + 1
    std::vector<net::NicState> nic;
    std::vector<net::SwitchMmu> sw;
    std::vector<net::NodeOutput> out;
    // Per-node storage the tables point into, each grown on its own before a step when it needs to:
    std::vector<std::unique_ptr<net::PfcEvent[]>> node_events;  // PFC events received in a step
    std::vector<std::unique_ptr<net::Packet[]>> node_pool;      // switch packet pools
    std::vector<std::unique_ptr<uint32_t[]>> node_pool_next;
    std::vector<std::unique_ptr<net::Packet[]>> node_acks;      // NIC ACK queues
    // ports
    std::vector<net::PortInfo> port;
    std::vector<double> port_loss;       // per port: loss probability of what arrives at it (link error rate)
    std::vector<net::Ring> ring;
    std::vector<net::RingTail> ring_tail;
    std::vector<net::RingHead> ring_head;
    std::vector<std::unique_ptr<net::Packet[]>> ring_slots;  // per port: its ring's storage, uninitialized until used
    std::vector<uint32_t> ring_grow_to;  // per port: the capacity plan_node_buffers wants for its ring, 0 for none
    std::vector<net::PortTx> tx;
    std::vector<int64_t> next_arrival, next_arrival_scheduled, tx_done;  // by port: the event columns of node.h
    std::vector<net::PortEvent> port_tree;       // per node: the tournament tree over its ports (port_events.h)
    std::vector<uint32_t> node_tree_begin;       // size nodes + 1
    std::vector<net::PortQueues> queues;
    std::vector<net::PortMmu> mmu;
    std::vector<std::vector<uint32_t>> qlen_hist;  // per experiment, allocated when its monitor starts
    std::vector<uint32_t*> qlen_ptr;
    std::vector<uint32_t> qlen_offset, qlen_buckets;

    // spraying: routing tables of the experiments that spray
    std::vector<uint32_t> node_forwarder, node_dest_group, spray_set, set_begin{0};
    std::vector<uint16_t> set_ports;
    // flows
    std::vector<net::FlowInfo> flow;
    std::vector<uint16_t> path_ports;
    std::vector<net::QpState> qp;
    std::vector<net::RxState> rx;
    std::vector<net::DcqcnState> dcqcn;
    std::vector<net::HpccState> hpcc;
    std::vector<net::TimelyState> timely;
    std::vector<net::DctcpState> dctcp;
    std::vector<uint32_t> nic_qps, nic_starts;
    // per experiment with skipping on: flows released since its skipper last looked (release_flow appends)
    std::vector<std::vector<uint32_t>> released;


    net::NetView view();
    size_t memory_bytes() const;
    // Experiment e's share: its rows of every per-node, per-port and per-flow column (routing sets and paths
    // by its share of nodes and flows) and the storage it grew (rings, pools, ACK and PFC event buffers,
    // queue histogram). The experiments' shares add up to memory_bytes() but for the per-experiment rows.
    size_t experiment_memory_bytes(uint32_t e) const;
};

// Throws InputError when an experiment cannot be simulated (a host with two network ports, a zero link
// delay, a flow between unreachable hosts, no ECN threshold for a port rate).
Batch compile_batch(const std::vector<ExperimentInput>& inputs);

// Before a step, the buffers that what can arrive in it would overflow are grown: every packet that can
// arrive in the next step is already in the receive rings (the lookahead is at most a link's delay).
// `step` is the step just finished; `next_end` is the end of the experiment's next step (or later: it only
// bounds what can arrive). The view reaches the storage through pointer tables: no rebuild needed.
//
// plan_node_buffers grows node n's own switch pool or NIC ACK queue and PFC event buffer, and sets
// ring_grow_to for the receive rings n writes that must grow; it returns whether any must. It reads other
// nodes' rings but reallocates none, so threads may plan different nodes at once, each with its own scratch.
// grow_node_rings then reallocates the rings n's plan marked: no plan may run on other threads meanwhile.
struct PlanScratch {
    std::vector<uint64_t> arriving;  // by local port: packets its receive ring brings in the next step
    std::vector<uint32_t> routed;    // by local port: of all arrivals at the switch, those leaving by it
};
bool plan_node_buffers(Batch& b, uint32_t n, uint64_t step, int64_t next_end, PlanScratch& scratch);
void grow_node_rings(Batch& b, uint32_t n);
// Both, for every node of experiment e, on the calling thread. Touches only that experiment's arrays.
void grow_buffers(Batch& b, uint32_t e, uint64_t step, int64_t next_end);

// The reference's standalone FCT of `size` payload bytes on a path: its base RTT plus the wire bytes (48 B of
// header per packet, no INT) at the path's bottleneck rate, in integer ns.
uint64_t standalone_fct_ns(const PathMetrics& m, uint64_t size, uint32_t mtu);

// Sets the start of a flow compiled with no start (kNever) and puts it in its NIC's start order (by start,
// then by release). `start` must not be before the experiment's clock.
void release_flow(Batch& b, uint32_t flow, int64_t start);

// Allocates experiment e's queue-monitor histograms (one 1 KB bucket per KB of switch buffer, per port).
void allocate_queue_monitor(Batch& b, uint32_t e);

}  // namespace orrery
