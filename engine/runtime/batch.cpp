// Map: compile_batch → per experiment: add_experiment_nodes_and_ports → reference_rtts (base RTT, BDP) →
// add_experiment_flows (paths by the reference hash, windows, standalone FCTs) → size rings and pools.
#include "runtime/batch.h"

#include <algorithm>
#include <map>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "net/ns3_arith.h"
#include "topology/routing.h"

namespace orrery {
namespace {

using namespace net;

constexpr uint32_t kInitialAckCapacity = 32;
constexpr uint32_t kInitialPoolCapacity = 64;
constexpr uint32_t kEventsPerStep = 1024;
constexpr uint32_t kPfcFrameBytes = net::kPfcBytes;

int64_t ser_ps(uint32_t bytes, uint64_t bps) { return tx_time_ns(bytes, bps) * 1000; }

ExperimentParams make_params(const Scenario& s) {
    ExperimentParams p;
    const CcSpec& c = s.cc;
    p.cc_mode = uint8_t(hpcc_cc_mode(c.algorithm));
    p.ecn_enabled = s.network.ecn_enabled;
    p.rate_bound = c.rate_bound;
    p.var_win = c.variable_window;
    p.fast_react = c.hpcc.fast_react;
    p.multi_rate = c.hpcc.multi_rate;
    p.sample_feedback = c.hpcc.sample_feedback;
    p.clamp_target_rate = c.dcqcn.clamp_target_rate;
    p.back_to_zero = s.network.go_back_to_zero;
    p.ack_pause_class = c.ack_high_priority ? 0 : 3;
    p.mtu = uint32_t(s.network.packet_payload.count);
    p.ack_interval = uint32_t(s.network.ack_interval_packets);
    p.chunk = uint32_t(s.network.go_back_chunk.count);
    p.int_multi = uint32_t(c.hpcc.int_multi);
    p.mi_thresh = uint32_t(c.hpcc.mi_thresh);
    p.fast_recovery_times = uint32_t(c.dcqcn.fast_recovery_times);
    p.min_rate = uint64_t(c.min_rate.count);
    switch (c.algorithm) {
        case CcAlgorithm::dcqcn:
            p.rate_ai = uint64_t(c.dcqcn.rate_ai.count);
            p.rate_hai = uint64_t(c.dcqcn.rate_hai.count);
            p.g = c.dcqcn.g;
            break;
        case CcAlgorithm::hpcc:
            p.rate_ai = p.rate_hai = uint64_t(c.hpcc.rate_ai.count);
            p.g = c.dcqcn.g;
            break;
        case CcAlgorithm::timely:
            p.rate_ai = uint64_t(c.timely.rate_ai.count);
            p.rate_hai = uint64_t(c.timely.rate_hai.count);
            p.g = c.timely.g;
            break;
        case CcAlgorithm::dctcp:
            p.g = c.dctcp.g;
            break;
    }
    p.dctcp_rate_ai = uint64_t(c.dctcp.rate_ai.count);
    p.target_util = c.hpcc.eta;
    p.alpha_resume_us = double(c.dcqcn.alpha_resume_interval.count) / 1e6;
    p.rate_decrease_us = double(c.dcqcn.rate_decrease_interval.count) / 1e6;
    p.rp_timer_us = double(c.dcqcn.rp_timer.count) / 1e6;
    p.timely_alpha = c.timely.alpha;
    p.timely_beta = c.timely.beta;
    p.timely_tlow_ns = uint64_t(c.timely.t_low.count / 1000);
    p.timely_thigh_ns = uint64_t(c.timely.t_high.count / 1000);
    p.timely_min_rtt_ns = uint64_t(c.timely.min_rtt.count / 1000);
    p.seed = s.seed;
    if (s.output.queue_monitor_start && s.output.queue_monitor_end) {
        p.qlen_start = s.output.queue_monitor_start->count;
        p.qlen_end = s.output.queue_monitor_end->count;
        p.qlen_interval = s.output.queue_monitor_interval.count;
    }
    if (s.workload.stop_time) p.stop_time = s.workload.stop_time->count;
    if (s.output.record_queues || s.output.record_flow_rates) p.sample_interval = s.output.sample_interval.count;
    return p;
}

// The network port of a host: its link toward a switch (NVLink ports carry no packets here).
uint32_t nic_local_port(const Fabric& f, NodeId host, const std::string& where) {
    uint32_t found = kNone;
    for (uint32_t p = f.port_begin[host]; p < f.port_begin[host + 1]; ++p) {
        if (f.node_kind[f.port_peer[p]] == NodeKind::nvswitch) continue;
        if (found != kNone)
            throw InputError(where, "host " + std::to_string(host) + " has more than one network link; the packet engine models one NIC port per host");
        found = p - f.port_begin[host];
    }
    return found;
}

struct PathMetrics {
    uint64_t delay_ns = 0, tx_delay_ns = 0, min_bw = UINT64_MAX;
    int hops = 0;
};

// The reference's pairDelay / pairTxDelay / pairBw along one shortest path (README §2): propagation delays,
// one payload serialization per hop (integer ns), and the smallest rate.
PathMetrics path_metrics(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint32_t mtu) {
    PathMetrics m;
    NodeId at = src;
    while (at != dst) {
        std::vector<uint32_t> c = next_hops(f, r, at, dst);
        if (c.empty() || m.hops > int(f.node_count())) return {0, 0, 0, -1};
        const uint32_t port = f.port_begin[at] + c[0];
        const LinkId l = f.port_link[port];
        const uint64_t bw = uint64_t(f.link_rate[l].count);
        m.delay_ns += uint64_t(f.link_delay[l].count / 1000);
        m.tx_delay_ns += uint64_t(mtu) * 1000000000ull * 8 / bw;
        m.min_bw = std::min(m.min_bw, bw);
        ++m.hops;
        at = f.port_peer[port];
    }
    return m;
}

}  // namespace

net::NetView Batch::view() {
    NetView v{};
    v.params = params.data();
    v.node_experiment = node_experiment.data();
    v.node_role = node_role.data();
    v.node_port_begin = node_port_begin.data();
    v.nic = nic.data();
    v.sw = sw.data();
    v.out = out.data();
    v.node_events = node_events.data();
    v.port = port.data();
    v.ring = ring.data();
    v.ring_tail = ring_tail.data();
    v.ring_head = ring_head.data();
    v.ring_slots = ring_slots.get();
    v.tx = tx.data();
    v.queues = queues.data();
    v.mmu = mmu.data();
    qlen_ptr.resize(qlen_hist.size());
    for (size_t e = 0; e < qlen_hist.size(); ++e) qlen_ptr[e] = qlen_hist[e].data();
    v.qlen_hist = qlen_ptr.data();
    v.qlen_offset = qlen_offset.data();
    v.qlen_buckets = qlen_buckets.data();
    pool_ptr.resize(pool.size());
    pool_next_ptr.resize(pool.size());
    for (size_t e = 0; e < pool.size(); ++e) {
        pool_ptr[e] = pool[e].data();
        pool_next_ptr[e] = pool_next[e].data();
    }
    v.pool = pool_ptr.data();
    v.pool_next = pool_next_ptr.data();
    v.node_forwarder = node_forwarder.data();
    v.node_dest_group = node_dest_group.data();
    v.spray_set = spray_set.data();
    v.set_begin = set_begin.data();
    v.set_ports = set_ports.data();
    v.flow = flow.data();
    v.path_ports = path_ports.data();
    v.qp = qp.data();
    v.rx = rx.data();
    v.dcqcn = dcqcn.data();
    v.hpcc = hpcc.data();
    v.timely = timely.data();
    v.dctcp = dctcp.data();
    v.nic_qps = nic_qps.data();
    v.nic_starts = nic_starts.data();
    ack_ptr.resize(ack_slots.size());
    for (size_t e = 0; e < ack_slots.size(); ++e) ack_ptr[e] = ack_slots[e].data();
    v.ack_slots = ack_ptr.data();
    return v;
}

size_t Batch::memory_bytes() const {
    auto bytes = [](const auto& vec) { return vec.capacity() * sizeof(vec[0]); };
    size_t pools = 0;
    for (size_t e = 0; e < pool.size(); ++e) pools += bytes(pool[e]) + bytes(pool_next[e]) + bytes(ack_slots[e]) + bytes(qlen_hist[e]);
    return pools + bytes(node_forwarder) + bytes(node_dest_group) + bytes(spray_set) + bytes(set_begin) + bytes(set_ports) + bytes(params) + bytes(node_experiment) + bytes(node_role) + bytes(node_fabric_id) + bytes(node_port_begin) +
           bytes(nic) + bytes(sw) + bytes(out) + bytes(node_events) + bytes(port) + bytes(ring) + bytes(ring_tail) + bytes(ring_head) + ring_slot_count * sizeof(Packet) +
           bytes(tx) + bytes(queues) + bytes(mmu) + bytes(qlen_offset) + bytes(qlen_buckets) +
           bytes(flow) + bytes(path_ports) + bytes(qp) + bytes(rx) +
           bytes(dcqcn) + bytes(hpcc) + bytes(timely) + bytes(dctcp) + bytes(nic_qps) + bytes(nic_starts);
}

// Receive ring of a port: everything the peer may have in flight toward it plus one step of its sends, at
// the smallest frame (a 43 B PFC frame).
uint32_t ring_capacity(uint64_t rate_bps, int64_t delay_ps, int64_t lookahead, uint32_t mtu) {
    const int64_t min_ser = std::max<int64_t>(ser_ps(kPfcFrameBytes, rate_bps), 1000);
    const int64_t max_ser = std::min<int64_t>(ser_ps(65535, rate_bps), ser_ps(mtu + 200, rate_bps));
    return uint32_t((delay_ps + lookahead + max_ser) / min_ser + 8);
}

bool carries_packets(const Fabric& f, LinkId l) {
    return f.node_kind[f.link_a[l]] != NodeKind::nvswitch && f.node_kind[f.link_b[l]] != NodeKind::nvswitch;
}

int64_t lookahead_of(const Fabric& f) {
    int64_t lookahead = INT64_MAX;
    for (LinkId l = 0; l < f.link_count(); ++l)
        if (carries_packets(f, l)) lookahead = std::min(lookahead, f.link_delay[l].count);
    return lookahead;
}

// Routes and the reference's max RTT / BDP depend only on the fabric and the payload size: experiments of a
// sweep that share a fabric share them.
struct FabricFacts {
    Routes routes;
    uint64_t max_rtt_ns = 0, max_bdp = 0;
};

Batch compile_batch(const std::vector<ExperimentInput>& inputs) {
    Batch b;
    std::map<std::pair<const Fabric*, uint32_t>, FabricFacts> facts_cache;
    // Rings are most of a batch's memory: size them first and allocate once.
    uint64_t total_ring_slots = 0;
    for (const ExperimentInput& in : inputs) {
        const Fabric& f = *in.fabric;
        const int64_t lookahead = lookahead_of(f);
        if (lookahead == INT64_MAX || lookahead <= 0) continue;  // reported below
        for (LinkId l = 0; l < f.link_count(); ++l)
            if (carries_packets(f, l))
                total_ring_slots += 2ull * ring_capacity(uint64_t(f.link_rate[l].count), f.link_delay[l].count, lookahead,
                                                         uint32_t(in.scenario->network.packet_payload.count));
    }
    b.ring_slots = std::make_unique_for_overwrite<Packet[]>(total_ring_slots);
    uint64_t ring_slots_used = 0;
    b.ring_slot_count = total_ring_slots;
    for (uint32_t e = 0; e < inputs.size(); ++e) {
        const ExperimentInput& in = inputs[e];
        const Scenario& s = *in.scenario;
        const Fabric& f = *in.fabric;
        const std::string where = s.source.empty() ? in.id : s.source;
        ExperimentParams ep = make_params(s);
        ep.port_base = uint32_t(b.port.size());
        ep.node_base = uint32_t(b.node_experiment.size());
        b.params.push_back(ep);
        b.pool.emplace_back();
        b.pool_next.emplace_back();
        b.ack_slots.emplace_back();
        b.qlen_hist.emplace_back();
        std::vector<Packet>& pool = b.pool.back();
        std::vector<uint32_t>& pool_next = b.pool_next.back();
        std::vector<Packet>& acks = b.ack_slots.back();

        ExperimentSlice slice;
        slice.id = in.id;
        slice.fabric = &f;
        slice.node_begin = uint32_t(b.node_experiment.size());
        slice.port_begin = uint32_t(b.port.size());
        slice.flow_begin = uint32_t(b.flow.size());
        const uint32_t node0 = slice.node_begin, port0 = slice.port_begin;

        // Lookahead: the smallest delay of a link that carries packets.
        const int64_t lookahead = lookahead_of(f);
        if (lookahead == INT64_MAX) throw InputError(where, "the fabric has no network link");
        if (lookahead <= 0)
            throw InputError(where, "a network link has zero propagation delay; the packet engine needs every link's delay > 0 (its lookahead)");
        slice.lookahead = lookahead;

        // ---- nodes and ports ----
        uint64_t nic_rate = 0;
        uint64_t ring_slots_needed = ring_slots_used;
        for (NodeId n = 0; n < f.node_count(); ++n) {
            b.node_experiment.push_back(e);
            b.node_fabric_id.push_back(n);
            b.node_port_begin.push_back(port0 + f.port_begin[n]);
            uint8_t role = kRoleIdle;
            NicState nic;
            if (f.node_kind[n] == NodeKind::network_switch) role = kRoleSwitch;
            if (f.node_kind[n] == NodeKind::host) {
                const uint32_t local = nic_local_port(f, n, where);
                if (local != kNone) {
                    role = kRoleHost;
                    nic.port = port0 + f.port_begin[n] + local;
                    if (nic_rate == 0) nic_rate = uint64_t(f.link_rate[f.port_link[f.port_begin[n] + local]].count);
                }
            }
            b.node_role.push_back(role);
            b.nic.push_back(nic);
            b.sw.push_back(SwitchMmu{});
            b.out.push_back(NodeOutput{});
        }
        std::vector<std::pair<uint32_t, uint32_t>> link_ports(f.link_count(), {kNone, kNone});
        for (uint32_t p = 0; p < f.port_begin[f.node_count()]; ++p) {
            auto& lp = link_ports[f.port_link[p]];
            (lp.first == kNone ? lp.first : lp.second) = p;
        }
        for (NodeId n = 0; n < f.node_count(); ++n)
            for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) {
                const LinkId l = f.port_link[p];
                const uint32_t peer = link_ports[l].first == p ? link_ports[l].second : link_ports[l].first;
                PortInfo info{};
                info.node = node0 + n;
                info.peer_port = port0 + peer;
                info.local = uint16_t(p - f.port_begin[n]);
                info.rate_bps = uint64_t(f.link_rate[l].count);
                info.delay_ps = f.link_delay[l].count;
                b.port.push_back(info);
                b.tx.push_back(PortTx{});
                PortQueues q{};
                for (int i = 0; i < kPriorities; ++i) q.head[i] = q.tail[i] = kNoRow;
                b.queues.push_back(q);
                b.mmu.push_back(PortMmu{});
                b.qlen_offset.push_back(0);
                b.qlen_buckets.push_back(0);
                Ring ring;
                if (carries_packets(f, l)) {
                    ring.capacity = ring_capacity(info.rate_bps, info.delay_ps, lookahead, ep.mtu);
                    ring.offset = ring_slots_needed;
                    ring_slots_needed += ring.capacity;
                }
                b.ring.push_back(ring);
                b.ring_tail.push_back(RingTail{});
                b.ring_head.push_back(RingHead{});
            }
        ring_slots_used = ring_slots_needed;

        // ---- switches: buffer, PFC, ECN, pools, queue monitor ----
        for (NodeId n = 0; n < f.node_count(); ++n) {
            if (f.node_kind[n] != NodeKind::network_switch) continue;
            SwitchMmu& sm = b.sw[node0 + n];
            const int64_t buffer = s.network.buffer_per_switch.count;
            if (buffer > int64_t(UINT32_MAX))
                throw InputError(s.source + ": network.buffer_per_switch", "the switch buffer model counts bytes in 32 bits; at most 4 GiB");
            sm.buffer_size = uint32_t(buffer);
            for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) {
                const uint32_t row = port0 + p;
                const PortInfo& info = b.port[row];
                PortMmu& m = b.mmu[row];
                // The reference's integer order: rate · delay(ns) / 8 / 1e9 · 3
                m.headroom = uint32_t(info.rate_bps * uint64_t(info.delay_ps / 1000) / 8 / 1000000000ull * 3);
                uint32_t shift = uint32_t(s.network.pfc_alpha_shift);
                for (uint64_t rate = info.rate_bps; rate > nic_rate && shift > 0; rate /= 2) --shift;
                m.pfc_shift = uint8_t(shift);
                if (auto t = ecn_for_rate(s, BitsPerSecond(int64_t(info.rate_bps)))) {
                    m.kmin = uint32_t(t->kmin.count);
                    m.kmax = uint32_t(t->kmax.count);
                    m.pmax = t->pmax;
                } else if (s.network.ecn_enabled) {
                    throw InputError(s.source, "no ECN threshold for " + describe_rate(BitsPerSecond(int64_t(info.rate_bps))) + " ports (switch " +
                                                   std::to_string(n) + ")");
                }
                sm.total_hdrm += m.headroom;
                sm.total_rsrv += 4096;
            }
            sm.pool_capacity = kInitialPoolCapacity;  // grown before each step to what the step can bring
            sm.pool_offset = uint32_t(pool.size());
            pool.resize(pool.size() + sm.pool_capacity);
            pool_next.resize(pool_next.size() + sm.pool_capacity);
            for (uint32_t i = 0; i < sm.pool_capacity; ++i) pool_next[sm.pool_offset + i] = i + 1 < sm.pool_capacity ? i + 1 : kNoRow;
            sm.free_head = 0;
            sm.free_count = sm.pool_capacity;
            sm.next_sample = ep.qlen_start;
        }

