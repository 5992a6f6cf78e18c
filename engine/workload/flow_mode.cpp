#include "workload/flow_mode.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/diagnostics.h"
#include "net/packet.h"
#include "runtime/batch.h"

namespace orrery {

WireFormat wire_format(const Scenario& s) {
    WireFormat w;
    w.mtu = uint32_t(s.network.packet_payload.count);
    net::ExperimentParams packets;  // what the CC's packets carry, as the packet level sends them
    packets.cc_mode = uint8_t(s.cc.algorithm);
    net::set_cc_packet_fields(packets);
    w.data_header = packets.data_header;
    w.ack_bytes = packets.ack_wire;
    w.ack_interval = uint32_t(std::max(1, s.network.ack_interval_packets));
    return w;
}

FlowTimer::FlowTimer(const LlmJob& job, const Fabric& fabric, const Routes* routes, const WireFormat& wire, const WorkloadTables& tables, bool network,
                     bool split)
    : job_(job), fabric_(fabric), routes_(routes), wire_(wire), tables_(tables), gpu_(workload_gpu(*job.workload, tables)), split_(split),
      tail_(job.graph.size(), 0) {
    if (network && !routes) throw std::invalid_argument("FlowTimer: flow mode needs the fabric's routes");
    // Resource id = global port index: every directed port of the fabric, NVLink ports included.
    for (size_t p = 0; p < fabric.port_link.size(); ++p) net_.add_resource(double(fabric.link_rate[fabric.port_link[p]].count) / 8);
    const uint32_t world = uint32_t(job.place.host.size());  // ranks (a lockstep graph's ops run on lanes)
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

int64_t FlowTimer::path_latency(NodeId src, NodeId dst) {
    auto latency = base_latency_.find({src, dst});
    if (latency == base_latency_.end()) {
        const PathMetrics m = path_metrics(fabric_, *routes_, src, dst, wire_.mtu);
        if (m.hops < 0) throw InputError("workload", "host " + std::to_string(dst) + " cannot be reached from host " + std::to_string(src));
        latency = base_latency_.emplace(std::make_pair(src, dst), int64_t(m.delay_ns * 2 + m.tx_delay_ns) * 1000).first;
    }
    return latency->second;
}

FlowTimer::PairLoad& FlowTimer::pair_load(uint32_t set, uint32_t variant) {
    PairLoad& load = pair_loads_[{set, variant}];
    if (load.ready) return load;
    const PairSet& ps = job_.graph.pair_sets[set];
    const uint32_t first = variant == kPortVariants ? 0 : variant, last = variant == kPortVariants ? kPortVariants : variant + 1;
    load.ports = last - first;
    const uint16_t dport = kLlmDestinationPort;
    // Pairs per port, counted in three scratch columns (a port may carry one pair's data, another's ACKs).
    port_count_.resize(3 * net_.resources(), 0);
    const size_t res = net_.resources();
    auto count = [&](std::vector<std::pair<uint32_t, double>>& into, size_t column, uint32_t resource, double amount = 1.0) {
        if (port_count_[column * res + resource] == 0) into.emplace_back(resource, 0);
        port_count_[column * res + resource] += amount;
    };
    for (const RankPair& pr : ps.pairs) {
        const NodeId src = job_.place.host[pr.first], dst = job_.place.host[pr.second];
        if (job_.place.server[pr.first] == job_.place.server[pr.second]) {
            count(load.nvlink, 2, nvlink_out_[pr.first]);
            count(load.nvlink, 2, nvlink_in_[pr.second]);
            load.tail.push_back(job_.place.nvlink_hop_ps);
            continue;
        }
        load.tail.push_back(path_latency(src, dst));
        for (uint32_t v = first; v < last; ++v) {
            if (split_) {  // every source port spreads alike
                path_split(fabric_, *routes_, src, dst, shares_);
                for (const auto& [port, share] : shares_) count(load.data, 0, port, share);
                path_split(fabric_, *routes_, dst, src, shares_);
                for (const auto& [port, share] : shares_) count(load.ack, 1, port, share);
                continue;
            }
            const uint16_t sport = uint16_t(10000 + (ps.label * kPortVariants + v) % 50000);
            for (const Hop& h : flow_path(fabric_, *routes_, src, dst, sport, dport)) count(load.data, 0, fabric_.port_begin[h.node] + h.port);
            for (const Hop& h : flow_path(fabric_, *routes_, dst, src, dport, sport)) count(load.ack, 1, fabric_.port_begin[h.node] + h.port);
        }
    }
    size_t column = 0;
    for (auto* list : {&load.data, &load.ack, &load.nvlink}) {
        for (auto& [resource, n] : *list) n = std::exchange(port_count_[column * res + resource], 0.0);
        ++column;
    }
    load.ready = true;
    return load;
}

// A lockstep transfer: every pair moves `bytes` (in `steps` steps), all at one rate — one fluid flow that
// loads each port by the pairs crossing it — then its latency: the slowest pair's per step, or a ring's
// path back through its members (lockstep_cost).
void FlowTimer::start_lockstep(uint32_t id, int64_t t) {
    const Op& op = job_.graph.ops[id];
    if (set_uses_.size() < job_.graph.pair_sets.size()) set_uses_.resize(job_.graph.pair_sets.size(), 0);
    const uint32_t variant = op.steps > 1 ? kPortVariants : set_uses_[op.pairs]++ % kPortVariants;
    if (!changes_.empty()) lockstep_variant_[id] = variant;
    net_.start(id, lockstep_uses(id, variant), uses_, t);
}

double FlowTimer::lockstep_uses(uint32_t id, uint32_t variant) {
    const Op& op = job_.graph.ops[id];
    PairLoad& load = pair_load(op.pairs, variant);
    const double payload = double(op.bytes);
    const double step = payload / op.steps;
    const double packets = std::ceil(step / wire_.mtu);
    const double data_weight = (step + packets * wire_.data_header) / step;
    const double ack_weight = std::ceil(packets / wire_.ack_interval) * wire_.ack_bytes / step;
    const AlphaBeta copy = gpu_nvlink_fit(tables_, job_.workload->gpu, job_.place, CollectiveKind::send_recv, 2);
    const double nvlink_weight = gpu_.nvlink_bytes_per_s / copy.bus_bytes_per_s * bus_factor(CollectiveKind::send_recv, 2);
    uses_.clear();
    for (const auto& [resource, n] : load.data) uses_.push_back({resource, data_weight * n / load.ports});
    for (const auto& [resource, n] : load.ack) uses_.push_back({resource, ack_weight * n / load.ports});
    for (const auto& [resource, n] : load.nvlink) uses_.push_back({resource, nvlink_weight * n});
    const PairSet& set = job_.graph.pair_sets[op.pairs];
    const uint32_t path = uint32_t(op.steps + lockstep_pieces(set, op, job_.workload_of(op.rank).collectives.chunk.count) - 1);
    auto tail = load.tail_of_steps.find(path);
    if (tail == load.tail_of_steps.end()) tail = load.tail_of_steps.emplace(path, lockstep_cost(set, load.tail, path)).first;
    tail_[id] = tail->second;
    return payload;
}

void FlowTimer::start_transfer(uint32_t id, int64_t t) {
    if (!routes_) throw std::logic_error("FlowTimer: a transfer on a timer built for NVLink only (the packet engine times transfers)");
    const Op& op = job_.graph.ops[id];
    if (op.pairs != UINT32_MAX) return start_lockstep(id, t);
    net_.start(id, transfer_uses(id), uses_, t);
}

double FlowTimer::transfer_uses(uint32_t id) {
    const Op& op = job_.graph.ops[id];
    const NodeId src = job_.place.host[op.rank], dst = job_.place.host[op.peer];
    const uint16_t sport = job_.source_port[job_.flow_of_op[id]], dport = kLlmDestinationPort;
    tail_[id] = path_latency(src, dst);
    const double payload = double(op.bytes);
    const double packets = std::ceil(payload / wire_.mtu);
    const double data_weight = (payload + packets * wire_.data_header) / payload;
    const double ack_weight = std::ceil(packets / wire_.ack_interval) * wire_.ack_bytes / payload;
    uses_.clear();
    if (split_) {
        path_split(fabric_, *routes_, src, dst, shares_);
        for (const auto& [port, share] : shares_) uses_.push_back({port, data_weight * share});
        path_split(fabric_, *routes_, dst, src, shares_);
        for (const auto& [port, share] : shares_) uses_.push_back({port, ack_weight * share});
    } else {
        for (const Hop& h : flow_path(fabric_, *routes_, src, dst, sport, dport)) uses_.push_back({fabric_.port_begin[h.node] + h.port, data_weight});
        for (const Hop& h : flow_path(fabric_, *routes_, dst, src, dport, sport)) uses_.push_back({fabric_.port_begin[h.node] + h.port, ack_weight});
    }
    return payload;
}

// Capacities change at once; new routes move every transfer that crosses a link down onto its new path, and
// later transfers take them (the per-pair caches are of the old routes).
void FlowTimer::apply_change(const FlowFabricChange& c, int64_t t) {
    for (const auto& [link, bytes_per_s] : c.link_bytes_per_s)
        for (size_t p = 0; p < fabric_.port_link.size(); ++p) {
            if (fabric_.port_link[p] != link) continue;
            net_.set_capacity(uint32_t(p), bytes_per_s);
            auto at = std::find(zero_ports_.begin(), zero_ports_.end(), uint32_t(p));
            if (bytes_per_s <= 0 && at == zero_ports_.end()) zero_ports_.push_back(uint32_t(p));
            if (bytes_per_s > 0 && at != zero_ports_.end()) zero_ports_.erase(at);
        }
    if (!c.routes) return;
    routes_ = c.routes.get();
    pair_loads_.clear();
    base_latency_.clear();
    std::vector<uint32_t> stalled;
    for (uint32_t p : zero_ports_)
        for (uint32_t op : net_.tags_on(p)) stalled.push_back(op);
    std::sort(stalled.begin(), stalled.end());
    stalled.erase(std::unique(stalled.begin(), stalled.end()), stalled.end());
    for (uint32_t id : stalled) {
        const Op& op = job_.graph.ops[id];
        if (op.pairs != UINT32_MAX) lockstep_uses(id, lockstep_variant_.at(id));
        else transfer_uses(id);
        net_.reroute(id, uses_, t);
    }
}

void FlowTimer::start_local(uint32_t id, int64_t t) {
    const Op& op = job_.graph.ops[id];
    if (op.members == UINT32_MAX || op.bytes <= 0) {  // a fixed delay (imported workloads) or nothing to move: its α-β time
        tail_[id] = op.duration;
        net_.start(id, 0, {}, t);
        return;
    }
    const std::vector<uint32_t>& members = job_.graph.member_sets[op.members];
    const int n = int(op.group_size > 0 ? op.group_size : members.size());
    const AlphaBeta fit = gpu_nvlink_fit(tables_, job_.workload->gpu, job_.place, op.local_kind, n);
    tail_[id] = op.step ? job_.place.nvlink_hop_ps : int64_t(std::llround(fit.alpha_s * 1e12));
    const double bus_bytes = double(op.bytes) * bus_factor(op.local_kind, n);
    uses_.clear();
    const bool copy = op.local_kind == CollectiveKind::send_recv;
    // The fit's busbw is a fraction of the GPU's NVLink bandwidth; a port loads bus bytes ÷ that fraction, so alone
    // on ports of the GPU's own rate the op runs at the fit's busbw, and a faster or slower nvlink.rate scales it.
    const double weight = gpu_.nvlink_bytes_per_s / fit.bus_bytes_per_s;
    for (size_t i = 0; i < members.size(); ++i) {  // a lockstep op: every group of group_size members alike
        const uint32_t r = members[i];
        const size_t at = i % size_t(n), last = size_t(n) - 1;
        if (!copy || at == 0) uses_.push_back({nvlink_out_[r], weight});
        if (!copy || at == last) uses_.push_back({nvlink_in_[r], weight});
    }
    net_.start(id, bus_bytes, uses_, t);
}

int64_t FlowTimer::next_time() {
    const int64_t f = net_.next_finish();
    const int64_t t = f == FluidNetwork::kNoFinish ? kNoTime : f;
    // A transfer stalled on a failed link waits for the next change.
    return next_change_ < changes_.size() && net_.active() > 0 ? std::min(t, changes_[next_change_].at) : t;
}

void FlowTimer::complete_next(Executor& x) {
    const int64_t t = net_.next_finish();
    done_.clear();
    net_.pop_finished(done_);
    for (uint32_t op : done_) x.transfer_done(op, t + tail_[op]);
}

void FlowTimer::run(Executor& x, int64_t until) {
    for (;;) {
        const int64_t finish = net_.next_finish();
        const int64_t tf = finish == FluidNetwork::kNoFinish ? kNoTime : finish, tx = x.next_time();
        // A change matters while something is left to happen: after the job's last op the run is over.
        const int64_t tc = next_change_ < changes_.size() && (net_.active() > 0 || tx != kNoTime) ? changes_[next_change_].at : kNoTime;
        const int64_t t = std::min({tf, tx, tc});
        if (t == kNoTime || (until != kNoTime && t > until)) return;
        if (tc == t) {
            apply_change(changes_[next_change_++], t);
            settle(t);
            continue;
        }
        if (tf == t) complete_next(x);
        x.advance(t);
        settle(t);
    }
}

LlmOutcome run_llm_flow(const LlmJob& job, const Fabric& fabric, const Routes& routes, const WireFormat& wire, const WorkloadTables& tables,
                        const std::function<void(const Executor&)>& watch, int64_t watch_pace_ps, bool split,
                        std::vector<FlowFabricChange> changes, const Summarize& summarize) {
    FlowTimer timer(job, fabric, &routes, wire, tables, true, split);
    timer.set_changes(std::move(changes));
    Executor x(job.graph, job.workload->compute.overlap_slowdown, [&](uint32_t op, int64_t t) {
        timer.start_transfer(op, t);
        return t;
    });
    x.set_start_local([&](uint32_t op, int64_t t) { timer.start_local(op, t); });
    x.begin(0);
    timer.settle(0);
    if (watch && watch_pace_ps > 0) {
        // In pieces that end at multiples of the pace; an idle stretch is crossed in one piece.
        for (;;) {
            const int64_t next = std::min(timer.next_time(), x.next_time());
            if (next == kNoTime) break;
            timer.run(x, (next / watch_pace_ps + 1) * watch_pace_ps - 1);
            watch(x);
        }
    } else {
        timer.run(x, kNoTime);
        if (watch) watch(x);
    }
    if (!x.finished() && timer.network().active() > 0)
        throw InputError("topology.events", std::to_string(timer.network().active()) + " transfers were left on links that stayed down (a host's own link, "
                                            "or no other path to their destination): the job cannot finish on this fabric");
    if (!x.finished()) throw std::logic_error("workload task graph has a cycle: " + std::to_string(x.unfinished()) + " ops never became ready");
    return summarize ? summarize(x) : summarize_llm(job, x);
}

}  // namespace orrery
