#pragma once
// Sending on a link and the transmit machine of a port, shared by switches and NICs.
#include "net/ns3_arith.h"
#include "net/port_events.h"
#include "net/state.h"

namespace orrery::net {

// Per step s, a node reads the counters its peers published in step s-1 and publishes its own into the
// slot of step s: readers and writers never share a counter within a step.
struct StepClock {
    uint64_t step;            // global iteration number
    int64_t window_end;       // ps: events strictly before this belong to the step
    ORRERY_HD uint32_t read_slot() const { return uint32_t((step + 1) & 1); }
    ORRERY_HD uint32_t write_slot() const { return uint32_t(step & 1); }
};

// Appends p to the receive ring of `to_port`. Rings are grown before each step to hold what the step can
// bring (batch.cpp, grow_buffers); a full ring is a sizing bug, flagged in the node's overflow, never dropped.
ORRERY_HD inline bool ring_push(NetView& v, uint32_t to_port, const Packet& p, const StepClock& clock, uint32_t node) {
    const Ring& r = v.ring[to_port];
    RingTail& t = v.ring_tail[to_port];
    if (t.tail - v.ring_head[to_port].published_head[clock.read_slot()] >= r.capacity) {
        v.out[node].events_overflow |= 2u;
        return false;
    }
    r.storage[t.tail % r.capacity] = p;
    ++t.tail;
    return true;
}

// Starts transmitting p on port `row` at `now`: the port is busy for the serialization time, and p reaches
// the peer after serialization and propagation (reference README §5: floor(bytes·8/rate) ns, no gap).
ORRERY_HD inline void transmit_start(NetView& v, uint32_t row, Packet p, int64_t now, const StepClock& clock) {
    const PortInfo& info = v.port[row];
    PortTx& tx = v.tx[row];
    if (tx.last_wire != p.wire) {
        tx.last_wire = p.wire;
        tx.last_ser = tx_time_ns(p.wire, info.rate_bps) * 1000;
    }
    const int64_t ser = tx.last_ser;
    tx.busy = 1;
    tx.busy_since = now;
    tx.busy_until = now + ser;
    v.tx_done[row] = tx.busy_until;
    port_event_changed(v, row);
    p.arrival = now + ser + info.delay_ps;
    p.ser_ns = uint32_t(ser / 1000);
    NodeOutput& o = v.out[info.node];
    ++o.transmissions;
    if (p.arrival < o.min_sent_arrival) o.min_sent_arrival = p.arrival;
    ring_push(v, info.peer_port, p, clock, info.node);
}

ORRERY_HD inline void record_pfc(NetView& v, uint32_t node, uint32_t row, bool pause, int64_t now, uint8_t node_type) {
    NodeOutput& o = v.out[node];
    if (o.events_count >= o.events_capacity) {
        o.events_overflow |= 1u;
        return;
    }
    PfcEvent& e = o.events[o.events_count++];
    e.time = now;
    e.node = node;
    e.ifindex = uint16_t(v.port[row].local + 1);
    e.node_type = node_type;
    e.pause = pause ? 1 : 0;
}

// A PFC frame received on port `row`: pause or resume its class on that port (the frame names the device
// that gets paused: this one) and record it. Returns true on a resume, when the caller restarts the port.
ORRERY_HD inline bool receive_pfc(NetView& v, uint32_t node, uint32_t row, const Packet& p, int64_t now, uint8_t node_type) {
    if (!node_params(v, node).pfc_enabled) return false;  // the reference's QbbEnabled false: ignored, not traced
    PortTx& tx = v.tx[row];
    const bool pause = (p.flags & kFlagPause) != 0;
    record_pfc(v, node, row, pause, now, node_type);
    if (pause) tx.paused |= uint8_t(1u << p.seq);
    else tx.paused &= uint8_t(~(1u << p.seq));
    return !pause;
}

}  // namespace orrery::net
