#pragma once
// HPCC as the reference runs it (RdmaHw::UpdateRateHp / FastReactHp): per-hop utilization from INT
// (tx-byte rate over line rate plus queue over BDP), smoothed over the base RTT; a full update once per
// RTT of data, fast reaction on every other ACK; multiplicative decrease toward η, additive increase
// for up to mi_thresh rounds. Single-rate and per-hop (MULTI_RATE) variants.
#include "net/cc_snapshot.h"
#include "net/qp.h"

namespace orrery::net {

// Its state: a row per flow (a column of the batch, net/columns.h).
struct HpccHop {
    double u = 1;
    int32_t inc_stage = 0;
    uint32_t reserved = 0;
    uint64_t rc = 0;
};
struct alignas(64) HpccState {
    uint64_t last_update_seq = 0;
    int32_t inc_stage = 0;
    uint32_t reserved = 0;
    double u = 1;
    uint64_t cur_rate = 0;
    IntHop hop[kMaxIntHops];
    HpccHop hop_state[kMaxIntHops];
};

ORRERY_HD inline uint64_t int_line_rate(const IntHop& h) {
    switch (h.line_rate_code()) {
        case 0: return 25000000000ull;
        case 1: return 50000000000ull;
        case 2: return 100000000000ull;
        case 3: return 200000000000ull;
        case 4: return 400000000000ull;
        default: return 0;
    }
}
ORRERY_HD inline uint64_t int_time_delta(const IntHop& now, const IntHop& before) {
    return now.time() >= before.time() ? now.time() - before.time() : now.time() + (1ull << IntHop::kTimeWidth) - before.time();
}
ORRERY_HD inline uint64_t int_bytes_delta(const IntHop& now, const IntHop& before, uint32_t multi) {
    const uint64_t d = now.bytes_field() >= before.bytes_field() ? now.bytes_field() - before.bytes_field()
                                                                 : now.bytes_field() + (1ull << IntHop::kBytesWidth) - before.bytes_field();
    return d * 128ull * multi;
}
ORRERY_HD inline uint64_t int_qlen(const IntHop& h, uint32_t multi) { return h.qlen_field() * 80ull * multi; }

ORRERY_HD inline void hpcc_update(NetView& v, uint32_t node, uint32_t flow, const Packet& ack, bool fast_react, int64_t now) {
    HpccState& h = v.hpcc[flow];
    QpState& q = v.qp[flow];
    const FlowInfo& f = v.flow[flow];
    const ExperimentParams& ep = node_params(v, node);
    const uint64_t next_seq = q.snd_nxt;
    if (h.last_update_seq == 0) {  // first RTT: remember the INT
        h.last_update_seq = next_seq;
        for (uint32_t i = 0; i < ack.nhop && i < kMaxIntHops; ++i) h.hop[i] = ack.hops[i];
        return;
    }
    if (ack.nhop <= kMaxIntHops) {
        double big_u = 0;
        uint64_t dt = 0;
        bool updated[kMaxIntHops] = {false, false, false, false, false};
        bool updated_any = false;
        const uint64_t base_rtt = f.base_rtt_ns;
        for (uint32_t i = 0; i < ack.nhop; ++i) {
            if (ep.hpcc.sample_feedback && int_qlen(ack.hops[i], ep.hpcc.int_multi) == 0 && fast_react) continue;
            updated[i] = updated_any = true;
            uint64_t tau = int_time_delta(ack.hops[i], h.hop[i]);
            const double duration = double(tau) * 1e-9;
            const double tx_rate = double(int_bytes_delta(ack.hops[i], h.hop[i], ep.hpcc.int_multi)) * 8 / duration;
            const uint64_t line = int_line_rate(ack.hops[i]);
            const uint64_t qmin = umin(int_qlen(ack.hops[i], ep.hpcc.int_multi), int_qlen(h.hop[i], ep.hpcc.int_multi));
            // Without a window the reference divides by zero here; Orrery leaves the queue term out.
            const double queue_term = f.win == 0 ? 0.0 : double(qmin) * double(q.max_rate) / double(line) / double(f.win);
            const double u = tx_rate / double(line) + queue_term;
            if (!ep.hpcc.multi_rate) {
                if (u > big_u) {
                    big_u = u;
                    dt = tau;
                }
            } else {
                if (tau > base_rtt) tau = base_rtt;
                h.hop_state[i].u = (h.hop_state[i].u * double(base_rtt - tau) + u * double(tau)) / double(base_rtt);
            }
            h.hop[i] = ack.hops[i];
        }
        uint64_t new_rate = 0;
        int32_t new_inc = 0;
        uint64_t new_rate_hop[kMaxIntHops] = {0, 0, 0, 0, 0};
        int32_t new_inc_hop[kMaxIntHops] = {0, 0, 0, 0, 0};
        if (!ep.hpcc.multi_rate) {
            if (updated_any) {
                if (dt > base_rtt) dt = base_rtt;
                h.u = (h.u * double(base_rtt - dt) + big_u * double(dt)) / double(base_rtt);
                const double max_c = h.u / ep.hpcc.eta;
                if (max_c >= 1 || uint32_t(h.inc_stage) >= ep.hpcc.mi_thresh) {
                    new_rate = rate_div(h.cur_rate, max_c) + ep.hpcc.rate_ai;
                    new_inc = 0;
                } else {
                    new_rate = h.cur_rate + ep.hpcc.rate_ai;
                    new_inc = h.inc_stage + 1;
                }
                if (new_rate < ep.min_rate) new_rate = ep.min_rate;
                if (new_rate > q.max_rate) new_rate = q.max_rate;
            }
        } else {
            new_rate = q.max_rate;
            for (uint32_t i = 0; i < ack.nhop; ++i) {
                if (updated[i]) {
                    const double c = h.hop_state[i].u / ep.hpcc.eta;
                    if (c >= 1 || uint32_t(h.hop_state[i].inc_stage) >= ep.hpcc.mi_thresh) {
                        new_rate_hop[i] = rate_div(h.hop_state[i].rc, c) + ep.hpcc.rate_ai;
                        new_inc_hop[i] = 0;
                    } else {
                        new_rate_hop[i] = h.hop_state[i].rc + ep.hpcc.rate_ai;
                        new_inc_hop[i] = h.hop_state[i].inc_stage + 1;
                    }
                    if (new_rate_hop[i] < ep.min_rate) new_rate_hop[i] = ep.min_rate;
                    if (new_rate_hop[i] > q.max_rate) new_rate_hop[i] = q.max_rate;
                    if (new_rate_hop[i] < new_rate) new_rate = new_rate_hop[i];
                } else if (h.hop_state[i].rc < new_rate) {
                    new_rate = h.hop_state[i].rc;
                }
            }
        }
        if (updated_any) qp_change_rate(v, node, flow, new_rate, now);
        if (!fast_react) {
            if (updated_any) {
                h.cur_rate = new_rate;
                h.inc_stage = new_inc;
            }
            if (ep.hpcc.multi_rate)
                for (uint32_t i = 0; i < ack.nhop; ++i)
                    if (updated[i]) {
                        h.hop_state[i].rc = new_rate_hop[i];
                        h.hop_state[i].inc_stage = new_inc_hop[i];
                    }
        }
    }
    if (!fast_react && next_seq > h.last_update_seq) h.last_update_seq = next_seq;
}

ORRERY_HD inline void hpcc_on_ack(NetView& v, uint32_t node, uint32_t flow, const Packet& ack, int64_t now) {
    const ExperimentParams& ep = node_params(v, node);
    if (ack.seq > v.hpcc[flow].last_update_seq) hpcc_update(v, node, flow, ack, false, now);
    else if (ep.hpcc.fast_react) hpcc_update(v, node, flow, ack, true, now);
}

// The hooks of net/cc_list.h. The reference rate (and each hop's, with MULTI_RATE) starts at the line rate.
ORRERY_HD inline void hpcc_start(NetView& v, uint32_t flow, const ExperimentParams& ep, uint64_t line) {
    v.hpcc[flow].cur_rate = line;
    if (ep.hpcc.multi_rate)
        for (int i = 0; i < kMaxIntHops; ++i) v.hpcc[flow].hop_state[i].rc = line;
}
ORRERY_HD inline void hpcc_ack(NetView& v, uint32_t node, uint32_t flow, const Packet& ack, bool, int64_t now) { hpcc_on_ack(v, node, flow, ack, now); }
ORRERY_HD inline void hpcc_finish(NetView&, uint32_t) {}

// Skipping (net/cc_snapshot.h): u, the increase stage and the reference rate. The per-hop INT records stay the
// flow's own (they name its ports and bytes); a skip moves their timestamps and the update marker.
inline void hpcc_snapshot(const HpccState& h, int64_t, CcSnapshot& s) {
    s.u = h.u;
    s.stage = uint32_t(h.inc_stage);
    s.cc_rate_bps = h.cur_rate;
}
inline void hpcc_restore(HpccState& h, const CcSnapshot& s, int64_t, const ExperimentParams& ep, const QpState& q) {
    h.u = s.u;
    h.inc_stage = int32_t(s.stage);
    h.cur_rate = held_rate(ep, q, s.cc_rate_bps);
}
inline void hpcc_shift(HpccState& h, int64_t dt, int64_t credit) {
    shift_seq(h.last_update_seq, credit);
    for (IntHop& hop : h.hop) hop.shift_time(uint64_t(dt / 1000));
}
template <class Snapshot, class Field>
void hpcc_snapshot_fields(Snapshot& s, Field&& field) {
    field("u", s.u), field("stage", s.stage), field("cc_rate_bps", s.cc_rate_bps);
}

}  // namespace orrery::net
