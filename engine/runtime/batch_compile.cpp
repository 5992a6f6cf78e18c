// Map: compile_batch → size_batch (refuse what memory cannot hold) → reserve_columns → packet_arena → per
// experiment, add_experiment: make_params → add_nodes → add_ports → configure_switch → fabric_facts (routes,
// the reference's max RTT and BDP, cached per fabric) → add_routing_tables → add_flows (paths by the reference
// hash, windows, standalone FCTs, each NIC's flow lists).
#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "common/diagnostics.h"
#include "common/memory_budget.h"
#include "common/quantity.h"
#include "net/ns3_arith.h"
#include "runtime/batch.h"
#include "topology/routing.h"

namespace orrery {
namespace {

using namespace net;

// A CC parameter as the engine counts it (net/cc_params.h: ExperimentParams' <Name>Config).
uint64_t engine_value(BitsPerSecond rate) { return uint64_t(rate.count); }
// Times as ns-3's MicroSeconds(double) makes them from a config.txt's microseconds (net/ns3_arith.h),
// converted once here rather than at every timer event.
int64_t engine_value(Picoseconds time) { return net::us_to_ns(double(time.count) / 1e6) * 1000; }
double engine_value(double number) { return number; }
uint32_t engine_value(int integer) { return uint32_t(integer); }
bool engine_value(bool flag) { return flag; }

ExperimentParams make_params(const Scenario& s) {
    ExperimentParams p;
    const CcSpec& c = s.cc;
    p.cc_mode = uint8_t(c.algorithm);
    set_cc_packet_fields(p);
    p.ecn_enabled = s.network.ecn_enabled;
    p.rate_bound = c.rate_bound;
    p.var_win = c.variable_window;
    p.back_to_zero = s.network.go_back_to_zero;
    p.pfc_enabled = s.network.pfc_enabled;
    p.ack_pause_class = c.ack_high_priority ? 0 : 3;
    p.ack_switch_class = s.network.acks_in_control_queue ? 0 : 0xFF;
    p.mtu = uint32_t(s.network.packet_payload.count);
    // The reference's L2_ACK_INTERVAL is in bytes, counted against the receiver's next expected byte.
    p.ack_interval = s.network.ack_interval_packets <= 1 ? 1u : uint32_t(s.network.ack_interval_packets) * uint32_t(s.network.packet_payload.count);
    p.chunk = uint32_t(s.network.go_back_chunk.count);
    p.min_rate = uint64_t(c.min_rate.count);
    p.out_of_order = s.network.out_of_order;
    p.retransmit_timeout_ps = s.network.retransmit_timeout.count;
#define ORRERY_CC_PARAM_COMPILE(cc, type, member, ...) p.cc.member = engine_value(c.cc.member);
    ORRERY_CC_PARAMS(ORRERY_CC_PARAM_COMPILE)
#undef ORRERY_CC_PARAM_COMPILE
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


bool carries_packets(const Fabric& f, LinkId l) {
    return f.node_kind[f.link_a[l]] != NodeKind::nvswitch && f.node_kind[f.link_b[l]] != NodeKind::nvswitch;
}

// The packet-carrying link of the smallest delay (its delay is the lookahead), kNone when there is none.
LinkId shortest_link(const Fabric& f) {
    LinkId shortest = kNone;
    for (LinkId l = 0; l < f.link_count(); ++l)
        if (carries_packets(f, l) && (shortest == kNone || f.link_delay[l].count < f.link_delay[shortest].count)) shortest = l;
    return shortest;
}

// Routes and the reference's max RTT / BDP depend only on the fabric and the payload size: experiments of a
// sweep that share a fabric share them.
struct FabricFacts {
    Routes routes;
    uint64_t max_rtt_ns = 0, max_bdp = 0;
};

// A column whose rows follow the flows (a NIC's queue-pair and start lists hold one entry per flow).
constexpr bool rows_per_flow(ColumnDim d) { return d == ColumnDim::Flow || d == ColumnDim::NicQps || d == ColumnDim::NicStarts; }

std::string batch_source(const std::vector<ExperimentInput>& inputs) {
    return inputs.empty() || inputs[0].scenario->source.empty() ? "batch" : inputs[0].scenario->source;
}

// What the tables will take, before any is built: a flow's rows in every flow column, a port's in every port
// column, and a block of packets for its ring and one for its queues. Refuses what the machine cannot hold.
struct BatchSize {
    uint64_t flows = 0, ports = 0;
};
BatchSize size_batch(const std::vector<ExperimentInput>& inputs) {
    BatchSize n;
    // Flow paths: about 16 ports a flow (both directions); tournament trees: two entries a port.
    uint64_t per_flow = 16 * sizeof(uint16_t), per_port = 2 * sizeof(PortEvent) + 2 * kMaxBlockBytes;
#define ORRERY_COLUMN(T, name, access, dim, ...)                        \
    if constexpr (rows_per_flow(ColumnDim::dim)) per_flow += sizeof(T); \
    if constexpr (ColumnDim::dim == ColumnDim::Port) per_port += sizeof(T);
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    for (const ExperimentInput& in : inputs) {
        n.flows += in.flows.size();
        n.ports += in.fabric->port_begin.empty() ? 0 : in.fabric->port_begin.back();
        for (const FlowSpec& fs : in.flows)
            if (uint64_t(fs.size.count) >= (1ull << 32))
                throw InputError(fs.where, "a flow of " + std::to_string(fs.size.count) + " bytes: the packet model's sequence numbers are 32-bit, as "
                                           "the reference's are, so a flow carries less than 4 GiB; split it");
    }
    refuse_beyond_memory(batch_source(inputs), "the engine's tables for " + std::to_string(n.flows) + " flows and " + std::to_string(n.ports) + " ports",
                         n.flows * per_flow + n.ports * per_port);
    return n;
}

// Each flow and port column at its final size from the start: grown row by row, the per-flow columns of a
// large MoE job were copied many times over and their new pages zeroed each time.
void reserve_columns(Batch& b, const BatchSize& n) {
#define ORRERY_COLUMN(T, name, access, dim, ...)                           \
    if constexpr (rows_per_flow(ColumnDim::dim)) b.name.reserve(n.flows); \
    if constexpr (ColumnDim::dim == ColumnDim::Port) b.name.reserve(n.ports);
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
}

// Packet storage: address space for as many blocks as the machine's memory holds, committed as used; half-line
// packets unless an experiment carries HPCC's INT hops (net/blocks.h). A given arena of another packet size is
// dropped, so that an experiment's memory does not depend on what ran before it in the process.
std::unique_ptr<BlockArena> packet_arena(const std::vector<ExperimentInput>& inputs, std::unique_ptr<BlockArena> arena, PacketSlots slots, uint64_t ports) {
    const bool carries_int = std::any_of(inputs.begin(), inputs.end(), [](const ExperimentInput& in) { return make_params(*in.scenario).ack_int_hops > 1; });
    const uint32_t packet_shift = carries_int || slots == PacketSlots::whole_line ? kFullPacketShift : kCompactPacketShift;
    if (arena && arena->packet_shift() != packet_shift) arena.reset();
    if (arena) return arena;
    const uint64_t bytes_per_block = block_bytes(packet_shift) + sizeof(uint32_t);
    // Under an address-space limit (ulimit -v) the reservation takes three quarters of what is left, the
    // rest staying for what grows during the run; refused when that cannot hold a block per ring and queue.
    uint64_t bytes = std::max<uint64_t>(physical_memory_bytes(), 1ull << 30);
    const uint64_t left = address_space_left();
    if (left != UINT64_MAX) {
        const uint64_t usable = left / 4 * 3, least = (2 * ports + BlockArena::kMinBlocks) * bytes_per_block;
        if (usable < least)
            throw InputError(batch_source(inputs), "packet storage needs at least " + gib(least) + " of address space (a block for each of " + std::to_string(ports) +
                                                       " ports' rings and queues), but this process's limit (ulimit -v: " + gib(address_space_limit()) +
                                                       ") leaves " + gib(left) + ", three quarters of it usable: raise the limit or simulate a smaller fabric");
        bytes = std::min(bytes, usable);
    }
    return std::make_unique<BlockArena>(bytes / bytes_per_block, packet_shift);
}

// The lookahead: the smallest delay of a link that carries packets.
int64_t lookahead_of(const Fabric& f, const std::string& where) {
    const LinkId shortest = shortest_link(f);
    if (shortest == kNone) throw InputError(where, "the fabric has no network link");
    const int64_t lookahead = f.link_delay[shortest].count;
    if (lookahead <= 0)
        throw InputError(where, "link " + std::to_string(shortest) + " (node " + std::to_string(f.link_a[shortest]) + " – node " +
                                    std::to_string(f.link_b[shortest]) + ", the fabric's link " + std::to_string(shortest + 1) +
                                    " in file order) has zero propagation delay; the packet engine needs every link's delay > 0 (its lookahead)");
    return lookahead;
}

// Experiment e's nodes: role, NIC port, tournament tree. Returns the rate of the first NIC found (PFC's
// alpha shift counts rates above it).
uint64_t add_nodes(Batch& b, uint32_t e, const Fabric& f, uint32_t port0, const std::string& where) {
    uint64_t nic_rate = 0;
    for (NodeId n = 0; n < f.node_count(); ++n) {
        b.node_experiment.push_back(e);
        b.node_fabric_id.push_back(n);
        b.node_port_begin.push_back(port0 + f.port_begin[n]);
        b.node_tree_begin.push_back(uint32_t(b.port_tree.size()));
        uint32_t leaves = 1;
        while (leaves < f.port_begin[n + 1] - f.port_begin[n]) leaves *= 2;
        b.port_tree.resize(b.port_tree.size() + 2 * leaves, PortEvent{kNever, kNever, kNoRow, kSrcNone});
        b.port_tree[b.node_tree_begin.back()].row = leaves;  // port_events.h: entry 0 keeps the leaf count
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
    return nic_rate;
}

// Experiment e's ports: each directed end of a link, its peer, rate, delay and loss, and its receive ring.
void add_ports(Batch& b, const Fabric& f, const Scenario& s, uint32_t node0, uint32_t port0) {
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
            // The reference gives every link whose own rate in topology.txt is 0 ERROR_RATE_PER_LINK.
            b.port_loss.push_back(f.link_error_rate[l] > 0 ? f.link_error_rate[l] : s.network.error_rate_per_link);
            b.tx.push_back(PortTx{});
            b.times.push_back(PortTimes{});
            b.queues.push_back(PortQueues{});
            b.mmu.push_back(PortMmu{});
            b.qlen_offset.push_back(0);
            b.qlen_buckets.push_back(0);
            RingTail tail;
            tail.reader = node0 + n;
            b.ring_tail.push_back(tail);
            b.ring_head.push_back(RingHead{});
        }
}

// A switch's buffer, PFC headroom, reserve and threshold, each port's ECN thresholds, its queue monitor start.
void configure_switch(Batch& b, const Fabric& f, const Scenario& s, const ExperimentParams& ep, NodeId n, uint32_t node0, uint32_t port0, uint64_t nic_rate) {
    SwitchMmu& sm = b.sw[node0 + n];
    const int64_t buffer = s.network.buffer_per_switch.count;
    if (buffer > int64_t(UINT32_MAX))
        throw InputError(s.source + ": network.buffer_per_switch", "the switch buffer model counts bytes in 32 bits; at most 4 GiB");
    sm.buffer_size = uint32_t(buffer);
    uint64_t hdrm_and_reserve = 0;
    sm.port_reserve = uint32_t(s.network.pfc_port_reserve.count);
    sm.resume_offset = uint32_t(s.network.pfc_resume_offset.count);
    for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) {
        const uint32_t row = port0 + p;
        const PortInfo& info = b.port[row];
        PortMmu& m = b.mmu[row];
        // The reference's integer order: rate · delay(ns) / 8 / 1e9 · 3
        m.headroom = uint32_t(info.rate_bps * uint64_t(info.delay_ps / 1000) / 8 / 1000000000ull * 3);
        uint32_t shift = uint32_t(s.network.pfc_alpha_shift);
        for (uint64_t rate = info.rate_bps; rate > nic_rate && shift > 0; rate /= 2) --shift;
        m.pfc_shift = uint8_t(shift);
        const EcnThreshold t = ecn_for_rate(s, BitsPerSecond(int64_t(info.rate_bps)));  // scaled when the table lacks the rate
        m.kmin = uint32_t(t.kmin.count);
        m.kmax = uint32_t(t.kmax.count);
        m.pmax = t.pmax;
        sm.total_hdrm += m.headroom;
        sm.total_rsrv += sm.port_reserve;
        hdrm_and_reserve += uint64_t(m.headroom) + sm.port_reserve;
    }
    // The dynamic threshold is (buffer − Σheadroom − Σreserve − shared) >> shift in unsigned 32-bit
    // arithmetic: a buffer that cannot hold the headroom and reserve of its ports would wrap around.
    if (hdrm_and_reserve >= uint64_t(sm.buffer_size))
        throw InputError(s.source + ": network.buffer_per_switch",
                         "switch " + std::to_string(n) + ": its buffer (" + format_size(Bytes(int64_t(sm.buffer_size))) +
                             ") does not exceed the PFC headroom and port reserve of its " + std::to_string(f.port_begin[n + 1] - f.port_begin[n]) +
                             " ports (" + format_size(Bytes(int64_t(hdrm_and_reserve))) + "): raise the buffer or lower network.pfc.port_reserve");
    if (!s.network.pfc_dynamic_threshold) {
        // A static threshold: the user's, or the even split of what headroom and reserve leave, so
        // that the ports' shared use can never exceed the buffer.
        const uint64_t share = (uint64_t(sm.buffer_size) - hdrm_and_reserve) / std::max<uint32_t>(1, f.port_begin[n + 1] - f.port_begin[n]);
        const uint64_t wanted = s.network.pfc_static_threshold ? uint64_t(s.network.pfc_static_threshold->count) : share;
        if (wanted > share)
            throw InputError(s.source + ": network.pfc.static_threshold",
                             format_size(Bytes(int64_t(wanted))) + " per port exceeds what switch " + std::to_string(n) +
                                 " can give each of its ports (" + format_size(Bytes(int64_t(share))) +
                                 ": its buffer less headroom and reserve, split evenly), so its ports could overrun the buffer");
        sm.static_threshold = uint32_t(std::max<uint64_t>(1, wanted));
    }
    sm.next_sample = ep.qlen_start;
}

// The fabric's routes and the reference's maxRtt and maxBdp over host pairs (for GLOBAL_T).
FabricFacts fabric_facts(const Batch& b, const Fabric& f, uint32_t node0, uint32_t mtu) {
    FabricFacts facts;
    facts.routes = build_routes(f);
    std::vector<NodeId> hosts;
    for (NodeId n = 0; n < f.node_count(); ++n)
        if (b.node_role[node0 + n] == kRoleHost) hosts.push_back(n);
    std::vector<NodeId> sources = hosts;
    std::vector<NodeId> destinations = hosts;
    if (hosts.size() > 2048) {  // one host per destination group on both sides (exact for generated fabrics)
        std::map<uint32_t, NodeId> rep;
        for (NodeId h : hosts) rep.emplace(facts.routes.host_group[h], h);
        sources.clear();
        for (auto& [g, h] : rep) sources.push_back(h);
        destinations = sources;
    }
    PathMemo memo;  // by destination: each forwarder's remainder toward it is walked once
    for (NodeId c : destinations)
        for (NodeId a : sources) {
            if (a == c) continue;
            PathMetrics m = path_metrics(f, facts.routes, a, c, mtu, memo);
            if (m.hops < 0) continue;
            const uint64_t rtt = m.delay_ns * 2 + m.tx_delay_ns;
            facts.max_rtt_ns = std::max(facts.max_rtt_ns, rtt);
            facts.max_bdp = std::max(facts.max_bdp, uint64_t((net::uint128)rtt * m.min_bw / 1000000000ull / 8));
        }
    return facts;
}

// One routing table (a next-hop set per forwarder and destination group) appended to the batch's; returns its
// first cell, an experiment's spray_table while it routes by it.
uint32_t append_routing_table(Batch& b, const Routes& routes) {
    const uint32_t first = uint32_t(b.spray_set.size());
    const uint32_t set_base = uint32_t(b.set_begin.size() - 1), port_base = uint32_t(b.set_ports.size());
    for (size_t cell = 0; cell < routes.hop_set.size(); ++cell) {
        const uint32_t id = routes.hop_set[cell];
        b.spray_set.push_back(id == Routes::kDeliver ? kNoRow : id == kNone ? kNoRoute : set_base + id);
    }
    for (size_t i = 1; i < routes.set_begin.size(); ++i) b.set_begin.push_back(port_base + routes.set_begin[i]);
    b.set_ports.insert(b.set_ports.end(), routes.set_ports.begin(), routes.set_ports.end());
    if (routes.set_weights.empty()) b.set_weights.resize(b.set_ports.size(), 1);
    else b.set_weights.insert(b.set_weights.end(), routes.set_weights.begin(), routes.set_weights.end());
    return first;
}

// The routing tables of an experiment that balances other than by ECMP, or whose routing changes during the
// run (it then forwards ECMP by table), go into the batch (every experiment's forwarder rows and destination
// groups do), and a flowlet table for its switches.
void add_routing_tables(Batch& b, const Fabric& f, const Scenario& s, const Routes& routes, bool routing_changes) {
    for (NodeId n = 0; n < f.node_count(); ++n) {
        b.node_forwarder.push_back(routes.forwarder_row[n]);
        b.node_dest_group.push_back(routes.host_group[n]);
    }
    if (s.network.load_balancing == LoadBalancing::ecmp && !routing_changes) return;
    ExperimentParams& stored = b.params.back();
    switch (s.network.load_balancing) {
        case LoadBalancing::ecmp: stored.load_balancing = kLbEcmpTable; break;
        case LoadBalancing::spray: stored.load_balancing = kLbSpray; break;
        case LoadBalancing::adaptive: stored.load_balancing = kLbAdaptive; break;
        case LoadBalancing::flowlet:
            stored.load_balancing = kLbFlowlet;
            stored.flowlet_gap = s.network.flowlet_gap.count;
            stored.flowlet_table = uint32_t(b.flowlet.size());
            b.flowlet.resize(b.flowlet.size() + size_t(routes.forwarder_count) * kFlowletSlots);
            break;
    }
    stored.group_count = routes.group_count;
    stored.weighted = s.network.capacity_weights;
    stored.spray_table = append_routing_table(b, routes);
}

// The fabric's events (topology.events): those at time 0 are the fabric as the run starts (links marked down,
// rates set, routing around them from the start); the later ones become the experiment's changes, each
// failure or repair followed, after the routing convergence, by a switch to a table computed for the fabric as
// that event left it. Returns the routing the run starts with (its flows' ECMP paths follow it); `by_table`
// says whether switches must forward ECMP by table instead of by compiled paths: routing changes during the
// run, or a port is down (a compiled path would cross it).
Routes add_fabric_events(Batch& b, ExperimentSlice& slice, const Fabric& f, const Scenario& s, const Routes& healthy, uint32_t port0, bool& by_table) {
    by_table = false;
    const std::vector<FabricEvent> events = resolve_fabric_events(s.topology.events, f, topology_node_names(s.topology));
    if (events.empty()) return routes_around(f, nullptr, s.network.capacity_weights, &healthy);
    slice.fabric_events = events;
    std::vector<std::array<uint32_t, 2>> link_rows(f.link_count(), {kNone, kNone});
    for (uint32_t p = 0; p < f.port_begin[f.node_count()]; ++p) {
        auto& rows = link_rows[f.port_link[p]];
        (rows[0] == kNone ? rows[0] : rows[1]) = port0 + p;
    }
    const std::vector<uint8_t> down_at_start = links_down_after(events, f.link_count(), 0);
    const Routes start = routes_around(f, &down_at_start, s.network.capacity_weights, &healthy);
    for (const FabricEvent& ev : events) {
        for (LinkId l : ev.links) {
            FabricChange c;
            c.at = ev.at_ps;
            c.kind = ev.kind == FabricEventKind::down ? FabricChange::link_down : ev.kind == FabricEventKind::up ? FabricChange::link_up : FabricChange::link_rate;
            c.rows[0] = link_rows[l][0];
            c.rows[1] = link_rows[l][1];
            c.rate_bps = uint64_t(ev.rate.count);
            slice.changes.push_back(c);
        }
    }
    // Routing after each later failure or repair, once converged.
    std::vector<FabricChange> routing;
    for (const FabricEvent& ev : events) {
        if (ev.at_ps == 0 || ev.kind == FabricEventKind::rate) continue;
        const std::vector<uint8_t> down = links_down_after(events, f.link_count(), ev.at_ps);
        FabricChange c;
        c.kind = FabricChange::routing;
        c.at = ev.at_ps + s.network.routing_convergence.count;
        if (!routing.empty() && routing.back().at == c.at) routing.pop_back();  // the later table wins
        const Routes r = routes_around(f, &down, s.network.capacity_weights);
        c.table = append_routing_table(b, r);
        routing.push_back(c);
    }
    slice.changes.insert(slice.changes.end(), routing.begin(), routing.end());
    std::stable_sort(slice.changes.begin(), slice.changes.end(), [](const FabricChange& a, const FabricChange& c) { return a.at < c.at; });
    by_table = std::any_of(slice.changes.begin(), slice.changes.end(), [&](const FabricChange& c) {
        return (c.at > 0 && c.kind != FabricChange::link_rate) ||
               (c.kind == FabricChange::link_down && (f.is_host(f.link_a[f.port_link[c.rows[0] - port0]]) || f.is_host(f.link_b[f.port_link[c.rows[0] - port0]])));
    });
    // Those at time 0 apply now, before the first step.
    for (; slice.next_change < slice.changes.size() && slice.changes[slice.next_change].at == 0; ++slice.next_change) {
        const FabricChange& c = slice.changes[slice.next_change];
        if (c.kind == FabricChange::routing) continue;
        for (uint32_t row : c.rows) {
            if (c.kind == FabricChange::link_rate) set_port_rate(b, row, c.rate_bps);
            else set_port_down(b, row, c.kind == FabricChange::link_down, 0);
        }
    }
    return start;
}

// Experiment e's flows: paths by the reference's hash, base RTT and window, standalone FCT, their sender,
// receiver and own-CC rows; then each NIC's queue-pair list and its flows in start order.
void add_flows(Batch& b, const ExperimentInput& in, const ExperimentParams& ep, const Routes& routes, const ExperimentSlice& slice) {
    const Scenario& s = *in.scenario;
    const Fabric& f = *in.fabric;
    const uint32_t node0 = slice.node_begin;
    std::vector<std::vector<uint32_t>> flows_of(f.node_count());
    std::vector<Hop> hops;
    std::vector<uint32_t> candidates;
    // Per host pair: a collective's flows repeat pairs (MoE 8x13B: 256,000 flows over 16,256 pairs).
    std::unordered_map<uint64_t, PathMetrics> pair_metrics;
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
        FlowPaths paths{};
        for (int dir = 0; dir < 2; ++dir) {
            const NodeId from = dir == 0 ? fs.src : fs.dst, to = dir == 0 ? fs.dst : fs.src;
            const uint16_t sp = dir == 0 ? fs.sport : fs.dport, dp = dir == 0 ? fs.dport : fs.sport;
            if (!flow_path(f, routes, from, to, sp, dp, hops, candidates)) throw InputError(fs.where, "host " + std::to_string(to) + " cannot be reached from host " + std::to_string(from));
            (dir == 0 ? paths.data_path : paths.ack_path) = uint32_t(b.path_ports.size());
            for (const Hop& h : hops) b.path_ports.push_back(uint16_t(h.port));
        }
        auto [known, fresh] = pair_metrics.try_emplace(uint64_t(fs.src) << 32 | fs.dst);
        if (fresh) known->second = path_metrics(f, routes, fs.src, fs.dst, ep.mtu);
        const PathMetrics& m = known->second;
        const uint64_t pair_rtt = m.delay_ns * 2 + m.tx_delay_ns;
        const uint64_t pair_bdp = uint64_t((net::uint128)pair_rtt * m.min_bw / 1000000000ull / 8);
        fi.base_rtt_ns = s.cc.global_base_rtt ? slice.max_rtt_ns : pair_rtt;
        fi.win = s.cc.window ? (s.cc.global_base_rtt ? slice.max_bdp : pair_bdp) : 0;
        // Out-of-order delivery: no more in flight than the receiver's reorder bitmap can place (net/nic.h).
        if (ep.out_of_order) {
            const uint64_t placeable = uint64_t(kReorderWindow - 1) * ep.mtu;
            fi.win = fi.win == 0 ? placeable : std::min<uint64_t>(fi.win, placeable);
        }
        fi.standalone_fct_ns = standalone_fct_ns(m, fi.size, ep.mtu);
        b.flow.push_back(fi);
        b.flow_paths.push_back(paths);
        b.qp.push_back(QpState{});
        RxState rx{};
        rx.milestone = ep.ack_interval;  // RdmaHw::GetRxQp: the first ACK is due after one interval
        b.rx.push_back(rx);
        b.retx.push_back(RetxRange{});
        b.recovery.push_back(QpRecovery{});
        // The flow's own CC's row is written; the others are grown untouched (CcTable: never read).
#define ORRERY_CC_OWN_ROW(Name, name, id, ref, State, ...) \
    if (ep.cc_mode == k##Name) b.name.push_back(State{});  \
    else b.name.resize(b.name.size() + 1);
        ORRERY_CC_LIST(ORRERY_CC_OWN_ROW)
#undef ORRERY_CC_OWN_ROW
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
    }
}

using FactsCache = std::map<std::pair<const Fabric*, uint32_t>, FabricFacts>;

// One experiment laid after the ones before it in every table.
void add_experiment(Batch& b, uint32_t e, const ExperimentInput& in, FactsCache& facts_cache) {
    const Scenario& s = *in.scenario;
    const Fabric& f = *in.fabric;
    const std::string where = s.source.empty() ? in.id : s.source;
    ExperimentParams ep = make_params(s);
    ep.port_base = uint32_t(b.port.size());
    ep.node_base = uint32_t(b.node_experiment.size());
    b.params.push_back(ep);
    b.qlen_hist.emplace_back();

    ExperimentSlice slice;
    slice.id = in.id;
    slice.fabric = &f;
    slice.skipping = s.skipping;
    if (s.skipping.enabled && s.network.out_of_order)
        throw InputError(where + ": skipping", "steady-state skipping fast-forwards in-order delivery (a receiver's reorder state is not carried through a "
                                               "skip): set network.nic.delivery to \"in_order\" or skipping.enabled to false");
    if (s.skipping.enabled && s.network.load_balancing != LoadBalancing::ecmp)
        throw InputError(where + ": skipping", "steady-state skipping partitions the fabric by the ports each flow crosses, which needs fixed per-flow "
                                               "paths: set network.load_balancing to \"ecmp\" or skipping.enabled to false");
    b.released.emplace_back();
    slice.node_begin = uint32_t(b.node_experiment.size());
    slice.port_begin = uint32_t(b.port.size());
    slice.flow_begin = uint32_t(b.flow.size());
    const uint32_t node0 = slice.node_begin, port0 = slice.port_begin;
    slice.lookahead = lookahead_of(f, where);

    const uint64_t nic_rate = add_nodes(b, e, f, port0, where);
    add_ports(b, f, s, node0, port0);
    for (NodeId n = 0; n < f.node_count(); ++n)
        if (f.node_kind[n] == NodeKind::network_switch) configure_switch(b, f, s, ep, n, node0, port0, nic_rate);

    auto cached = facts_cache.find({&f, ep.mtu});
    if (cached == facts_cache.end()) cached = facts_cache.emplace(std::make_pair(&f, ep.mtu), fabric_facts(b, f, node0, ep.mtu)).first;
    slice.max_rtt_ns = cached->second.max_rtt_ns;
    slice.max_bdp = cached->second.max_bdp;
    bool by_table = false;
    const Routes routes = add_fabric_events(b, slice, f, s, cached->second.routes, port0, by_table);
    if (slice.next_change < slice.changes.size() && s.skipping.enabled)
        throw InputError(where + ": skipping", "steady-state skipping fast-forwards a fabric that stays as it is, and topology.events change it "
                                               "during the run: set skipping.enabled to false, or give the events at \"0us\" (the fabric as it starts)");
    add_routing_tables(b, f, s, routes, by_table);
    // Routing tables of later epochs were appended before the first: their offsets stay valid (cells are added
    // only at the end), and group_count is the same for every epoch (a host's links always count).
    add_flows(b, in, ep, routes, slice);

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

}  // namespace

Batch compile_batch(const std::vector<ExperimentInput>& inputs, std::unique_ptr<BlockArena> arena, PacketSlots slots) {
    const BatchSize n = size_batch(inputs);
    Batch b;
    reserve_columns(b, n);
    b.arena = packet_arena(inputs, std::move(arena), slots, n.ports);
    FactsCache facts_cache;
    for (uint32_t e = 0; e < inputs.size(); ++e) add_experiment(b, e, inputs[e], facts_cache);
    b.node_port_begin.push_back(uint32_t(b.port.size()));
    b.node_tree_begin.push_back(uint32_t(b.port_tree.size()));
    return b;
}

}  // namespace orrery
