#include "wormhole/shift.h"

#include "net/cc.h"

namespace orrery::wormhole {
namespace {

using namespace net;

struct Mover {
    uint32_t flow_begin;
    const std::vector<int64_t>& credit_by_flow;  // local flow index → bytes
    int64_t dt_ps;
    const ExperimentParams& ep;                  // the experiment's: what a packet of its CC carries beside its seq

    void packet(Packet& p) const {
        if (p.kind == kPfc) return;
        const int64_t c = credit_by_flow[p.flow - flow_begin];
        p.seq = uint32_t(int64_t(p.seq) + c);
        const uint64_t dt_ns = uint64_t(dt_ps / 1000);
        if (ep.ack_int_hops > 1) {  // INT records: their timestamps move
            const int hops = p.nhop < kMaxIntHops ? p.nhop : kMaxIntHops;
            for (int i = 0; i < hops; ++i) p.hops[i].shift_time(dt_ns);
        } else if (ep.send_time_stamped) {
            p.sent_ns += dt_ns;
        }
    }
};

}  // namespace

void shift_partition(Batch& b, uint32_t e, const ShiftPlan& plan, std::vector<int64_t>& scratch) {
    const ExperimentSlice& x = b.experiments[e];
    const int64_t dt = plan.dt_ps;
    for (size_t i = 0; i < plan.flows->size(); ++i) scratch[(*plan.flows)[i] - x.flow_begin] = (*plan.credit)[i];
    const uint8_t cc = b.params[e].cc_mode;  // every flow and packet of the partition is experiment e's
    const Mover move{x.flow_begin, scratch, dt, b.params[e]};
    for (uint32_t row : *plan.ports) {
        // What the port sends: its transmission under way and the packets on the link to its peer.
        PortTx& tx = b.tx[row];
        if (tx.busy) {
            b.times[row].busy_since += dt;
            tx.busy_until += dt;
        }
        shift_time(b.times[row].tx_done, dt);
        const uint32_t to = b.port[row].peer_port;
        mark_host_wrote(b, b.port[row].node);
        mark_host_wrote(b, b.port[to].node);
        for_each_ring_packet(b, to, [&](Packet& p) {
            p.arrival += dt;
            move.packet(p);
        });
        const uint32_t node = b.port[row].node;
        auto shift_queued = [&](Packet& p) { move.packet(p); };
        if (b.node_role[node] == kRoleSwitch) {
            for (const BlockFifo& q : b.queues[row].fifo) fifo_for_each(b.arena->store(nullptr), q, shift_queued);
        } else {
            NicState& nic = b.nic[node];
            fifo_for_each(b.arena->store(nullptr), nic.acks, shift_queued);
            if (nic.next_send != kNever) {
                nic.next_send += dt;
                nic.next_send_scheduled += dt;
            }
        }
    }
    for (size_t i = 0; i < plan.flows->size(); ++i) {
        const uint32_t f = (*plan.flows)[i];
        const int64_t c = (*plan.credit)[i];
        mark_host_wrote(b, b.flow[f].src);
        mark_host_wrote(b, b.flow[f].dst);
        QpState& q = b.qp[f];
        q.snd_nxt = uint64_t(int64_t(q.snd_nxt) + c);
        q.snd_una = uint64_t(int64_t(q.snd_una) + c);
        q.next_avail += dt;
        QpRecovery& r = b.recovery[f];  // the NIC's timeout check stays where it was: it is due no later than any deadline
        r.high_water = uint64_t(int64_t(r.high_water) + c);
        r.progress += dt;
        RxState& rx = b.rx[f];
        rx.expected = uint64_t(int64_t(rx.expected) + c);
        rx.milestone = uint64_t(int64_t(rx.milestone) + c);  // ACKs stay as many packets apart
        shift_seq(rx.last_nack, c);
        if (rx.nack_timer != 0) rx.nack_timer += dt;
        // Only the flow's own CC has state (CcTable: the other tables' rows are never written).
        switch (cc) {
#define ORRERY_CC_SHIFT(Name, name, ...) \
    case k##Name: name##_shift(b.name[f], dt, c); break;
            ORRERY_CC_LIST(ORRERY_CC_SHIFT)
#undef ORRERY_CC_SHIFT
        }
    }
    for (uint32_t f : *plan.flows) scratch[f - x.flow_begin] = 0;
}

bool pfc_frames_on_links(const Batch& b, uint32_t experiment) {
    const ExperimentSlice& x = b.experiments[experiment];
    uint64_t sent = 0, taken = 0;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) sent += b.out[n].pfc_sent, taken += b.out[n].pfc_received;
    return sent != taken;
}

bool touches_pfc(const Batch& b, const std::vector<uint32_t>& ports, bool frames_on_links) {
    auto ring_has_pfc = [&](uint32_t row) {
        bool found = false;
        for_each_ring_packet(b, row, [&](const Packet& p) { found |= p.kind == kPfc; });
        return found;
    };
    for (uint32_t row : ports) {
        if (b.tx[row].paused) return true;
        if (b.node_role[b.port[row].node] == kRoleSwitch && !fifo_empty(b.queues[row].fifo[0])) return true;
        if (frames_on_links && (ring_has_pfc(row) || ring_has_pfc(b.port[row].peer_port))) return true;
        const uint32_t peer = b.port[row].peer_port;
        if (b.node_role[b.port[peer].node] == kRoleSwitch && b.mmu[peer].ingress_paused) return true;
    }
    return false;
}

}  // namespace orrery::wormhole
