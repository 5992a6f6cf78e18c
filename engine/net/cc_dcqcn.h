#pragma once
// DCQCN, Mellanox's version as the reference runs it (RdmaHw::*Mlx): CNPs arrive as a flag on ACKs; the
// first sets α = 1 and starts the α timer and the rate-decrease check; at most one cut per check interval,
// rate ← max(min_rate, rate·(1 − α/2)); increases by the RP timer only: fast recovery, then active, then
// hyper increase toward the target rate.
#include "net/cc_snapshot.h"
#include "net/qp.h"

namespace orrery::net {

// Its state: a row per flow (a column of the batch, net/columns.h).
struct alignas(64) DcqcnState {
    double alpha = 1;
    bool alpha_cnp = false, decrease_cnp = false, first_cnp = true;
    uint8_t reserved = 0;
    uint32_t rp_stage = 0;
    uint64_t target_rate = 0;
    int64_t t_alpha = kNever, t_decrease = kNever, t_rp = kNever;              // ps: next timer events
    int64_t s_alpha = 0, s_decrease = 0, s_rp = 0;                            // ps: when each was scheduled
};

ORRERY_HD inline void dcqcn_on_cnp(NetView& v, uint32_t flow, int64_t now) {
    DcqcnState& d = v.dcqcn[flow];
    QpState& q = v.qp[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    d.alpha_cnp = d.decrease_cnp = true;
    if (d.first_cnp) {
        d.alpha = 1;
        d.alpha_cnp = false;
        d.t_alpha = now + ep.dcqcn.alpha_resume_interval;
        d.s_alpha = now;
        d.t_decrease = now + ep.dcqcn.rate_decrease_interval + 1000;  // +1 ns: after the α update
        d.s_decrease = now;
        q.rate = rate_times(q.rate, ep.rate_on_first_cnp);
        d.target_rate = q.rate;
        d.first_cnp = false;
    }
}

ORRERY_HD inline void dcqcn_alpha_timer(NetView& v, uint32_t flow, int64_t now) {
    DcqcnState& d = v.dcqcn[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    d.alpha = d.alpha_cnp ? (1 - ep.dcqcn.g) * d.alpha + ep.dcqcn.g : (1 - ep.dcqcn.g) * d.alpha;
    d.alpha_cnp = false;
    d.t_alpha = now + ep.dcqcn.alpha_resume_interval;
    d.s_alpha = now;
}

ORRERY_HD inline void dcqcn_decrease_timer(NetView& v, uint32_t flow, int64_t now) {
    DcqcnState& d = v.dcqcn[flow];
    QpState& q = v.qp[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    d.t_decrease = now + ep.dcqcn.rate_decrease_interval;
    d.s_decrease = now;
    if (!d.decrease_cnp) return;
    const bool clamp = ep.dcqcn.clamp_target_rate || d.rp_stage != 0;
    if (clamp) d.target_rate = q.rate;
    q.rate = umax(ep.min_rate, rate_times(q.rate, 1 - d.alpha / 2));
    d.rp_stage = 0;
    d.decrease_cnp = false;
    d.t_rp = now + ep.dcqcn.rp_timer;
    d.s_rp = now;
}

ORRERY_HD inline void dcqcn_rate_increase_timer(NetView& v, uint32_t flow, int64_t now) {
    DcqcnState& d = v.dcqcn[flow];
    QpState& q = v.qp[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    d.t_rp = now + ep.dcqcn.rp_timer;
    d.s_rp = now;
    if (d.rp_stage >= ep.dcqcn.fast_recovery_times) {
        // active increase at the threshold, hyper increase after it
        d.target_rate += d.rp_stage == ep.dcqcn.fast_recovery_times ? ep.dcqcn.rate_ai : ep.dcqcn.rate_hai;
        if (d.target_rate > q.max_rate) d.target_rate = q.max_rate;
    }
    q.rate = rate_div(q.rate, 2) + rate_div(d.target_rate, 2);
    ++d.rp_stage;
}

ORRERY_HD inline void dcqcn_cancel(DcqcnState& d) { d.t_alpha = d.t_decrease = d.t_rp = kNever; }

// The hooks of net/cc_list.h. A queue pair starts at its line rate toward a target of the same; its timers run
// only from the first CNP (node.h schedules them) and stop when its last byte is acknowledged.
ORRERY_HD inline void dcqcn_start(NetView& v, uint32_t flow, const ExperimentParams&, uint64_t line) { v.dcqcn[flow].target_rate = line; }
ORRERY_HD inline void dcqcn_ack(NetView& v, uint32_t, uint32_t flow, const Packet&, bool cnp, int64_t now) {
    if (cnp) dcqcn_on_cnp(v, flow, now);
}
ORRERY_HD inline void dcqcn_finish(NetView& v, uint32_t flow) { dcqcn_cancel(v.dcqcn[flow]); }

// Skipping (net/cc_snapshot.h): α, the target rate, the increase stage, the CNP flags and the three timers.
inline void dcqcn_snapshot(const DcqcnState& d, int64_t now, CcSnapshot& s) {
    s.alpha = d.alpha;
    s.target_bps = d.target_rate;
    s.stage = d.rp_stage;
    s.first_cnp = d.first_cnp, s.alpha_cnp = d.alpha_cnp, s.decrease_cnp = d.decrease_cnp;
    take_timer(d.t_alpha, d.s_alpha, now, s.timer_in_ps[0], s.timer_since_ps[0]);
    take_timer(d.t_decrease, d.s_decrease, now, s.timer_in_ps[1], s.timer_since_ps[1]);
    take_timer(d.t_rp, d.s_rp, now, s.timer_in_ps[2], s.timer_since_ps[2]);
}
inline void dcqcn_restore(DcqcnState& d, const CcSnapshot& s, int64_t resume, const ExperimentParams& ep, const QpState& q) {
    d.alpha = s.alpha;
    d.target_rate = held_rate(ep, q, s.target_bps);
    d.rp_stage = s.stage;
    d.first_cnp = s.first_cnp, d.alpha_cnp = s.alpha_cnp, d.decrease_cnp = s.decrease_cnp;
    put_timer(s.timer_in_ps[0], s.timer_since_ps[0], resume, d.t_alpha, d.s_alpha);
    put_timer(s.timer_in_ps[1], s.timer_since_ps[1], resume, d.t_decrease, d.s_decrease);
    put_timer(s.timer_in_ps[2], s.timer_since_ps[2], resume, d.t_rp, d.s_rp);
}
inline void dcqcn_shift(DcqcnState& d, int64_t dt, int64_t) {
    shift_time(d.t_alpha, dt);
    shift_time(d.t_decrease, dt);
    shift_time(d.t_rp, dt);
    d.s_alpha += dt, d.s_decrease += dt, d.s_rp += dt;
}
template <class Snapshot, class Field>
void dcqcn_snapshot_fields(Snapshot& s, Field&& field) {
    field("alpha", s.alpha), field("target_bps", s.target_bps), field("stage", s.stage);
    field("first_cnp", s.first_cnp), field("alpha_cnp", s.alpha_cnp), field("decrease_cnp", s.decrease_cnp);
    field("timer_in_ps", s.timer_in_ps), field("timer_since_ps", s.timer_since_ps);
}

}  // namespace orrery::net