        // ---- reference RTTs: maxRtt and maxBdp over host pairs, for GLOBAL_T ----
        auto cached = facts_cache.find({&f, ep.mtu});
        if (cached == facts_cache.end()) {
            FabricFacts facts;
            facts.routes = build_routes(f);
            std::vector<NodeId> hosts;
            for (NodeId n = 0; n < f.node_count(); ++n)
                if (b.node_role[node0 + n] == kRoleHost) hosts.push_back(n);
            std::vector<NodeId> sources = hosts;
            if (hosts.size() > 2048) {  // one representative per destination group (exact for generated fabrics)
                std::map<uint32_t, NodeId> rep;
                for (NodeId h : hosts) rep.emplace(facts.routes.host_group[h], h);
                sources.clear();
                for (auto& [g, h] : rep) sources.push_back(h);
            }
            for (NodeId a : sources)
                for (NodeId c : hosts) {
                    if (a == c) continue;
                    PathMetrics m = path_metrics(f, facts.routes, a, c, ep.mtu);
                    if (m.hops < 0) continue;
                    const uint64_t rtt = m.delay_ns * 2 + m.tx_delay_ns;
                    facts.max_rtt_ns = std::max(facts.max_rtt_ns, rtt);
                    facts.max_bdp = std::max(facts.max_bdp, uint64_t((net::uint128)rtt * m.min_bw / 1000000000ull / 8));
                }
            cached = facts_cache.emplace(std::make_pair(&f, ep.mtu), std::move(facts)).first;
        }
        const Routes& routes = cached->second.routes;
        slice.max_rtt_ns = cached->second.max_rtt_ns;
        slice.max_bdp = cached->second.max_bdp;

