#pragma once
// A host NIC, processed in timestamp order within a step (the reference's RdmaHw + QbbNetDevice on hosts).
//  - Receive: one ACK per data packet (L2_ACK_INTERVAL 1), the CNP as a flag on the ACK of a CE-marked
//    packet, NACK on a gap (at most one per 500 µs for the same expected byte), duplicates ignored.
//  - Send: the ACK queue first (unless its PFC class is paused), then round robin over queue pairs that
//    are not paused, not window-bound and whose pacing time has come; pacing = serialization time of the
//    packet at the QP's rate. When nothing may send, a retry is scheduled at the earliest pacing time.
#include "net/cc.h"
#include "net/link.h"

namespace orrery::net {

ORRERY_HD inline uint32_t data_wire_bytes(uint32_t payload, const ExperimentParams& ep) { return payload + ep.data_header; }
ORRERY_HD inline uint32_t packet_payload(const Packet& p, const ExperimentParams& ep) { return p.wire - ep.data_header; }

// RdmaEgressQueue::GetNextQindex: -1 = the ACK queue, -1024 = nothing, else a position in the QP list.
// Finished QPs seen while scanning are removed from the list, exactly as the reference compacts it.
ORRERY_HD inline int nic_next_queue(NetView& v, uint32_t node, const ExperimentParams& ep, int64_t now) {
    NicState& nic = v.nic[node];
    const PortTx& tx = v.tx[nic.port];
    if (!(tx.paused & (1u << ep.ack_pause_class)) && !fifo_empty(nic.acks)) return -1;
    uint32_t* qps = v.nic_qps + nic.qp_offset;
    const uint32_t count = nic.qp_count;
    int res = -1024;
    uint32_t min_finished = kNoRow;
    for (uint32_t i = 1; i <= count; ++i) {
        const uint32_t idx = (i + nic.rr_last) % count;
        const uint32_t f = qps[idx];
        const QpState& q = v.qp[f];
        const FlowInfo& info = v.flow[f];
        if (!(tx.paused & (1u << info.pg)) && qp_bytes_left(q, info) > 0 && !qp_window_bound(q, info, ep)) {
            if (q.next_avail > now) continue;
            res = int(idx);
            break;
        } else if (qp_finished(q, info)) {
            if (idx < min_finished) min_finished = idx;
        }
    }
    if (min_finished != kNoRow) {
        uint32_t next = min_finished;
        for (uint32_t i = min_finished + 1; i < count; ++i) {
            const uint32_t f = qps[i];
            if (!qp_finished(v.qp[f], v.flow[f])) {
                if (int(i) == res) res = int(next);
                qps[next++] = qps[i];
            }
        }
        nic.qp_count = next;
    }
    return res;
}

// QbbNetDevice::DequeueAndTransmit on a host whose port is idle.
ORRERY_HD inline void nic_start_next_idle(NetView& v, uint32_t node, const ExperimentParams& ep, int64_t now) {
    NicState& nic = v.nic[node];
    const int idx = nic_next_queue(v, node, ep, now);
    if (idx == -1) {
        const Packet a = fifo_pop(v.store, v.out[node].blocks_held, nic.acks);
        transmit_start(v, nic.port, a, now);
        return;
    }
    if (idx >= 0) {
        const uint32_t f = v.nic_qps[nic.qp_offset + uint32_t(idx)];
        nic.rr_last = uint32_t(idx);
        QpState& q = v.qp[f];
        const FlowInfo& info = v.flow[f];
        uint64_t payload = qp_bytes_left(q, info);
        if (payload > ep.mtu) payload = ep.mtu;
        Packet p{};
        p.kind = kData;
        p.flow = f;
        p.seq = uint32_t(q.snd_nxt);
        p.wire = uint16_t(data_wire_bytes(uint32_t(payload), ep));
        p.pg = info.pg;
        p.hop = 1;  // path position 0 is this NIC's own port
        if (ep.send_time_stamped) p.sent_ns = uint64_t(now / 1000);
        q.snd_nxt += payload;
        transmit_start(v, nic.port, p, now);
        // RdmaHw::PktSent: pace the QP by its packet's serialization time at its rate.
        q.last_pkt_size = p.wire;
        q.next_avail = now + tx_time_ns(p.wire, ep.rate_bound ? q.rate : q.max_rate) * 1000;
        return;
    }
    int64_t t = kNever;
    for (uint32_t i = 0; i < nic.qp_count; ++i) {
        const uint32_t f = v.nic_qps[nic.qp_offset + i];
        if (qp_bytes_left(v.qp[f], v.flow[f]) == 0) continue;
        t = imin(t, v.qp[f].next_avail);
    }
    if (nic.next_send == kNever && t < kNever && t > now) {
        nic.next_send = t;
        nic.next_send_scheduled = now;
    }
}

// QbbNetDevice::DequeueAndTransmit on a host: nothing while its port is busy. The test is inlined into each
// caller so that the calls on a busy port (every ACK that reaches a sender sending at line rate) do not pay
// the body's prologue and epilogue: 19 instructions each way, 2 % of the k = 8 ring's instructions.
ORRERY_HD ORRERY_HOT_INLINE inline void nic_start_next(NetView& v, uint32_t node, const ExperimentParams& ep, int64_t now) {
    if (v.tx[v.nic[node].port].busy) return;
    nic_start_next_idle(v, node, ep, now);
}

ORRERY_HD inline void nic_enqueue_ack(NetView& v, uint32_t node, const Packet& a) {
    if (!fifo_push(v.store, v.out[node].blocks_held, v.nic[node].acks, a)) v.out[node].events_overflow |= 8u;
}

// RdmaHw::ReceiveUdp and ReceiverCheckSeq.
ORRERY_HD inline void nic_receive_data(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, int64_t now) {
    RxState& rx = v.rx[p.flow];
    int x;
    const uint64_t expected = rx.expected;
    if (p.seq == expected) {
        rx.expected = expected + packet_payload(p, ep);
        // The flow's last packet is always acknowledged: with ACKs every few packets and a size that is not a
        // whole number of intervals the sender would otherwise never see its flow complete.
        if (rx.expected >= rx.milestone || rx.expected >= v.flow[p.flow].size) {
            rx.milestone += ep.ack_interval;
            x = 1;
        } else {
            x = ep.chunk != 0 && rx.expected % ep.chunk == 0 ? 1 : 5;
        }
    } else if (p.seq > expected) {
        if (now >= rx.nack_timer || rx.last_nack != expected) {
            rx.nack_timer = now + ep.nack_interval_ps;
            rx.last_nack = expected;
            if (ep.back_to_zero && ep.chunk != 0) rx.expected = rx.expected / ep.chunk * ep.chunk;
            x = 2;
        } else {
            x = 4;
        }
    } else {
        x = 3;
    }
    if (x != 1 && x != 2) return;
    Packet a{};
    a.kind = x == 1 ? kAck : kNack;
    a.flow = p.flow;
    a.seq = uint32_t(rx.expected);
    a.pg = p.pg;
    a.hop = 1;
    a.flags = (p.flags & kFlagCe) ? kFlagCnp : 0;
    a.wire = ep.ack_wire;
    a.nhop = p.nhop;
    // The INT (or TIMELY's timestamp, in the first hop's place) rides back; only HPCC's batches store the hops.
    for (int i = 0; i < ep.ack_int_hops; ++i) a.hops[i] = p.hops[i];
    nic_enqueue_ack(v, node, a);
    nic_start_next(v, node, ep, now);
}

// RdmaHw::ReceiveAck (ACK and NACK).
ORRERY_HD inline void nic_receive_ack(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& a, int64_t now) {
    const uint32_t f = a.flow;
    QpState& q = v.qp[f];
    if (q.phase != kActive) return;  // the reference no longer finds a completed QP and ignores the ACK
    const FlowInfo& info = v.flow[f];
    const uint64_t seq = ep.back_to_zero && ep.chunk != 0 ? uint64_t(a.seq) / ep.chunk * ep.chunk : uint64_t(a.seq);
    if (seq > q.snd_una) q.snd_una = seq;
    if (qp_finished(q, info)) {
        q.phase = kDone;
        q.finish = now;
        q.completion_order = v.nic[node].completions++;
        ++v.out[node].completions;
        cc_finish(v, f, ep);
    }
    if (a.kind == kNack) q.snd_nxt = q.snd_una;
    cc_ack(v, node, f, ep, a, (a.flags & kFlagCnp) != 0, now);
    nic_start_next(v, node, ep, now);
}

ORRERY_HD inline void nic_receive(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t row, const Packet& p, int64_t now) {
    if (p.kind == kPfc) {
        if (receive_pfc(v, node, row, p, now, 0)) nic_start_next(v, node, ep, now);
        return;
    }
    if (p.kind == kData) nic_receive_data(v, node, ep, p, now);
    else nic_receive_ack(v, node, ep, p, now);
}

// RdmaHw::AddQueuePair + QbbNetDevice::NewQp for the next flow of this NIC.
ORRERY_HD inline void nic_start_flow(NetView& v, uint32_t node, const ExperimentParams& ep, uint32_t f, int64_t now) {
    NicState& nic = v.nic[node];
    QpState& q = v.qp[f];
    const uint64_t line = v.port[nic.port].rate_bps;
    q.phase = kActive;
    q.rate = q.max_rate = line;
    q.next_avail = now;
    cc_start(v, f, ep, line);
    v.nic_qps[nic.qp_offset + nic.qp_count++] = f;
    nic_start_next(v, node, ep, now);
}

}  // namespace orrery::net
