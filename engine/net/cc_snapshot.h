#pragma once
// A flow's congestion-control state as a skip carries it from one flow to another (a memo replay, a mirrored
// follower: wormhole/cc_snapshot.h says why the rate alone is not that state). Each cc_<name>.h owns its part,
// host-side (the skipper runs on the host):
//
//   <name>_snapshot(const State&, now, CcSnapshot&)            what a resumed flow continues from
//   <name>_restore(State&, const CcSnapshot&, resume, ep, qp)  a flow takes it, its timers running from `resume`
//   <name>_shift(State&, dt_ps, credit_bytes)                  its state moved through a skip of dt, credit bytes
//   <name>_snapshot_fields(snapshot, field)                    its fields in the memo file, by name
//
// Timers are kept as offsets from the moment the snapshot was taken and put back at the same offsets from the
// moment the flow resumes. Rates put back are held to the flow's line rate and the experiment's minimum rate.
#include <algorithm>
#include <cstdint>

#include "net/state.h"

namespace orrery::net {

struct CcSnapshot {
    uint8_t cc_mode = 0;              // CcMode the state belongs to
    uint64_t rate_bps = 0;            // the sending rate (QpState::rate)
    // DCQCN
    double alpha = 1;                 // also DCTCP's α
    uint64_t target_bps = 0;
    uint32_t stage = 0;               // DCQCN's rate-increase stage, HPCC's and TIMELY's increase stage
    bool first_cnp = true, alpha_cnp = false, decrease_cnp = false;
    int64_t timer_in_ps[3] = {-1, -1, -1};    // α, rate-decrease, rate-increase: due this long after the snapshot; -1 = not running
    int64_t timer_since_ps[3] = {0, 0, 0};    // scheduled this long before it (orders timers due at the same instant)
    // HPCC
    double u = 1;
    uint64_t cc_rate_bps = 0;         // HPCC's or TIMELY's current rate
    // TIMELY
    double rtt_diff = 0;
};

// A rate put into a flow, held to its own line rate and the experiment's minimum rate.
inline uint64_t held_rate(const ExperimentParams& ep, const QpState& q, uint64_t bps) {
    return std::clamp<uint64_t>(bps, std::min<uint64_t>(ep.min_rate, q.max_rate), q.max_rate);
}

inline void take_timer(int64_t due, int64_t scheduled, int64_t now, int64_t& in, int64_t& since) {
    in = due == kNever ? -1 : std::max<int64_t>(0, due - now);
    since = due == kNever ? 0 : std::max<int64_t>(0, now - scheduled);
}

inline void put_timer(int64_t in, int64_t since, int64_t resume, int64_t& due, int64_t& scheduled) {
    due = in < 0 ? kNever : resume + in;
    scheduled = resume - since;
}

inline void shift_time(int64_t& t, int64_t dt) {
    if (t != kNever) t += dt;
}
inline void shift_seq(uint64_t& s, int64_t c) {
    if (s != 0) s = uint64_t(int64_t(s) + c);  // 0 means "not yet set" in every CC state that keeps one
}

}  // namespace orrery::net