        // ---- spraying: the routing tables go into the batch ----
        for (NodeId n = 0; n < f.node_count(); ++n) {
            b.node_forwarder.push_back(routes.forwarder_row[n]);
            b.node_dest_group.push_back(routes.host_group[n]);
        }
        if (s.network.load_balancing == LoadBalancing::spray) {
            ExperimentParams& stored = b.params.back();
            stored.spray = true;
            stored.group_count = routes.group_count;
            stored.spray_table = uint32_t(b.spray_set.size());
            const uint32_t set_base = uint32_t(b.set_begin.size() - 1), port_base = uint32_t(b.set_ports.size());
            for (size_t cell = 0; cell < routes.hop_set.size(); ++cell) {
                const uint32_t id = routes.hop_set[cell];
                b.spray_set.push_back(id == Routes::kDeliver || id == kNone ? kNoRow : set_base + id);
            }
            for (size_t i = 1; i < routes.set_begin.size(); ++i) b.set_begin.push_back(port_base + routes.set_begin[i]);
            b.set_ports.insert(b.set_ports.end(), routes.set_ports.begin(), routes.set_ports.end());
        }

        // ---- flows ----
        std::vector<std::vector<uint32_t>> flows_of(f.node_count());
        for (size_t i = 0; i < in.flows.size(); ++i) {
            const FlowSpec& fs = in.flows[i];
            if (fs.src >= f.node_count() || fs.dst >= f.node_count() || b.node_role[node0 + fs.src] != kRoleHost ||
                b.node_role[node0 + fs.dst] != kRoleHost)
                throw InputError(fs.where, "flow " + std::to_string(fs.src) + " → " + std::to_string(fs.dst) + " does not join two hosts with a network port");
            const uint32_t row = uint32_t(b.flow.size());
            FlowInfo fi{};
            fi.src = node0 + fs.src;
            fi.dst = node0 + fs.dst;
            fi.sip = node_ip(fs.src);
            fi.dip = node_ip(fs.dst);
            fi.sport = fs.sport;
            fi.dport = fs.dport;
            fi.pg = uint8_t(fs.priority);
            fi.size = uint64_t(fs.size.count);
            fi.start = fs.start.count;
            for (int dir = 0; dir < 2; ++dir) {
                const NodeId from = dir == 0 ? fs.src : fs.dst, to = dir == 0 ? fs.dst : fs.src;
                const uint16_t sp = dir == 0 ? fs.sport : fs.dport, dp = dir == 0 ? fs.dport : fs.sport;
                std::vector<Hop> hops = flow_path(f, routes, from, to, sp, dp);
                if (hops.empty()) throw InputError(fs.where, "host " + std::to_string(to) + " cannot be reached from host " + std::to_string(from));
                (dir == 0 ? fi.data_path : fi.ack_path) = uint32_t(b.path_ports.size());
                for (const Hop& h : hops) b.path_ports.push_back(uint16_t(h.port));
            }
            const PathMetrics m = path_metrics(f, routes, fs.src, fs.dst, ep.mtu);
            const uint64_t pair_rtt = m.delay_ns * 2 + m.tx_delay_ns;
            const uint64_t pair_bdp = uint64_t((net::uint128)pair_rtt * m.min_bw / 1000000000ull / 8);
            fi.base_rtt_ns = s.cc.global_base_rtt ? slice.max_rtt_ns : pair_rtt;
            fi.win = s.cc.window ? (s.cc.global_base_rtt ? slice.max_bdp : pair_bdp) : 0;
            // The reference's standalone FCT: integer arithmetic, 48 B of header per packet, no INT.
            const uint64_t total_bytes = fi.size + ((fi.size - 1) / ep.mtu + 1) * kDataHeaderBytes;
            fi.standalone_fct_ns = pair_rtt + total_bytes * 8000000000ull / m.min_bw;
            b.flow.push_back(fi);
            b.qp.push_back(QpState{});
            b.rx.push_back(RxState{});
            b.dcqcn.push_back(DcqcnState{});
            b.hpcc.push_back(HpccState{});
            b.timely.push_back(TimelyState{});
            b.dctcp.push_back(DctcpState{});
            flows_of[fs.src].push_back(row);
        }
        for (NodeId n = 0; n < f.node_count(); ++n) {
            NicState& nic = b.nic[node0 + n];
            auto& list = flows_of[n];
            std::stable_sort(list.begin(), list.end(), [&](uint32_t x, uint32_t y) { return b.flow[x].start < b.flow[y].start; });
            nic.qp_offset = uint32_t(b.nic_qps.size());
            nic.starts_offset = uint32_t(b.nic_starts.size());
            nic.starts_count = uint32_t(list.size());
            b.nic_qps.resize(b.nic_qps.size() + list.size(), kNoRow);
            b.nic_starts.insert(b.nic_starts.end(), list.begin(), list.end());
            if (b.node_role[node0 + n] == kRoleHost) {
                nic.ack_offset = uint32_t(acks.size());
                nic.ack_capacity = kInitialAckCapacity;  // grown before each step to what the step can bring
                acks.resize(acks.size() + kInitialAckCapacity);
            }
            NodeOutput& o = b.out[node0 + n];
            o.events_offset = uint32_t(b.node_events.size());
            o.events_capacity = b.node_role[node0 + n] == kRoleIdle ? 0 : kEventsPerStep;
            b.node_events.resize(b.node_events.size() + o.events_capacity);
        }
        slice.node_end = uint32_t(b.node_experiment.size());
        slice.port_end = uint32_t(b.port.size());
        slice.flow_end = uint32_t(b.flow.size());
        // The first step starts at the first flow start (nothing happens before it).
        int64_t first = INT64_MAX;
        for (uint32_t i = slice.flow_begin; i < slice.flow_end; ++i) first = std::min(first, b.flow[i].start);
        slice.clock = first == INT64_MAX ? 0 : first;
        if (ep.qlen_start != kNever) slice.clock = std::min(slice.clock, ep.qlen_start);
        slice.done = slice.flow_begin == slice.flow_end;
        b.experiments.push_back(slice);
    }
    b.node_port_begin.push_back(uint32_t(b.port.size()));
    return b;
}

