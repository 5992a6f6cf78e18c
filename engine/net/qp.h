#pragma once
// Queue-pair helpers the NIC and every congestion control share (the reference's RdmaQueuePair and
// RdmaHw::ChangeRate).
#include "net/ns3_arith.h"
#include "net/state.h"

namespace orrery::net {

ORRERY_HD inline uint64_t qp_bytes_left(const QpState& q, const FlowInfo& f) { return f.size >= q.snd_nxt ? f.size - q.snd_nxt : 0; }
ORRERY_HD inline bool qp_finished(const QpState& q, const FlowInfo& f) { return q.snd_una >= f.size; }

ORRERY_HD inline uint64_t qp_window(const QpState& q, const FlowInfo& f, const ExperimentParams& ep) {
    if (f.win == 0) return 0;
    if (!ep.var_win) return f.win;
    const uint64_t w = uint64_t((uint128)f.win * q.rate / q.max_rate);
    return w == 0 ? 1 : w;
}
ORRERY_HD inline bool qp_window_bound(const QpState& q, const FlowInfo& f, const ExperimentParams& ep) {
    const uint64_t w = qp_window(q, f, ep);
    return w != 0 && q.snd_nxt - q.snd_una >= w;
}

// QbbNetDevice::UpdateNextAvail: an earlier pacing time pulls a scheduled retry forward.
ORRERY_HD inline void nic_update_next_avail(NicState& nic, int64_t t, int64_t now) {
    if (nic.next_send != kNever && t < nic.next_send) {
        nic.next_send = t < now ? now : t;
        nic.next_send_scheduled = now;
    }
}

// RdmaHw::ChangeRate: shift the pacing time by the difference in serialization time of the last packet.
ORRERY_HD inline void qp_change_rate(NetView& v, uint32_t node, uint32_t flow, uint64_t new_rate, int64_t now) {
    QpState& q = v.qp[flow];
    const int64_t old_ser = tx_time_ns(q.last_pkt_size, q.rate) * 1000;
    const int64_t new_ser = tx_time_ns(q.last_pkt_size, new_rate) * 1000;
    q.next_avail = q.next_avail + new_ser - old_ser;
    nic_update_next_avail(v.nic[node], q.next_avail, now);
    q.rate = new_rate;
}

}  // namespace orrery::net
