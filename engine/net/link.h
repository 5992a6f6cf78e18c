#pragma once
// Sending on a link and the transmit machine of a port, shared by switches and NICs.
#include <cstddef>
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#endif

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

// p's serialization time (ps) on a link of `rate_bps` (reference README §5: floor(bytes·8/rate) ns, no gap),
// from the link end's cache of the last data and control frame sizes.
ORRERY_HD inline int64_t serialization_ps(SerializationCache& c, const Packet& p, uint64_t rate_bps) {
    const int kind = p.kind == kData ? 0 : 1;
    if (c.wire[kind] != p.wire) {
        c.wire[kind] = p.wire;
        c.ser_ps[kind] = tx_time_ns(p.wire, rate_bps) * 1000;
    }
    return c.ser_ps[kind];
}

// The slot for the next packet of the receive ring of `to_port`, opening a block from the worker's stock
// at each block boundary; nullptr when no block can be had (flagged in the node's overflow: the host stops
// the run, never drops a packet).
ORRERY_HD inline Packet* ring_push_slot(NetView& v, uint32_t to_port, uint32_t node) {
    RingTail& t = v.ring_tail[to_port];
    const uint32_t slot = uint32_t(t.tail % kBlockPackets);
    if (slot == 0) {
        const uint32_t b = block_take(*v.store.cache, v.out[node].blocks_held);
        if (b == kNoBlock) {
            v.out[node].events_overflow |= 2u;
            return nullptr;
        }
        if (t.block == kNoBlock) t.first_block = b;
        else v.store.next[t.block] = b;
        t.block = b;
    }
    ++t.tail;
    return &packet_at(v.store, t.block, slot);
}

// p with its arrival time into a ring's slot. With `stream` (a worker's packets of the step outgrow its core's
// cache: runtime/cpu_runner.cpp), by non-temporal stores of the whole line: the receiver reads the slot a step
// later, when a large fabric's step has long evicted it, so bringing the line into the cache to write it (a
// read from memory per packet-hop) and evicting something else for it only costs. bench_scale, one thread,
// alternating on and off: k = 16 15 % and k = 24 / 32 6 % faster; on the k = 8 ring, whose step fits in the
// cache, the same stores made the run 70 % slower (docs/history/runtime-scale-and-mpi.md). The worker fences them before the step's
// barrier. Otherwise copied whole, then the arrival set in place:
// patching a copy on the stack first would make the copy into the ring read back a half-written line (a
// store-forwarding stall, 20 % of transmit_start).
ORRERY_HD ORRERY_HOT_INLINE inline void write_ring_slot(const BlockStore& store, Packet& slot, const Packet& p, int64_t arrival, bool stream) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
    if (stream) {
        static_assert(sizeof(Packet) == 64 && offsetof(Packet, arrival) == 0, "a packet is one line, its arrival first");
        const __m128i* from = reinterpret_cast<const __m128i*>(&p);
        __m128i* to = reinterpret_cast<__m128i*>(&slot);
        const __m128i head = _mm_castpd_si128(_mm_move_sd(_mm_castsi128_pd(_mm_loadu_si128(from)), _mm_castsi128_pd(_mm_cvtsi64_si128(arrival))));
        _mm_stream_si128(to, head);
        _mm_stream_si128(to + 1, _mm_loadu_si128(from + 1));
        if (compact_store(store)) return;
        _mm_stream_si128(to + 2, _mm_loadu_si128(from + 2));
        _mm_stream_si128(to + 3, _mm_loadu_si128(from + 3));
        return;
    }
#else
    (void)stream;
#endif
    store_packet(store, slot, p);
    slot.arrival = arrival;
}

// Starts transmitting p on port `row` at `now`: the port is busy for the serialization time, and p reaches
// the peer after serialization and propagation (reference README §5: floor(bytes·8/rate) ns, no gap).
// Without `completion_event` (a switch port with nothing queued) the port's completion gets no event of its
// own: switch_settle decides it when something is queued there later. The port was idle, its tx_done kNever.
ORRERY_HD ORRERY_HOT_INLINE inline void transmit_start(NetView& v, uint32_t row, const Packet& p, int64_t now, bool completion_event = true) {
    const PortInfo& info = v.port[row];
    PortTx& tx = v.tx[row];
    const int64_t ser = serialization_ps(tx.ser, p, info.rate_bps);
    tx.busy = 1;
    tx.busy_until = now + ser;
    v.times[row].busy_since = now;
    NodeOutput& o = v.out[info.node];
    if (completion_event) {
        v.times[row].tx_done = tx.busy_until;
        port_event_changed(v, info.node, row);
    } else {
        o.open_completions = 1;
    }
    const int64_t arrival = now + ser + info.delay_ps;
    ++o.transmissions;
    if (arrival < o.min_sent_arrival) o.min_sent_arrival = arrival;
    if (p.kind == kPfc) ++o.pfc_sent;
    if (Packet* slot = ring_push_slot(v, info.peer_port, info.node)) write_ring_slot(v.store, *slot, p, arrival, v.stream_packets);
}

ORRERY_HD inline void record_pfc(NetView& v, uint32_t node, uint32_t row, bool pause, int64_t now, uint8_t node_type) {
    PfcLog& log = *v.pfc_log;
    const uint32_t at = log.shared ? atomic_fetch_add_u32(&log.count, 1) : log.count;
    if (at >= log.capacity) {
        v.out[node].events_overflow |= 1u;
        return;
    }
    if (!log.shared) ++log.count;
    PfcEvent& e = log.events[at];
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
