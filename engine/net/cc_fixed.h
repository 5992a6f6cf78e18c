#pragma once
// No congestion control: every queue pair sends at a fixed rate, `cc.fixed.rate` or its line rate (within
// its window when cc.window), whatever the network says, and only PFC holds it back.
// The baseline a CC is measured against: what DCQCN, HPCC, TIMELY or DCTCP buy on a given fabric and traffic,
// or what a sender pinned below the line rate (an admission limit, a slower PCIe path) leaves on the table.
#include "net/cc_snapshot.h"
#include "net/qp.h"

namespace orrery::net {

// No state: a column of one byte a flow, never written.
struct FixedState {
    uint8_t none;
};

ORRERY_HD inline void fixed_start(NetView& v, uint32_t flow, const ExperimentParams& ep, uint64_t line_bps) {
    // Its rate is its ceiling too, so that it holds with cc.rate_bound off (which paces at the ceiling).
    if (ep.fixed.rate != 0 && ep.fixed.rate < line_bps) v.qp[flow].rate = v.qp[flow].max_rate = ep.fixed.rate;
}
ORRERY_HD inline void fixed_ack(NetView&, uint32_t, uint32_t, const Packet&, bool, int64_t) {}
ORRERY_HD inline void fixed_finish(NetView&, uint32_t) {}

// Skipping (net/cc_snapshot.h): no state beyond the rate every snapshot carries.
inline void fixed_snapshot(const FixedState&, int64_t, CcSnapshot&) {}
inline void fixed_restore(FixedState&, const CcSnapshot&, int64_t, const ExperimentParams&, const QpState&) {}
inline void fixed_shift(FixedState&, int64_t, int64_t) {}
template <class Snapshot, class Field>
void fixed_snapshot_fields(Snapshot&, Field&&) {}

}  // namespace orrery::net
