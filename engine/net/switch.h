#pragma once
// A switch, processed as one unit in timestamp order within a step, so its shared buffer, PFC and ECN
// state are exact: every arrival and every dequeue of the switch happens in the order of its time.
//
// Model (reference/ns3-hpcc README §5 and the reference's SwitchNode / SwitchMmu / BEgressQueue):
//  - 8 egress queues per port; queue 0 (PFC frames) strict priority and never paused, 1..7 round robin,
//    skipping classes paused by the peer.
//  - Ingress accounting per (port, priority) with a reserve (pfc.port_reserve, 4096 B), headroom rate·delay/8·3,
//    and the dynamic threshold (buffer − Σheadroom − Σreserve − shared_used) >> shift, or a static one
//    (pfc.dynamic_threshold false); pause when headroom is in use or shared use reaches the threshold;
//    resume on dequeue when headroom is empty and shared use is 0 or + resume offset (3072 B) ≤ threshold.
//    A packet is dropped when headroom overflows (counted). With PFC off (pfc.enabled false) the switch still
//    sends its pause and resume frames, as the reference's switches do, but receivers ignore them (the
//    reference's QbbEnabled false), so headroom fills and overflows: the fabric is lossy.
//  - ECN at dequeue on the port's remaining egress bytes: > kmax mark; kmin < Q ≤ kmax mark with probability
//    pmax·(Q−kmin)/(kmax−kmin), drawn from a counter-based generator (the reference draws from ns-3's
//    global stream, so marks match in distribution, not draw for draw).
//  - HPCC INT: at dequeue of a data packet, push (time, tx bytes before it, queue bytes after it, rate).
#include "net/link.h"
#include "topology/ecmp_hash.h"

