#pragma once
// A host NIC, processed in timestamp order within a step (the reference's RdmaHw + QbbNetDevice on hosts).
//  - Receive: one ACK per data packet (L2_ACK_INTERVAL 1), the CNP as a flag on the ACK of a CE-marked
//    packet, NACK on a gap (at most one per 500 µs for the same expected byte), duplicates ignored.
//  - Send: the ACK queue first (unless its PFC class is paused), then round robin over queue pairs that
//    are not paused, not window-bound and whose pacing time has come; pacing = serialization time of the
//    packet at the QP's rate. When nothing may send, a retry is scheduled at the earliest pacing time.
//  - Out-of-order delivery (ExperimentParams::out_of_order; engine/net/README.md, "NIC delivery"): the
//    receiver places packets up to kReorderWindow MTUs past the next expected byte, acknowledges
//    cumulatively, and reports a hole with a selective NACK (its start and length in packets) once
//    kReorderNackAfter packets past it have arrived; the sender resends only that range, before new data.
#include "net/cc.h"
#include "net/link.h"

namespace orrery::net {

ORRERY_HD inline uint32_t data_wire_bytes(uint32_t payload, const ExperimentParams& ep) { return payload + ep.data_header; }
ORRERY_HD inline uint32_t packet_payload(const Packet& p, const ExperimentParams& ep) { return p.wire - ep.data_header; }

// Retransmission timeouts in a row, with no progress between them, after which a QP gives up (InfiniBand's
// retry_cnt at its largest, 7, as NCCL sets it): its flow is left unfinished.
inline constexpr uint32_t kRetryLimit = 7;

// Out-of-order delivery: a hole is reported once a packet this many MTUs past it has arrived, 7/8 of the reorder
// bitmap. On a lossless fabric a hole is far more often a packet still queued on a longer path than a lost one,
// and a report of a late packet resends its whole range (the hole's packets, up to 255) for nothing; a real
// loss is reported as soon as the sender, which keeps sending up to the bitmap's width past its cumulative
// point, has sent this many more (docs/history/fabric-features.md has what smaller thresholds cost).
inline constexpr uint32_t kReorderNackAfter = 224;

// The sender's range to resend (out-of-order delivery), less what was acknowledged since it was reported.
ORRERY_HD inline bool retx_pending(RetxRange& r, const QpState& q) {
    if (r.next < q.snd_una) r.next = q.snd_una;
    return r.next < r.end;
}

// Sending begins with nothing in flight: the QP's timeout counts from now, and the NIC's check is due by then.
ORRERY_HD inline void nic_arm_timeout(NicState& nic, QpRecovery& r, const ExperimentParams& ep, int64_t now) {
    r.progress = now;
    if (nic.timeout_check == kNever) {
        nic.timeout_check = now + ep.retransmit_timeout_ps;
        nic.timeout_check_scheduled = now;
    }
}

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
        const bool sends_new = qp_bytes_left(q, info) > 0 && !qp_window_bound(q, info, ep);
        if (!(tx.paused & (1u << info.pg)) && (sends_new || (ep.out_of_order && retx_pending(v.retx[f], q)))) {
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
        uint64_t seq = q.snd_nxt;
        RetxRange* resend = nullptr;
        if (ep.out_of_order && retx_pending(v.retx[f], q)) {  // a reported hole goes first
            resend = &v.retx[f];
            seq = resend->next;
            payload = info.size - seq;
        }
        if (payload > ep.mtu) payload = ep.mtu;
        Packet p{};
        p.kind = kData;
        p.flow = f;
        p.seq = uint32_t(seq);
        p.wire = uint16_t(data_wire_bytes(uint32_t(payload), ep));
        p.pg = info.pg;
        p.hop = 1;  // path position 0 is this NIC's own port
        if (ep.send_time_stamped) p.sent_ns = uint64_t(now / 1000);
        QpRecovery& r = v.recovery[f];
        if (seq + payload <= r.high_water) ++r.retransmits;
        else r.high_water = seq + payload;
        if (ep.retransmit_timeout_ps != 0 && q.snd_nxt == q.snd_una && !resend) nic_arm_timeout(nic, r, ep, now);
        if (resend) resend->next += payload;
        else q.snd_nxt += payload;
        transmit_start(v, nic.port, p, now);
        // RdmaHw::PktSent: pace the QP by its packet's serialization time at its rate.
        q.last_pkt_size = p.wire;
        q.next_avail = now + tx_time_ns(p.wire, ep.rate_bound ? q.rate : q.max_rate) * 1000;
        return;
    }
    int64_t t = kNever;
    for (uint32_t i = 0; i < nic.qp_count; ++i) {
        const uint32_t f = v.nic_qps[nic.qp_offset + i];
        if (qp_bytes_left(v.qp[f], v.flow[f]) == 0 && !(ep.out_of_order && retx_pending(v.retx[f], v.qp[f]))) continue;
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

// The ACK or NACK of data packet p, carrying what the receiver expects next; `holes` (a selective NACK of
// out-of-order delivery): how many packets from there are missing.
ORRERY_HD inline void nic_send_ack(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, PacketKind kind, uint64_t expected,
                                   uint8_t holes, int64_t now) {
    Packet a{};
    a.kind = kind;
    a.flow = p.flow;
    a.seq = uint32_t(expected);
    a.reserved = holes;
    a.pg = ep.ack_switch_class == 0xFF ? p.pg : ep.ack_switch_class;
    a.hop = 1;
    a.flags = (p.flags & kFlagCe) ? kFlagCnp : 0;
    a.wire = ep.ack_wire;
    a.nhop = p.nhop;
    // The INT (or TIMELY's timestamp, in the first hop's place) rides back; only HPCC's batches store the hops.
    for (int i = 0; i < ep.ack_int_hops; ++i) a.hops[i] = p.hops[i];
    nic_enqueue_ack(v, node, a);
    nic_start_next(v, node, ep, now);
}

// The reorder bitmap moved on by n ≤ 64 packets (RxState::placed).
ORRERY_HD inline void placed_shift(RxState& rx, uint32_t n) {
    constexpr int kWords = kReorderWindow / 64;
    if (n == 0) return;
    for (int i = 0; i < kWords; ++i) {
        const uint64_t upper = i + 1 < kWords ? rx.placed[i + 1] : 0;
        rx.placed[i] = n == 64 ? upper : (rx.placed[i] >> n) | (upper << (64 - n));
    }
}

// Out-of-order delivery's receiver: the packet is placed wherever it belongs within the window; `expected`
// moves past every packet placed in a row; an ACK as the in-order receiver sends it, or a selective NACK of
// the hole at `expected` once a packet kReorderNackAfter MTUs past it has arrived (at most one per NACK
// interval for the same hole). Packets beyond the window, and duplicates, are dropped; a duplicate behind the
// cumulative point is acknowledged when a retransmission timeout may have resent it.
ORRERY_HD ORRERY_COLD_CALL inline void nic_receive_unordered(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, int64_t now) {
    RxState& rx = v.rx[p.flow];
    const uint64_t size = v.flow[p.flow].size;
    if (p.seq < rx.expected) {  // a duplicate: acknowledged where a timeout may have resent it (nic_receive_data)
        if (ep.retransmit_timeout_ps != 0) nic_send_ack(v, node, ep, p, kAck, rx.expected, 0, now);
        return;
    }
    const uint64_t offset = (p.seq - rx.expected) / ep.mtu;
    if (offset == 0) {
        rx.expected += packet_payload(p, ep);
        placed_shift(rx, 1);
        for (;;) {  // the packets already placed behind it
            const uint64_t gaps = ~rx.placed[0];
            const uint32_t run = gaps == 0 ? 64 : uint32_t(gaps) != 0 ? lowest_bit(uint32_t(gaps)) : 32 + lowest_bit(uint32_t(gaps >> 32));
            if (run == 0) break;
            const uint64_t bytes = uint64_t(run) * ep.mtu;
            rx.expected = rx.expected + bytes < size ? rx.expected + bytes : size;
            placed_shift(rx, run);
        }
        if (rx.expected >= rx.milestone || rx.expected >= size) {
            rx.milestone = (rx.expected / ep.ack_interval + 1) * ep.ack_interval;
            nic_send_ack(v, node, ep, p, kAck, rx.expected, 0, now);
        } else if (ep.chunk != 0 && rx.expected % ep.chunk == 0) {
            nic_send_ack(v, node, ep, p, kAck, rx.expected, 0, now);
        }
        return;
    }
    if (offset >= kReorderWindow) return;
    uint64_t& word = rx.placed[offset / 64];
    const uint64_t bit = uint64_t(1) << (offset % 64);
    if (word & bit) return;
    word |= bit;
    if (offset >= kReorderNackAfter && (now >= rx.nack_timer || rx.last_nack != rx.expected)) {
        rx.nack_timer = now + ep.nack_interval_ps;
        rx.last_nack = rx.expected;
        uint32_t missing = 1;  // from `expected` to the first packet placed
        while (missing < kReorderWindow && missing < 255 && !(rx.placed[missing / 64] >> (missing % 64) & 1u)) ++missing;
        nic_send_ack(v, node, ep, p, kNack, rx.expected, uint8_t(missing), now);
    } else if (ep.ack_interval <= 1) {
        nic_send_ack(v, node, ep, p, kAck, rx.expected, 0, now);  // its CC signals (ECN echo, INT, timestamp)
    }
}

// RdmaHw::ReceiveUdp and ReceiverCheckSeq.
ORRERY_HD inline void nic_receive_data(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& p, int64_t now) {
    if (ep.out_of_order) {
        nic_receive_unordered(v, node, ep, p, now);
        return;
    }
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
        // A duplicate. The reference ignores it; with a retransmission timeout it is acknowledged, as an
        // InfiniBand responder acknowledges a duplicate request, or a sender whose last ACK was lost would time
        // out for good.
        x = ep.retransmit_timeout_ps != 0 ? 1 : 3;
    }
    if (x != 1 && x != 2) return;
    nic_send_ack(v, node, ep, p, x == 1 ? kAck : kNack, rx.expected, 0, now);
}

// RdmaHw::ReceiveAck (ACK and NACK).
ORRERY_HD inline void nic_receive_ack(NetView& v, uint32_t node, const ExperimentParams& ep, const Packet& a, int64_t now) {
    const uint32_t f = a.flow;
    QpState& q = v.qp[f];
    if (q.phase != kActive) return;  // the reference no longer finds a completed QP and ignores the ACK
    const FlowInfo& info = v.flow[f];
    const uint64_t seq = ep.back_to_zero && ep.chunk != 0 ? uint64_t(a.seq) / ep.chunk * ep.chunk : uint64_t(a.seq);
    if (seq > q.snd_una) {
        q.snd_una = seq;
        if (ep.retransmit_timeout_ps != 0) {
            v.recovery[f].progress = now;
            v.recovery[f].retries = 0;
        }
    }
    // A cumulative ACK past where a NACK sent the QP back (a reordered packet's ACK behind the NACK): what it
    // covers is not sent again, and the bytes in flight never go negative, which would leave the QP window-bound
    // for good. The reference cannot meet this without reordering: its in-order runs are unchanged.
    if (q.snd_nxt < q.snd_una) q.snd_nxt = q.snd_una;
    if (qp_finished(q, info)) {
        q.phase = kDone;
        q.finish = now;
        q.completion_order = v.nic[node].completions++;
        ++v.out[node].completions;
        cc_finish(v, f, ep);
    }
    if (a.kind == kNack) {
        if (ep.out_of_order) {  // resend the hole it reports, then go on where it was
            const uint64_t end = seq + uint64_t(a.reserved) * ep.mtu;
            v.retx[f] = RetxRange{seq, end < q.snd_nxt ? end : q.snd_nxt};
        } else {
            q.snd_nxt = q.snd_una;
        }
    }
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

// The NIC's retransmission check (NicState::timeout_check): each active QP with bytes in flight and no
// progress for the timeout sends them again — go-back-N from the cumulative point, or (out-of-order delivery)
// the range up to what it had sent, of which the receiver drops what it placed and acknowledges the rest. Its
// rate is left as its CC set it. The check then sets itself to the earliest deadline left.
ORRERY_HD inline void nic_retransmit_timeout(NetView& v, uint32_t node, const ExperimentParams& ep, int64_t now) {
    NicState& nic = v.nic[node];
    int64_t next = kNever;
    for (uint32_t i = 0; i < nic.qp_count; ++i) {
        const uint32_t f = v.nic_qps[nic.qp_offset + i];
        QpState& q = v.qp[f];
        if (q.phase != kActive || q.snd_una >= q.snd_nxt) continue;
        QpRecovery& r = v.recovery[f];
        if (r.progress + ep.retransmit_timeout_ps <= now) {
            ++r.timeouts;
            if (++r.retries > kRetryLimit) {  // the QP goes to its error state: nothing more is sent, the flow never finishes
                q.phase = kAbandoned;
                q.snd_nxt = q.snd_una = v.flow[f].size;  // the NIC's list drops it as it drops finished ones
                v.retx[f] = RetxRange{};
                continue;
            }
            r.progress = now;
            if (ep.out_of_order) v.retx[f] = RetxRange{q.snd_una, q.snd_nxt};
            else q.snd_nxt = q.snd_una;
        }
        next = imin(next, r.progress + ep.retransmit_timeout_ps);
    }
    nic.timeout_check = next;
    nic.timeout_check_scheduled = now;
    nic_start_next(v, node, ep, now);
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
