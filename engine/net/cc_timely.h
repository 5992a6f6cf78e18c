#pragma once
// TIMELY as the reference runs it (RdmaHw::UpdateRateTimely): once per RTT of data, the RTT of the ACK's
// data packet (sent-time echoed back) against T_low / T_high and the smoothed RTT gradient.
#include "net/cc_snapshot.h"
#include "net/qp.h"

namespace orrery::net {

// Its state: a row per flow (a column of the batch, net/columns.h).
struct alignas(64) TimelyState {
    uint64_t last_update_seq = 0;
    uint32_t inc_stage = 0;
    uint32_t reserved = 0;
    uint64_t last_rtt_ns = 0;
    double rtt_diff = 0;
    uint64_t cur_rate = 0;
};

ORRERY_HD inline void timely_on_ack(NetView& v, uint32_t flow, uint64_t ack_seq, uint64_t sent_ns, int64_t now) {
    TimelyState& t = v.timely[flow];
    QpState& q = v.qp[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    if (!(ack_seq > t.last_update_seq)) return;  // the reference's fast-react path does nothing for TIMELY
    const uint64_t next_seq = q.snd_nxt;
    const uint64_t rtt = uint64_t(now / 1000) - sent_ns;
    if (t.last_update_seq != 0) {
        const int64_t new_rtt_diff = int64_t(rtt) - int64_t(t.last_rtt_ns);
        const double rtt_diff = (1 - ep.timely_alpha) * t.rtt_diff + ep.timely_alpha * double(new_rtt_diff);
        const double gradient = rtt_diff / double(ep.timely_min_rtt_ns);
        bool inc = false;
        double c = 0;
        if (rtt < ep.timely_tlow_ns) {
            inc = true;
        } else if (rtt > ep.timely_thigh_ns) {
            c = 1 - ep.timely_beta * (1 - double(ep.timely_thigh_ns) / double(rtt));
        } else if (gradient <= 0) {
            inc = true;
        } else {
            c = 1 - ep.timely_beta * gradient;
            if (c < 0) c = 0;
        }
        if (inc) {
            q.rate = t.cur_rate + (t.inc_stage < 5 ? ep.rate_ai : ep.rate_hai);
            if (q.rate > q.max_rate) q.rate = q.max_rate;
            t.cur_rate = q.rate;
            ++t.inc_stage;
        } else {
            q.rate = umax(ep.min_rate, rate_times(t.cur_rate, c));
            t.cur_rate = q.rate;
            t.inc_stage = 0;
        }
        t.rtt_diff = rtt_diff;
    }
    if (next_seq > t.last_update_seq) {
        t.last_update_seq = next_seq;
        t.last_rtt_ns = rtt;
    }
}

// The hooks of net/cc_list.h.
ORRERY_HD inline void timely_start(NetView& v, uint32_t flow, const ExperimentParams&, uint64_t line) { v.timely[flow].cur_rate = line; }
ORRERY_HD inline void timely_ack(NetView& v, uint32_t, uint32_t flow, const Packet& ack, bool, int64_t now) {
    timely_on_ack(v, flow, ack.seq, ack.sent_ns, now);
}
ORRERY_HD inline void timely_finish(NetView&, uint32_t) {}

// Skipping (net/cc_snapshot.h): the smoothed RTT gradient, the increase stage and the current rate.
inline void timely_snapshot(const TimelyState& t, int64_t, CcSnapshot& s) {
    s.rtt_diff = t.rtt_diff;
    s.stage = t.inc_stage;
    s.cc_rate_bps = t.cur_rate;
}
inline void timely_restore(TimelyState& t, const CcSnapshot& s, int64_t, const ExperimentParams& ep, const QpState& q) {
    t.rtt_diff = s.rtt_diff;
    t.inc_stage = s.stage;
    t.cur_rate = held_rate(ep, q, s.cc_rate_bps);
}
inline void timely_shift(TimelyState& t, int64_t, int64_t credit) { shift_seq(t.last_update_seq, credit); }
template <class Snapshot, class Field>
void timely_snapshot_fields(Snapshot& s, Field&& field) {
    field("rtt_diff", s.rtt_diff), field("stage", s.stage), field("cc_rate_bps", s.cc_rate_bps);
}

}  // namespace orrery::net