namespace orrery::net {

// ---- buffer (SwitchMmu) -----------------------------------------------------------------------------------
ORRERY_HD inline uint32_t pfc_threshold(const SwitchMmu& s, const PortMmu& m) {
    if (s.static_threshold) return s.static_threshold;
    return (s.buffer_size - s.total_hdrm - s.total_rsrv - s.shared_used) >> m.pfc_shift;
}
// The class q (1..7) functions below: class 0 takes no buffer (state.h, PortMmu).
ORRERY_HD inline uint32_t shared_used(const SwitchMmu& s, const PortMmu& m, int q) {
    const uint32_t ingress = class_buffer(m, q).ingress_bytes;
    return ingress > s.port_reserve ? ingress - s.port_reserve : 0;
}
ORRERY_HD inline bool ingress_admits(const SwitchMmu& s, const PortMmu& m, int q, uint32_t size) {
    return !(size + class_buffer(m, q).hdrm_bytes > m.headroom && size + shared_used(s, m, q) > pfc_threshold(s, m));
}
ORRERY_HD inline void ingress_add(SwitchMmu& s, PortMmu& m, int q, uint32_t size) {
    ClassBuffer& c = class_buffer(m, q);
    const uint32_t now_bytes = c.ingress_bytes + size;
    const uint32_t reserve = s.port_reserve;
    if (now_bytes <= reserve) {
        c.ingress_bytes += size;
    } else if (now_bytes - reserve > pfc_threshold(s, m)) {
        c.hdrm_bytes += size;
    } else {
        c.ingress_bytes += size;
        s.shared_used += size < now_bytes - reserve ? size : now_bytes - reserve;
    }
}
ORRERY_HD inline void ingress_remove(SwitchMmu& s, PortMmu& m, int q, uint32_t size) {
    ClassBuffer& c = class_buffer(m, q);
    const uint32_t from_hdrm = c.hdrm_bytes < size ? c.hdrm_bytes : size;
    const uint32_t over = c.ingress_bytes > s.port_reserve ? c.ingress_bytes - s.port_reserve : 0;
    const uint32_t from_shared = size - from_hdrm < over ? size - from_hdrm : over;
    c.hdrm_bytes -= from_hdrm;
    c.ingress_bytes -= size - from_hdrm;
    s.shared_used -= from_shared;
}
ORRERY_HD inline bool should_pause(const SwitchMmu& s, const PortMmu& m, int q) {
    return !(m.ingress_paused & (1u << q)) && (class_buffer(m, q).hdrm_bytes > 0 || shared_used(s, m, q) >= pfc_threshold(s, m));
}
ORRERY_HD inline bool should_resume(const SwitchMmu& s, const PortMmu& m, int q) {
    if (!(m.ingress_paused & (1u << q))) return false;
    const uint32_t used = shared_used(s, m, q);
    return class_buffer(m, q).hdrm_bytes == 0 && (used == 0 || used + s.resume_offset <= pfc_threshold(s, m));
}

// ---- queues -------------------------------------------------------------------------------------------------
ORRERY_HD inline void queue_push(NetView& v, uint32_t node, uint32_t row, int q, const Packet& p) {
    if (!fifo_push(v.store, v.out[node].blocks_held, v.queues[row].fifo[q], p)) {
        v.out[node].events_overflow |= 4u;
        return;
    }
    PortTx& tx = v.tx[row];
    tx.queued |= uint8_t(1u << q);
    tx.queued_bytes += p.wire;
}

ORRERY_HD inline Packet queue_pop(NetView& v, uint32_t node, uint32_t row, int q) {
    BlockFifo& fifo = v.queues[row].fifo[q];
    const Packet p = fifo_pop(v.store, v.out[node].blocks_held, fifo);
    PortTx& tx = v.tx[row];
    if (fifo_empty(fifo)) tx.queued &= uint8_t(~(1u << q));
    tx.queued_bytes -= p.wire;
    return p;
}

ORRERY_HD inline uint32_t int_rate_code(uint64_t bps) {
    switch (bps) {
        case 25000000000ull: return 0;
        case 50000000000ull: return 1;
        case 100000000000ull: return 2;
        case 200000000000ull: return 3;
        case 400000000000ull: return 4;
        default: return 5;  // the reference prints an error and leaves the field; its line rate then reads as 0
    }
}

ORRERY_HD inline void int_push(Packet& p, int64_t now_ps, uint64_t tx_bytes, uint32_t qlen, uint64_t bps, uint32_t multi) {
    IntHop& h = p.hops[p.nhop % kMaxIntHops];
    const uint64_t time = uint64_t(now_ps / 1000) & ((1ull << IntHop::kTimeWidth) - 1);
    const uint64_t bytes = (tx_bytes / (128ull * multi)) & ((1ull << IntHop::kBytesWidth) - 1);
    const uint64_t q = (qlen / (80ull * multi)) & ((1ull << IntHop::kQlenWidth) - 1);
    h.bits = int_rate_code(bps) | (time << 3) | (bytes << 27) | (q << 47);
    ++p.nhop;
}

ORRERY_HD void switch_start_next_idle(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, const PortEvent& at);

// DequeueAndTransmit of a switch port: nothing while it is busy. The test is inlined into each caller, so
// that a packet queued behind a transmission (most of a loaded port's arrivals) does not pay the body's
// prologue and epilogue.
ORRERY_HD ORRERY_HOT_INLINE inline void switch_start_next(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, const PortEvent& at) {
    if (v.tx[row].busy) return;
    switch_start_next_idle(v, node, ep, row, at);
}

// A switch port that started sending with nothing queued gets no completion event (link.h, transmit_start):
// that event would find nothing to send, and on a fabric at load it is one event in ten. Before anything is
// queued at such a port, or its idleness is asked, it is settled against the event under way (`at`): idle if
// its completion would have been handled before `at` in the node's order, else the completion event is put back.
// At the step's end the node closes those still open (node.h, close_completions).
ORRERY_HD inline bool sending_without_completion_event(const NetView& v, uint32_t row) { return v.tx[row].busy && v.times[row].tx_done == kNever; }

ORRERY_HD inline void switch_settle(NetView& v, uint32_t node, uint32_t row, const PortEvent& at) {
    if (!sending_without_completion_event(v, row)) return;
    PortTx& tx = v.tx[row];
    PortTimes& t = v.times[row];
    if (earlier(PortEvent{tx.busy_until, t.busy_since, row, kSrcTxDone}, at)) {
        tx.busy = 0;
        return;
    }
    t.tx_done = tx.busy_until;
    port_event_changed(v, node, row);
}

// The reference's SendPfc: a pause or resume frame into queue 0 of the port toward the upstream device.
ORRERY_HD inline void switch_send_pfc(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, int q, bool pause, const PortEvent& at) {
    Packet f{};
    f.kind = kPfc;
    f.wire = kPfcBytes;
    f.seq = uint32_t(q);
    f.pg = 0;
    f.flags = pause ? kFlagPause : 0;
    switch_settle(v, node, row, at);
    queue_push(v, node, row, 0, f);
    switch_start_next(v, node, ep, row, at);
}

// The queue a port serves next: queue 0 (control frames) strictly first, then round robin over the
// unpaused non-empty queues 1–7, starting after the one served last. Bit arithmetic over the `queued`
// mask (PortTx) rather than a loop over the eight heads: this choice is made once per packet a switch sends.
ORRERY_HD inline int next_queue(uint8_t nonempty, uint8_t paused, uint8_t rr_last) {
    if (nonempty & 1u) return 0;
    const uint32_t eligible = nonempty & ~uint32_t(paused) & 0xFEu;
    if (eligible == 0) return -1;
    const uint32_t start = (rr_last + 1u) % kPriorities;
    const uint32_t rotated = ((eligible >> start) | (eligible << (kPriorities - start))) & 0xFFu;
    return int((lowest_bit(rotated) + start) % kPriorities);
}

// The dequeue side of DequeueAndTransmit for packet p just taken from queue q of port `row`: buffer
// accounting, ECN, resume frames, INT, then the transmission.
ORRERY_HD ORRERY_HOT_INLINE inline void switch_transmit(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, int q, Packet& p, const PortEvent& at) {
    const int64_t now = at.time;
    PortTx& tx = v.tx[row];
    if (q != 0) {
        tx.rr_last = uint8_t(q);
        SwitchMmu& s = v.sw[node];
        const uint32_t in_row = v.node_port_begin[node] + p.in_port;
        PortMmu& in = v.mmu[in_row];
        PortMmu& out = v.mmu[row];
        ingress_remove(s, in, q, p.wire);
        ClassBuffer& leaving = class_buffer(out, q);
        leaving.egress_bytes -= p.wire;
        if (ep.ecn_enabled) {
            const uint32_t e = leaving.egress_bytes;
            bool mark = e > out.kmax;
            if (!mark && e > out.kmin) {
                const double prob = out.pmax * double(e - out.kmin) / double(out.kmax - out.kmin);
                mark = uniform01(ep.seed, row - ep.port_base, tx.ecn_draws++) < prob;
            }
            if (mark) p.flags |= kFlagCe;
        }
        if (should_resume(s, in, q)) {
            in.ingress_paused &= uint8_t(~(1u << q));
            switch_send_pfc(v, node, ep, in_row, q, false, at);
        }
        if (p.kind == kData && ep.ack_int_hops > 1)  // the CC reads INT (net/cc_list.h)
            int_push(p, now, tx.tx_bytes, tx.queued_bytes, v.port[row].rate_bps, ep.hpcc.int_multi);
    }
    tx.tx_bytes += p.wire;
    transmit_start(v, row, p, now, tx.queued != 0);
}

// DequeueAndTransmit of an idle switch port.
ORRERY_HD inline void switch_start_next_idle(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, const PortEvent& at) {
    const PortTx& tx = v.tx[row];
    const int q = next_queue(tx.queued, tx.paused, tx.rr_last);
    if (q < 0) return;
    Packet p = queue_pop(v, node, row, q);
    switch_transmit(v, node, ep, row, q, p, at);
}

// Whether a packet of class q queued at port `row` would be the one its DequeueAndTransmit takes at once:
// the port idle, every queue empty, the class not paused. The port must be settled (switch_settle).
ORRERY_HD inline bool switch_takes_at_once(const NetView& v, uint32_t row, int q) {
    const PortTx& tx = v.tx[row];
    return !tx.busy && tx.queued == 0 && (q == 0 || !(tx.paused & (1u << q)));
}

// Bytes a port still has to put on the wire of the packet it is sending (0 when idle): (busy_until − now) at
// its rate, so that a port half-way through a jumbo frame weighs more than one about to finish. The product
// fits 64 bits: what is left of one packet's serialization, times the rate, is at most its bits × 10^12.
ORRERY_HD inline uint64_t bytes_in_transmission(const NetView& v, uint32_t row, int64_t now) {
    const int64_t left = v.tx[row].busy_until - now;
    return left > 0 ? uint64_t(left) * v.port[row].rate_bps / 8000000000000ull : 0;
}

// Local adaptive routing: of the `n` equal-cost ports, the one with the fewest bytes queued for class q (all
// control frames for class 0) plus the bytes in transmission; a port whose class q the peer has paused counts
// as full. Ties go to the first in the order the hash `draw` rotates the set to, so that equal ports share
// the load and the choice is a pure function of this switch's own ports: the same on every backend.
ORRERY_HD inline uint16_t least_loaded_port(const NetView& v, uint32_t node, int q, const uint16_t* ports, uint32_t n, uint64_t draw, int64_t now) {
    constexpr uint64_t kPaused = uint64_t(1) << 40, kDown = uint64_t(1) << 50;
    const uint32_t base = v.node_port_begin[node];
    uint32_t i = uint32_t((uint64_t(uint32_t(draw)) * n) >> 32);  // draw mod n, by a multiply
    uint16_t best = ports[i];
    uint64_t best_load = ~uint64_t(0);
    for (uint32_t k = 0; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
        const uint32_t row = base + ports[i];
        const PortTx& tx = v.tx[row];
        uint64_t load = (q == 0 ? tx.queued_bytes : class_buffer(v.mmu[row], q).egress_bytes) + bytes_in_transmission(v, row, now);
        if (tx.paused & (1u << q)) load += kPaused;
        if (v.port[row].flags & kPortDown) load += kDown;  // the switch sees its own link fail at once
        if (load < best_load) best_load = load, best = ports[i];
    }
    return best;
}

// Flowlet switching (LetFlow, CONGA): a flow direction keeps the port its slot remembers while its packets
// come closer together than the experiment's gap; after a longer silence, or when another flow took the slot,
// it starts a new flowlet on the least-loaded port.
ORRERY_HD inline uint16_t flowlet_port(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, const uint16_t* ports, uint32_t n,
                                       uint64_t draw, int64_t now) {
    const uint8_t toward_source = p.kind == kData ? 0 : 1;
    const uint64_t slot = mix64(ep.seed ^ (uint64_t(p.flow) << 1 | toward_source)) % kFlowletSlots;
    FlowletEntry& e = v.flowlet[ep.flowlet_table + uint64_t(v.node_forwarder[node]) * kFlowletSlots + slot];
    if (e.flow != p.flow || e.toward_source != toward_source || now - e.last >= ep.flowlet_gap ||
        (v.port[v.node_port_begin[node] + e.port].flags & kPortDown)) {
        e.flow = p.flow;
        e.toward_source = toward_source;
        e.port = least_loaded_port(v, node, p.pg, ports, n, draw, now);
    }
    e.last = now;
    return e.port;
}

// switch_egress's answer for a packet that cannot leave: its port's link is down, or there is no route.
inline constexpr uint16_t kDropPacket = 0xffff;

// One of the equal-cost ports toward the packet's destination from the experiment's current routing table, as
// its mode picks (kDropPacket: none usable). Spraying hashes (seed, flow, sequence, direction, switch) with a
// counter-based hash; ECMP by table hashes the five-tuple as the reference does at compile (flow_path), so it
// picks what the compiled path would from the same table. Every choice is the same on every backend and
// thread count.
ORRERY_HD inline uint16_t table_port(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, uint32_t cell, int64_t now) {
    const FlowInfo& f = v.flow[p.flow];
    const uint16_t* ports = v.set_ports + v.set_begin[cell];
    const uint32_t n = v.set_begin[cell + 1] - v.set_begin[cell];
    const uint32_t* weights = v.set_weights + v.set_begin[cell];
    if (ep.load_balancing == kLbEcmpTable) {
        if (n == 1) return ports[0];
        const uint32_t hash = p.kind == kData ? ecmp_hash(f.sip, f.dip, f.sport, f.dport, node - ep.node_base)
                                              : ecmp_hash(f.dip, f.sip, f.dport, f.sport, node - ep.node_base);
        return ports[ep.weighted ? weighted_index(weights, n, hash) : hash % n];
    }
    const uint64_t key = (uint64_t(p.flow) << 32) ^ p.seq ^ (uint64_t(p.kind) << 62);
    const uint64_t at = uint64_t(node - ep.node_base) << 40;
    // The load-aware modes hash only to break ties: one round of mixing does.
    if (ep.load_balancing == kLbAdaptive) return least_loaded_port(v, node, p.pg, ports, n, mix64(ep.seed ^ key ^ at), now);
    if (ep.load_balancing == kLbFlowlet) return flowlet_port(v, node, ep, p, ports, n, mix64(ep.seed ^ key ^ at), now);
    const uint64_t draw = mix64(ep.seed ^ mix64(key) ^ at);
    return ports[ep.weighted ? weighted_index(weights, n, draw) : draw % n];
}

// The egress of a packet at a switch of an experiment that does not forward by compiled ECMP paths. A port
// whose link is down takes nothing: what ECMP or spraying would send there is lost (until routing converges
// around it), while the load-aware modes never pick it while another is up.
ORRERY_HD ORRERY_COLD_CALL inline uint16_t switch_egress(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, int64_t now) {
    const FlowInfo& f = v.flow[p.flow];
    const uint32_t dest = p.kind == kData ? f.dst : f.src;
    const uint32_t cell = v.spray_set[ep.spray_table + v.node_forwarder[node] * ep.group_count + v.node_dest_group[dest]];
    if (cell == kNoRoute) return kDropPacket;
    // Attached to the destination host: the far end of its one network port (compile refuses more).
    const uint16_t port = cell == kNoRow ? v.port[v.port[v.nic[dest].port].peer_port].local : table_port(v, node, ep, p, cell, now);
    return (v.port[v.node_port_begin[node] + port].flags & kPortDown) ? kDropPacket : port;
}

// A packet has fully arrived at switch port `in_row`; p is its slot in the ring it came from (ring_pop), read
// and updated in place (its hop and ingress port) before it is copied into a queue or onto the next link.
// `at` is the packet's arrival event.
ORRERY_HD ORRERY_HOT_INLINE inline void switch_receive(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t in_row, Packet& p, const PortEvent& at) {
    const int64_t now = at.time;
    if (p.kind == kPfc) {
        if (receive_pfc(v, node, in_row, p, now, 1)) switch_start_next(v, node, ep, in_row, at);
        return;
    }
    uint16_t egress;
    if (ep.load_balancing == kLbEcmp) {
        const FlowPaths& f = v.flow_paths[p.flow];
        egress = v.path_ports[(p.kind == kData ? f.data_path : f.ack_path) + p.hop];
        ++p.hop;
    } else {
        egress = switch_egress(v, node, ep, p, now);
        if (egress == kDropPacket) {
            ++v.out[node].sent_into_failures;
            return;
        }
    }
    const uint32_t out_row = v.node_port_begin[node] + egress;
    const int q = p.pg;
    p.in_port = v.port[in_row].local;
    if (q != 0) {
        SwitchMmu& s = v.sw[node];
        PortMmu& in = v.mmu[in_row];
        if (!ingress_admits(s, in, q, p.wire)) {
            ++s.drops;
            return;
        }
        ingress_add(s, in, q, p.wire);
        class_buffer(v.mmu[out_row], q).egress_bytes += p.wire;
        if (should_pause(s, in, q)) {
            in.ingress_paused |= uint8_t(1u << q);
            switch_send_pfc(v, node, ep, in_row, q, true, at);
        }
    }
    // Cut-through: an idle port with nothing queued would take this packet straight back out of the queue
    // (the same accounting, with the queue's bytes back at 0 for INT), so skip the copies into and out of it.
    switch_settle(v, node, out_row, at);
    if (switch_takes_at_once(v, out_row, q)) {
        switch_transmit(v, node, ep, out_row, q, p, at);
        return;
    }
    queue_push(v, node, out_row, q, p);
    switch_start_next(v, node, ep, out_row, at);
}

// One queue-monitor sample of every port: egress bytes summed over the queues, in 1 KB buckets.
ORRERY_HD inline void switch_sample_queues(NetView& v, uint32_t node) {
    for (uint32_t row = v.node_port_begin[node]; row < v.node_port_begin[node + 1]; ++row) {
        uint32_t bucket = egress_bytes_total(v.mmu[row]) / 1000;
        if (bucket >= v.qlen_buckets[row]) bucket = v.qlen_buckets[row] - 1;
        ++v.qlen_hist[v.node_experiment[node]][v.qlen_offset[row] + bucket];
    }
}

}  // namespace orrery::net
