#pragma once
// The flow-level network of an LLM job (network_mode "flow"): every network transfer is a fluid flow on
// the path the packet level routes it (ECMP by the same 5-tuple hash, source ports as llm_flows assigns
// them; with spraying, adaptive routing or flowlets spread over its equal-cost paths, topology/path_split.h),
// its ACKs a flow on the reverse path; every intra-server op loads the NVLink ports of its GPUs
// (the host–NVSwitch links of the fabric, whose rate is the scenario's nvlink.rate). Rates are max-min
// fair over all of it (workload/fluid.h).
//
// What a transfer costs: its wire bytes (payload + the data header per packet, as the packet level
// sends them) on every port of its path, ACK bytes on the reverse path, then the path's base latency
// (propagation both ways + one packet's serialization per hop) once it has drained — alone on its path
// it takes exactly the reference's standalone FCT. An intra-server op of n GPUs puts its bus bytes
// (NCCL's busbw factor × bytes) on each member's NVLink out and in ports, weighted by the GPU's NVLink
// bandwidth (data/gpus.json) / calibrated bus bandwidth (data/intra_server.json), then adds the calibrated
// α (a move inside a larger collective: NVLink propagation instead): alone on GPUs whose nvlink.rate is
// the GPU's own it takes exactly its α-β time, concurrent ops on the same GPUs share the ports, and
// another nvlink.rate scales the bandwidth. Unset, nvlink.rate is the GPU's own (scenario/load.cpp).
//
// The packet driver uses the same class for intra-server ops only (network = false).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "topology/fabric.h"
#include "topology/path_split.h"
#include "topology/routing.h"
#include "workload/execute.h"
#include "workload/flow_network.h"
#include "workload/fluid.h"
#include "workload/llm_job.h"

namespace orrery {

// Per-packet overheads of the congestion control in use (net/packet.h): data header, ACK size.
struct WireFormat {
    uint32_t mtu = 1000;                  // payload bytes per packet
    uint32_t data_header = 48;
    uint32_t ack_bytes = 60;
    uint32_t ack_interval = 1;            // packets per ACK
};

// The scenario's payload size, ACK interval and its congestion control's header sizes.
WireFormat wire_format(const Scenario& s);

class FlowTimer {
public:
    // `network`: time transfers too (flow mode); otherwise only local ops (the packet driver).
    // `split`: each transfer spreads over its equal-cost paths (path_split: spraying, adaptive routing and flowlets
    // at the flow level) instead of taking its ECMP path.
    FlowTimer(const LlmJob& job, const Fabric& fabric, const Routes* routes, const WireFormat& wire, const WorkloadTables& tables, bool network,
              bool split = false);

    void start_transfer(uint32_t op, int64_t t);
    void start_local(uint32_t op, int64_t t);
    // The next time a drained flow hands an op back (ps), kNoTime when none.
    int64_t next_time();
    // Every flow that drains at next_time() is reported to `x` as done (after its latency tail).
    void complete_next(Executor& x);
    // Rates follow the flows started and finished so far; call after the executor has run up to `now`.
    void settle(int64_t now) { net_.settle(now); }
    // The fabric's changes during the run, in time order.
    void set_changes(std::vector<FlowFabricChange> changes) { changes_ = std::move(changes); }
    // Runs the executor's events and this timer's drains in time order up to `until` (inclusive): a drained
    // op hands its successors on, which may start flows here. kNoTime: until neither has anything left.
    void run(Executor& x, int64_t until);

    const FluidNetwork& network() const { return net_; }

private:
    const LlmJob& job_;
    const Fabric& fabric_;
    const Routes* routes_;
    WireFormat wire_;
    const WorkloadTables& tables_;
    const GpuSpec& gpu_;
    bool split_ = false;
    FluidNetwork net_;
    std::vector<uint32_t> nvlink_out_, nvlink_in_;  // per rank: its NVLink port resources
    std::vector<int64_t> tail_;                     // per op started: the latency after it drains (ps)
    std::map<std::pair<uint32_t, uint32_t>, int64_t> base_latency_;  // per host pair (ps)
    std::vector<FluidUse> uses_;
    std::vector<uint32_t> done_;
    std::vector<FlowFabricChange> changes_;
    size_t next_change_ = 0;
    std::vector<uint32_t> zero_ports_;              // port resources of no capacity now (links down)
    std::map<uint32_t, uint32_t> lockstep_variant_; // per lockstep op started: its source-port variant
    void apply_change(const FlowFabricChange& c, int64_t t);
    double transfer_uses(uint32_t op);             // fills uses_ and tail_[op]; returns the payload
    double lockstep_uses(uint32_t op, uint32_t variant);

    // Lockstep transfers: per pair set and source-port choice, how many of its pairs cross each port — data,
    // ACK (network pairs) and NVLink (pairs inside one server) — and each pair's latency after it drains.
    // The packet level gives every flow of a host pair the next source port, so successive transfers of a
    // pair take other ECMP paths; a lockstep transfer takes the set's kPortVariants-th next port, and a
    // ring (whose steps are successive flows) spreads its bytes over all kPortVariants ports.
    static constexpr uint32_t kPortVariants = 8;
    struct PairLoad {
        bool ready = false;
        std::vector<std::pair<uint32_t, double>> data, ack, nvlink;    // (resource, pairs; summed over the ports used; split: shares)
        uint32_t ports = 1;                                            // source ports the counts add up over
        std::vector<int64_t> tail;                                     // per pair: its latency after draining
        std::map<uint32_t, int64_t> tail_of_steps;                     // steps → the set's latency (lockstep_cost)
    };
    PairLoad& pair_load(uint32_t pair_set, uint32_t variant);  // variant kPortVariants: all ports at once
    int64_t path_latency(NodeId src, NodeId dst);
    std::map<std::pair<uint32_t, uint32_t>, PairLoad> pair_loads_;
    std::vector<uint32_t> set_uses_;  // per pair set: lockstep transfers started on it so far
    std::vector<double> port_count_;  // scratch: per resource, pairs (or shares of pairs) counted so far
    std::vector<std::pair<uint32_t, double>> shares_;  // scratch: path_split's shares
    void start_lockstep(uint32_t op, int64_t t);
};

// Runs the job with every transfer and intra-server op on the flow-level network.
// `watch`, when set, is called at every multiple of `watch_pace_ps` of simulated time that the run passes with
// work left (and once at its end), with the executor as it stands: what has finished by then (a run writes its
// timeline as it goes). It changes nothing the run computes.
// `split`: transfers spread over their equal-cost paths (FlowTimer).
LlmOutcome run_llm_flow(const LlmJob& job, const Fabric& fabric, const Routes& routes, const WireFormat& wire, const WorkloadTables& tables,
                        const std::function<void(const Executor&)>& watch = {}, int64_t watch_pace_ps = 0, bool split = false,
                        std::vector<FlowFabricChange> changes = {}, const Summarize& summarize = {});

}  // namespace orrery
