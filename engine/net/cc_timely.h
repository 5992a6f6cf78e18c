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
        // RTTs are whole ns (packets carry their send time in ns); the thresholds are whole ns too.
        const uint64_t t_low_ns = uint64_t(ep.timely.t_low / 1000), t_high_ns = uint64_t(ep.timely.t_high / 1000);
        const int64_t new_rtt_diff = int64_t(rtt) - int64_t(t.last_rtt_ns);
        const double rtt_diff = (1 - ep.timely.alpha) * t.rtt_diff + ep.timely.alpha * double(new_rtt_diff);
        const double gradient = rtt_diff / double(ep.timely.min_rtt / 1000);
        bool inc = false;
        double c = 0;
        if (rtt < t_low_ns) {
            inc = true;
        } else if (rtt > t_high_ns) {
            c = 1 - ep.timely.beta * (1 - double(t_high_ns) / double(rtt));
        } else if (gradient <= 0) {
            inc = true;
        } else {
            c = 1 - ep.timely.beta * gradient;
            if (c < 0) c = 0;
        }
        if (inc) {
            q.rate = t.cur_rate + (t.inc_stage < 5 ? ep.timely.rate_ai : ep.timely.rate_hai);
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
