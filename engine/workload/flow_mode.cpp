#include "workload/flow_mode.h"

#include <cmath>
#include <stdexcept>

#include "common/diagnostics.h"
#include "net/packet.h"
#include "runtime/batch.h"

namespace orrery {

WireFormat wire_format(const Scenario& s) {
    WireFormat w;
    w.mtu = uint32_t(s.network.packet_payload.count);
    w.data_header = net::kDataHeaderBytes + (s.cc.algorithm == CcAlgorithm::hpcc     ? net::kIntBytes
                                             : s.cc.algorithm == CcAlgorithm::timely ? net::kTimelyTsBytes
                                                                                     : 0);
    w.ack_bytes = s.cc.algorithm == CcAlgorithm::hpcc ? net::kHpccAckBytes : net::kAckBytes;
    w.ack_interval = uint32_t(std::max(1, s.network.ack_interval_packets));
    return w;
}

FlowTimer::FlowTimer(const LlmJob& job, const Fabric& fabric, const Routes* routes, const WireFormat& wire, const WorkloadTables& tables, bool network)
    : job_(job), fabric_(fabric), routes_(routes), wire_(wire), tables_(tables), gpu_(workload_gpu(*job.workload, tables)), tail_(job.graph.size(), 0) {
    if (network && !routes) throw std::invalid_argument("FlowTimer: flow mode needs the fabric's routes");
    // Resource id = global port index: every directed port of the fabric, NVLink ports included.
    for (size_t p = 0; p < fabric.port_link.size(); ++p) net_.add_resource(double(fabric.link_rate[fabric.port_link[p]].count) / 8);
    const uint32_t world = job.graph.world;
    nvlink_out_.assign(world, kNone);
    nvlink_in_.assign(world, kNone);
    for (uint32_t r = 0; r < world && r < job.place.host.size(); ++r) {
        const NodeId h = job.place.host[r];
        for (uint32_t i = fabric.port_begin[h]; i < fabric.port_begin[h + 1]; ++i) {
            const NodeId sw = fabric.port_peer[i];
            if (fabric.node_kind[sw] != NodeKind::nvswitch) continue;
            nvlink_out_[r] = i;
            for (uint32_t j = fabric.port_begin[sw]; j < fabric.port_begin[sw + 1]; ++j)
                if (fabric.port_peer[j] == h) nvlink_in_[r] = j;
            break;
        }
        if (nvlink_out_[r] == kNone) {  // a fabric without NVSwitches: the GPU's own NVLink bandwidth
            nvlink_out_[r] = net_.add_resource(gpu_.nvlink_bytes_per_s);
            nvlink_in_[r] = net_.add_resource(gpu_.nvlink_bytes_per_s);
        }
    }
}

void FlowTimer::start_transfer(uint32_t id, int64_t t) {
    if (!routes_) throw std::logic_error("FlowTimer: a transfer on a timer built for NVLink only (the packet engine times transfers)");
    const Op& op = job_.graph.ops[id];
    const NodeId src = job_.place.host[op.rank], dst = job_.place.host[op.peer];
    const uint16_t sport = job_.source_port[job_.flow_of_op[id]], dport = kLlmDestinationPort;
    auto latency = base_latency_.find({src, dst});
    if (latency == base_latency_.end()) {
        const PathMetrics m = path_metrics(fabric_, *routes_, src, dst, wire_.mtu);
        if (m.hops < 0) throw InputError("workload", "host " + std::to_string(dst) + " cannot be reached from host " + std::to_string(src));
        latency = base_latency_.emplace(std::make_pair(src, dst), int64_t(m.delay_ns * 2 + m.tx_delay_ns) * 1000).first;
    }
    tail_[id] = latency->second;
    const double payload = double(op.bytes);
    const double packets = std::ceil(payload / wire_.mtu);
    const double data_weight = (payload + packets * wire_.data_header) / payload;
    const double ack_weight = std::ceil(packets / wire_.ack_interval) * wire_.ack_bytes / payload;
    uses_.clear();
    for (const Hop& h : flow_path(fabric_, *routes_, src, dst, sport, dport)) uses_.push_back({fabric_.port_begin[h.node] + h.port, data_weight});
    for (const Hop& h : flow_path(fabric_, *routes_, dst, src, dport, sport)) uses_.push_back({fabric_.port_begin[h.node] + h.port, ack_weight});
    net_.start(id, payload, uses_, t);
}

void FlowTimer::start_local(uint32_t id, int64_t t) {
    const Op& op = job_.graph.ops[id];
    if (op.members == UINT32_MAX || op.bytes <= 0) {  // a fixed delay (imported workloads) or nothing to move: its α-β time
        tail_[id] = op.duration;
        net_.start(id, 0, {}, t);
        return;
    }
    const std::vector<uint32_t>& members = job_.graph.member_sets[op.members];
    const int n = int(members.size());
    const AlphaBeta fit = tables_.intra_fit(job_.workload->gpu, op.local_kind, n);
    tail_[id] = op.step ? job_.place.nvlink_hop_ps : int64_t(std::llround(fit.alpha_s * 1e12));
    const double bus_bytes = double(op.bytes) * bus_factor(op.local_kind, n);
    uses_.clear();
    const bool copy = op.local_kind == CollectiveKind::send_recv;
    // The calibrated busbw is a fraction of the GPU's NVLink bandwidth (data/gpus.json); a port loads bus
    // bytes ÷ that fraction, so alone on ports of the GPU's own rate the op runs at the calibrated busbw, and
    // a faster or slower nvlink.rate scales it.
    const double weight = gpu_.nvlink_bytes_per_s / fit.bus_bytes_per_s;
    for (size_t i = 0; i < members.size(); ++i) {
        const uint32_t r = members[i];
        if (!copy || i == 0) uses_.push_back({nvlink_out_[r], weight});
        if (!copy || i + 1 == members.size()) uses_.push_back({nvlink_in_[r], weight});
    }
    net_.start(id, bus_bytes, uses_, t);
}

int64_t FlowTimer::next_time() {
    const int64_t t = net_.next_finish();
    return t == FluidNetwork::kNoFinish ? kNoTime : t;
}

void FlowTimer::complete_next(Executor& x) {
    const int64_t t = net_.next_finish();
    done_.clear();
    net_.pop_finished(done_);
    for (uint32_t op : done_) x.transfer_done(op, t + tail_[op]);
}

void FlowTimer::run(Executor& x, int64_t until) {
    for (;;) {
        const int64_t tf = next_time(), t = std::min(tf, x.next_time());
        if (t == kNoTime || (until != kNoTime && t > until)) return;
        if (tf == t) complete_next(x);
        x.advance(t);
        settle(t);
    }
}

LlmOutcome run_llm_flow(const LlmJob& job, const Fabric& fabric, const Routes& routes, const WireFormat& wire, const WorkloadTables& tables) {
    FlowTimer timer(job, fabric, &routes, wire, tables, true);
    Executor x(job.graph, job.workload->compute.overlap_slowdown, [&](uint32_t op, int64_t t) {
        timer.start_transfer(op, t);
        return t;
    });
    x.set_start_local([&](uint32_t op, int64_t t) { timer.start_local(op, t); });
    x.begin(0);
    timer.settle(0);
    timer.run(x, kNoTime);
    if (!x.finished()) throw std::logic_error("workload task graph has a cycle: " + std::to_string(x.unfinished()) + " ops never became ready");
    return summarize_llm(job, x);
}

}  // namespace orrery