namespace {
// Packets waiting in port `row`'s receive ring: all that can arrive there in the next step.
uint64_t unconsumed(const Batch& b, uint32_t row, uint64_t step) {
    return b.ring[row].capacity ? b.ring_tail[row].published_tail[step & 1] - b.ring_head[row].head : 0;
}
}  // namespace

void allocate_queue_monitor(Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    std::vector<uint32_t>& hist = b.qlen_hist[e];
    if (!hist.empty()) return;
    size_t total = 0;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n)
        if (b.node_role[n] == kRoleSwitch)
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) total += b.sw[n].buffer_size / 1000 + 2;
    hist.assign(total, 0);
    size_t offset = 0;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n)
        if (b.node_role[n] == kRoleSwitch)
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                b.qlen_offset[row] = uint32_t(offset);
                b.qlen_buckets[row] = b.sw[n].buffer_size / 1000 + 2;
                offset += b.qlen_buckets[row];
            }
    b.qlen_ptr[e] = hist.data();
}

void grow_buffers(Batch& b, uint32_t e, uint64_t step) {
    const ExperimentSlice& x = b.experiments[e];
    // Switch pools: each arrival takes a slot and may queue a pause frame (a resume frees a slot first).
    std::vector<uint32_t> need(x.node_end - x.node_begin, 0);
    bool grow_pool = false, grow_acks = false;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
        if (b.node_role[n] == kRoleIdle) continue;
        uint64_t arriving = 0;
        for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) arriving += unconsumed(b, row, step);
        if (b.node_role[n] == kRoleSwitch) {
            need[n - x.node_begin] = uint32_t(2 * arriving + 8);
            grow_pool = grow_pool || b.sw[n].free_count < need[n - x.node_begin];
        } else {
            const NicState& nic = b.nic[n];
            need[n - x.node_begin] = uint32_t(arriving + 8);  // at most one ACK or NACK per arriving packet
            grow_acks = grow_acks || nic.ack_capacity - (nic.ack_tail - nic.ack_head) < need[n - x.node_begin];
        }
    }
    if (grow_pool) {
        std::vector<Packet> pool;
        std::vector<uint32_t> next;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            SwitchMmu& s = b.sw[n];
            if (b.node_role[n] != kRoleSwitch) continue;
            const uint32_t want = need[n - x.node_begin];
            const uint32_t old_capacity = s.pool_capacity;
            const uint32_t capacity = s.free_count < want ? std::max(2 * old_capacity, old_capacity - s.free_count + 2 * want) : old_capacity;
            const uint32_t offset = uint32_t(pool.size());
            pool.insert(pool.end(), b.pool[e].begin() + s.pool_offset, b.pool[e].begin() + s.pool_offset + old_capacity);
            next.insert(next.end(), b.pool_next[e].begin() + s.pool_offset, b.pool_next[e].begin() + s.pool_offset + old_capacity);
            pool.resize(offset + capacity);
            next.resize(offset + capacity);
            // New slots join the free list (list links are relative to the switch's own pool).
            for (uint32_t i = old_capacity; i < capacity; ++i) next[offset + i] = i + 1 < capacity ? i + 1 : s.free_head;
            if (capacity > old_capacity) {
                s.free_head = old_capacity;
                s.free_count += capacity - old_capacity;
            }
            s.pool_offset = offset;
            s.pool_capacity = capacity;
        }
        b.pool[e].swap(pool);
        b.pool_next[e].swap(next);
        b.pool_ptr[e] = b.pool[e].data();
        b.pool_next_ptr[e] = b.pool_next[e].data();
    }
    if (grow_acks) {
        std::vector<Packet> acks;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            NicState& nic = b.nic[n];
            if (b.node_role[n] != kRoleHost) continue;
            const uint32_t want = need[n - x.node_begin];
            const uint32_t used = uint32_t(nic.ack_tail - nic.ack_head);
            const uint32_t capacity = nic.ack_capacity - used < want ? std::max(2 * nic.ack_capacity, used + 2 * want) : nic.ack_capacity;
            const uint32_t offset = uint32_t(acks.size());
            acks.resize(offset + capacity);
            // Same counters, new ring size: every waiting ACK moves to its slot in the new ring.
            for (uint64_t i = nic.ack_head; i < nic.ack_tail; ++i)
                acks[offset + i % capacity] = b.ack_slots[e][nic.ack_offset + i % nic.ack_capacity];
            nic.ack_offset = offset;
            nic.ack_capacity = capacity;
        }
        b.ack_slots[e].swap(acks);
        b.ack_ptr[e] = b.ack_slots[e].data();
    }
}

}  // namespace orrery
