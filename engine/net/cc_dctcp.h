#pragma once
// DCTCP as the reference runs it on RDMA (RdmaHw::HandleAckDctcp): α updated once per window of data from
// the fraction of ECN-echoing ACKs; one cut per window, rate·(1 − α/2); additive increase per window.
#include "net/cc_snapshot.h"
#include "net/qp.h"

namespace orrery::net {

// Its state: a row per flow (a column of the batch, net/columns.h).
struct alignas(64) DctcpState {
    uint64_t last_update_seq = 0;
    uint64_t high_seq = 0;
    uint32_t ca_state = 0;
    uint32_t ecn_count = 0;
    uint64_t batch_size = 0;
    double alpha = 1;
};

ORRERY_HD inline void dctcp_on_ack(NetView& v, uint32_t flow, uint64_t ack_seq, bool cnp) {
    DctcpState& d = v.dctcp[flow];
    QpState& q = v.qp[flow];
    const ExperimentParams& ep = flow_params(v, flow);
    bool new_batch = false;
    d.ecn_count += cnp ? 1 : 0;
    if (ack_seq > d.last_update_seq) {
        new_batch = true;
        if (d.last_update_seq == 0) {
            d.last_update_seq = q.snd_nxt;
            d.batch_size = q.snd_nxt / ep.mtu + 1;
        } else {
            double frac = double(d.ecn_count) / double(d.batch_size);
            if (frac > 1.0) frac = 1.0;
            d.alpha = (1 - ep.dctcp.g) * d.alpha + ep.dctcp.g * frac;
            d.last_update_seq = q.snd_nxt;
            d.ecn_count = 0;
            d.batch_size = (q.snd_nxt - ack_seq) / ep.mtu + 1;
        }
    }
    if (d.ca_state == 1 && ack_seq > d.high_seq) d.ca_state = 0;
    if (cnp && d.ca_state == 0) {
        q.rate = umax(ep.min_rate, rate_times(q.rate, 1 - d.alpha / 2));
        d.ca_state = 1;
        d.high_seq = q.snd_nxt;
    }
    if (d.ca_state == 0 && new_batch) q.rate = umin(q.max_rate, q.rate + ep.dctcp.rate_ai);
}

// The hooks of net/cc_list.h.
ORRERY_HD inline void dctcp_start(NetView&, uint32_t, const ExperimentParams&, uint64_t) {}
ORRERY_HD inline void dctcp_ack(NetView& v, uint32_t, uint32_t flow, const Packet& ack, bool cnp, int64_t) { dctcp_on_ack(v, flow, ack.seq, cnp); }
ORRERY_HD inline void dctcp_finish(NetView&, uint32_t) {}

// Skipping (net/cc_snapshot.h): α; the window markers stay the flow's own and move with its bytes.
inline void dctcp_snapshot(const DctcpState& d, int64_t, CcSnapshot& s) { s.alpha = d.alpha; }
inline void dctcp_restore(DctcpState& d, const CcSnapshot& s, int64_t, const ExperimentParams&, const QpState&) { d.alpha = s.alpha; }
inline void dctcp_shift(DctcpState& d, int64_t, int64_t credit) {
    shift_seq(d.last_update_seq, credit);
    shift_seq(d.high_seq, credit);
}
template <class Snapshot, class Field>
void dctcp_snapshot_fields(Snapshot& s, Field&& field) {
    field("alpha", s.alpha);
}

}  // namespace orrery::net
