#pragma once
// process_node: one node's events of one step, in timestamp order.
//
// The step [t, t + Δ) of an experiment is the unit of parallel work: Δ is the experiment's minimum link
// delay, so anything a node sends in the step arrives at its peer at or after t + Δ and nodes of one step
// never wait on each other. Inside the step a node handles its events exactly in time order; ties are
// broken as ns-3 breaks them — by when each event was scheduled — and then by a fixed kind and index order
// (the reference's remaining tie order is its global insertion order, which no parallel engine can know).
//
// Call flow: process_node → run_events<switch or host> → next_event (its ports' tournament tree,
// port_events.h, then the node's own timers) → switch_receive / switch_start_next / switch_sample_queues
// (switch.h) or nic_receive / nic_start_next / nic_start_flow / dcqcn timers (nic.h).
#include "net/nic.h"
#include "net/switch.h"

namespace orrery::net {

// A node's next event has a port event's fields: its time, when it was scheduled, its row (a port row, or a
// flow row for a flow's timers and start) and its source; `earlier` (port_events.h) is the tie order.
ORRERY_HD inline void consider(PortEvent& best, int64_t time, int64_t scheduled, uint8_t source, uint32_t row) {
    const PortEvent candidate{time, scheduled, row, source};
    if (earlier(candidate, best)) best = candidate;
}

ORRERY_HD inline uint32_t ring_head_block(const NetView& v, uint32_t row) { return ring_head_block(v.ring_head[row], v.ring_tail[row], v.store.next); }

// How long before its arrival packet p of port `row`'s ring was scheduled: its serialization time as the
// sender computed it, plus the link's delay. Cached by wire size, so the sender's row (a dependent load) is
// read only when the size changes.
ORRERY_HD inline int64_t arrival_lead_ps(NetView& v, uint32_t row, const Packet& p) {
    SerializationCache& c = v.ring_head[row].lead;
    const int kind = p.kind == kData ? 0 : 1;
    if (c.wire[kind] != p.wire) {
        const PortInfo& sender = v.port[v.port[row].peer_port];
        c.wire[kind] = p.wire;
        c.ser_ps[kind] = tx_time_ns(p.wire, sender.rate_bps) * 1000 + sender.delay_ps;
    }
    return c.ser_ps[kind];
}

// Port `row`'s next arrival from p, the ring's packet at position `head` (of `published`), in `block`.
ORRERY_HD inline void arrival_from(NetView& v, uint32_t row, uint32_t block, const Packet& p, uint64_t head, uint64_t published) {
    // The ring's next packet, read when this one is popped, some events later: in a large fabric it was
    // written a step ago and is in memory, not in the cache (docs/history/runtime-scale-and-mpi.md). At a block's end it
    // is the first of the block the writer linked after this one.
    if ((head + 1) % kBlockPackets != 0) prefetch_line(&next_slot(v.store, p));
    else if (head + 1 < published) prefetch_line(&packet_at(v.store, v.store.next[block], 0));
    v.times[row].next_arrival = p.arrival;
    v.times[row].arrival_scheduled = p.arrival - arrival_lead_ps(v, row, p);
}

// The arrival time of the next packet of port `row`'s ring that the peer has published (kNever when none),
// and when it was scheduled: the reference orders equal-time events by when they were scheduled, and an
// arrival was scheduled when its sender started transmitting (its serialization time recomputed as the
// sender computed it).
ORRERY_HD inline void refresh_arrival(NetView& v, uint32_t row, const StepClock& clock) {
    const uint64_t head = v.ring_head[row].head;
    const uint64_t published = v.ring_tail[row].published_tail[clock.read_slot()];
    if (head < published) {
        const uint32_t block = ring_head_block(v, row);
        arrival_from(v, row, block, packet_at(v.store, block, head), head, published);
    } else {
        v.times[row].next_arrival = kNever;
    }
}

// The same right after ring_pop took `popped`: inside a block the new head is the slot after it; at a block's
// end (one pop in 16) it is found as refresh_arrival finds it.
ORRERY_HD inline void refresh_arrival_after_pop(NetView& v, uint32_t row, const StepClock& clock, const Packet& popped) {
    const uint64_t head = v.ring_head[row].head;
    if (head % kBlockPackets == 0) {
        refresh_arrival(v, row, clock);
        return;
    }
    const uint64_t published = v.ring_tail[row].published_tail[clock.read_slot()];
    if (head < published) arrival_from(v, row, v.ring_head[row].block, next_slot(v.store, popped), head, published);
    else v.times[row].next_arrival = kNever;
}

// Takes the packet at the ring's head; the block it leaves behind goes to this worker's stock. The packet is
// returned in its slot, which stays the caller's to read and change until the ring's next pop: its block is
// the ring's current one, given back only when the head moves past it.
ORRERY_HD inline Packet& ring_pop(NetView& v, uint32_t node, uint32_t row) {
    RingHead& h = v.ring_head[row];
    const uint32_t block = ring_head_block(v, row);
    if (block != h.block) {
        if (h.block != kNoBlock) block_give(*v.store.cache, v.out[node].blocks_held, h.block);
        h.block = block;
    }
    Packet& p = packet_at(v.store, block, h.head);
    ++h.head;
    return p;
}

// The reference's ReceiveErrorModel (ERROR_RATE_PER_LINK, or the link's own rate in topology.txt): each
// packet fully received at a port, of any kind, is lost with the link's probability. The draw is keyed by
// (seed, the port's index in its experiment, the port's count of arrivals), so it is the same on every
// thread count and batch, and independent of the ECN draws (another stream).
ORRERY_HD inline bool link_loses(NetView& v, uint32_t node, uint32_t row) {
    const double p = v.port_loss[row];
    if (p <= 0) return false;
    const ExperimentParams& ep = node_params(v, node);
    return uniform01(ep.seed ^ kLossStreamSalt, row - ep.port_base, v.tx[row].loss_draws++) < p;
}

// Flow f's DCQCN timers into `best`, the earliest so far.
ORRERY_HD inline void consider_dcqcn_timers(const NetView& v, uint32_t f, PortEvent& best) {
    const DcqcnState& d = v.dcqcn[f];
    if (d.t_alpha != kNever) consider(best, d.t_alpha, d.s_alpha, kSrcAlpha, f);
    if (d.t_decrease != kNever) consider(best, d.t_decrease, d.s_decrease, kSrcDecrease, f);
    if (d.t_rp != kNever) consider(best, d.t_rp, d.s_rp, kSrcRateIncrease, f);
}
// The earliest DCQCN timer of a host's queue pairs (time kNever when none). `earlier` is a strict order, so
// this is the same timer whatever the list's order.
ORRERY_HD inline PortEvent earliest_dcqcn_timer(const NetView& v, uint32_t node) {
    const NicState& nic = v.nic[node];
    PortEvent best{kNever, kNever, 0, kSrcNone};
    for (uint32_t i = 0; i < nic.qp_count; ++i) consider_dcqcn_timers(v, v.nic_qps[nic.qp_offset + i], best);
    return best;
}

// The node's next event: the root of its ports' tree, then its own timers. `sample_at`: a switch's next queue-
// monitor sample (run_events keeps the switch's in a local), kNever to leave samples out: what remains is the
// node's next busy event (the host jumps idle time to it). `dcqcn_timer`: a host's earliest DCQCN timer as
// earliest_dcqcn_timer found it since the last event that could move one (run_events keeps it; time kNever
// under other CCs), instead of scanning every queue pair at every event. Switches ignore it, hosts `sample_at`.
template <uint8_t Role>
ORRERY_HD ORRERY_HOT_INLINE inline PortEvent next_event(const NetView& v, uint32_t node, const ExperimentParams& ep, int64_t sample_at,
                                                       const PortEvent& dcqcn_timer) {
    PortEvent best = port_events_first(v, node);
    if constexpr (Role == kRoleSwitch) {
        if (sample_at != kNever) consider(best, sample_at, sample_at - ep.qlen_interval, kSrcSample, node);
    } else {
        const NicState& nic = v.nic[node];
        if (nic.next_send != kNever) consider(best, nic.next_send, nic.next_send_scheduled, kSrcRetry, node);
        if (nic.timeout_check != kNever) consider(best, nic.timeout_check, nic.timeout_check_scheduled, kSrcTimeout, node);
        if (nic.starts_next < nic.starts_count) {
            const uint32_t f = v.nic_starts[nic.starts_offset + nic.starts_next];
            consider(best, v.flow[f].start, v.flow[f].start, kSrcFlowStart, f);
        }
        if (dcqcn_timer.time != kNever && earlier(dcqcn_timer, best)) best = dcqcn_timer;
    }
    return best;
}

// The events of a switch or a host (Role) before the step's end, in order. Each kind of node has its own loop,
// so that an event's dispatch tests only the sources that kind has. False when the node stopped for blocks
// (device backend: process_node's comment).
template <uint8_t Role>
ORRERY_HD inline bool run_events(NetView& v, uint32_t node, const ExperimentParams& ep, const StepClock& clock, NodeOutput& out) {
    const bool device_stock = v.store.cache->shared != nullptr;  // its stock can run dry mid-step (blocks.h)
    // A host's earliest DCQCN timer, found again only after an event that can move one: a timer of its own, a
    // flow starting, or an arriving ACK or NACK (a CNP, a completion). Data arriving and packets leaving change
    // no sender's timers. Scanning every queue pair at every event was 9 % of a MoE 8x13B skip-on run's
    // instructions (tens of queue pairs per NIC). The host's hooks between steps may move timers too (memo
    // replays, completion skips): each step starts with a scan. An ACK or NACK moves only its own flow's
    // timers: unless the earliest was that flow's (it may have moved later), the earliest of the two is the
    // earliest of all, without a scan (the order is strict, so the same event the scan would find).
    PortEvent dcqcn_timer{kNever, kNever, 0, kSrcNone};
    const bool dcqcn = ep.cc_mode == kDcqcn;  // read once: stores of the loop's bytes may alias `ep` for the compiler
    bool dcqcn_timer_known = !dcqcn;
    // Only the switch's sample event moves its next sample within a step (the host's hooks do between steps).
    int64_t sample_at = kNever;
    if constexpr (Role == kRoleSwitch) sample_at = v.sw[node].next_sample;
    for (;;) {
        if constexpr (Role != kRoleSwitch) {
            if (!dcqcn_timer_known) {
                dcqcn_timer = earliest_dcqcn_timer(v, node);
                dcqcn_timer_known = true;
            }
        }
        const PortEvent e = next_event<Role>(v, node, ep, sample_at, dcqcn_timer);
        if (e.time >= clock.window_end) {
            out.next_event = e.time;
            out.next_busy_event = e.source == kSrcSample ? next_event<Role>(v, node, ep, kNever, dcqcn_timer).time : e.time;
            return true;
        }
        if (device_stock && !block_stock_ready(*v.store.cache)) return false;
        ++out.packets_processed;
        const int64_t now = e.time;
        if (e.source == kSrcArrival) {
            Packet& p = ring_pop(v, node, e.row);
            if (p.kind == kPfc) ++out.pfc_received;
            uint32_t acked_flow = kNoRow;  // the flow whose DCQCN timers this ACK or NACK may move
            if constexpr (Role != kRoleSwitch) {
                if (p.kind == kAck || p.kind == kNack) acked_flow = p.flow;
            }
            refresh_arrival_after_pop(v, e.row, clock, p);
            port_event_changed(v, node, e.row);
            if (link_loses(v, node, e.row)) {
                ++out.lost;
                continue;
            }
            if constexpr (Role == kRoleSwitch) {
                switch_receive(v, node, ep, e.row, p, e);
            } else {
                nic_receive(v, node, ep, e.row, p, now);
                if (dcqcn && acked_flow != kNoRow && dcqcn_timer_known) {
                    if (dcqcn_timer.time != kNever && dcqcn_timer.row == acked_flow) dcqcn_timer_known = false;
                    else consider_dcqcn_timers(v, acked_flow, dcqcn_timer);
                }
            }
        } else if (e.source == kSrcTxDone) {
            v.tx[e.row].busy = 0;
            v.times[e.row].tx_done = kNever;
            if constexpr (Role == kRoleSwitch) switch_start_next(v, node, ep, e.row, e);
            else nic_start_next(v, node, ep, now);
            if (v.times[e.row].tx_done == kNever) port_event_changed(v, node, e.row);  // else transmit_start did
        } else if constexpr (Role == kRoleSwitch) {  // kSrcSample
            switch_sample_queues(v, node);
            SwitchMmu& s = v.sw[node];
            s.next_sample = s.next_sample + ep.qlen_interval > ep.qlen_end ? kNever : s.next_sample + ep.qlen_interval;
            sample_at = s.next_sample;
        } else {
            if (dcqcn && e.source != kSrcRetry && e.source != kSrcTimeout) dcqcn_timer_known = false;  // a timer of its own fired, or a flow started
            switch (e.source) {
                case kSrcAlpha: dcqcn_alpha_timer(v, e.row, now); break;
                case kSrcDecrease: dcqcn_decrease_timer(v, e.row, now); break;
                case kSrcRateIncrease: dcqcn_rate_increase_timer(v, e.row, now); break;
                case kSrcFlowStart:
                    ++v.nic[node].starts_next;
                    nic_start_flow(v, node, ep, e.row, now);
                    break;
                case kSrcRetry:
                    v.nic[node].next_send = kNever;
                    nic_start_next(v, node, ep, now);
                    break;
                case kSrcTimeout: nic_retransmit_timeout(v, node, ep, now); break;
                default: break;
            }
        }
    }
}

// At a switch's step end, its ports sending with no completion event (switch.h, switch_settle) are closed as
// those events would have left them: a completion that fell in the step leaves its port idle, and one after
// the step counts among the node's next events. So the experiment's clock jumps, the host's hooks run and the
// skipper samples at the same step ends as with every completion an event (results with skipping depend on them).
ORRERY_HD inline void close_completions(NetView& v, uint32_t node, const StepClock& clock, NodeOutput& out) {
    uint32_t open = 0;
    for (uint32_t row = v.node_port_begin[node]; row < v.node_port_begin[node + 1]; ++row) {
        if (!sending_without_completion_event(v, row)) continue;
        PortTx& tx = v.tx[row];
        if (tx.busy_until < clock.window_end) {
            tx.busy = 0;
            continue;
        }
        open = 1;
        out.next_event = imin(out.next_event, tx.busy_until);
        out.next_busy_event = imin(out.next_busy_event, tx.busy_until);
    }
    out.open_completions = open;
}

// Publish one ring's counter for its reader's next step. A ring that got packets since the last publish (the
// other slot) marks its reader, whose next step then looks at its rings. Called by the ring's writer, and by a
// partitioned run's exchange for rings written on another rank (runtime/partition.cpp). The slots come from the
// caller's StepClock, computed once per node: taken from the clock here (past the flag's atomic store) they were
// recomputed per port, +1 % of a k = 8 incast's instructions.
ORRERY_HD inline void publish_tail(RingTail& ring, NodeOutput* out, uint32_t read_slot, uint32_t write_slot) {
    if (ring.tail != ring.published_tail[read_slot]) set_flag(out[ring.reader].arrivals_published[write_slot]);
    ring.published_tail[write_slot] = ring.tail;
}

// Publish this step's counters of the node's sending ends for the peers' next step.
ORRERY_HD inline void publish_tails(NetView& v, uint32_t node, const StepClock& clock) {
    const uint32_t read = clock.read_slot(), write = clock.write_slot();
    for (uint32_t row = v.node_port_begin[node]; row < v.node_port_begin[node + 1]; ++row)
        publish_tail(v.ring_tail[v.port[row].peer_port], v.out, read, write);
}

// A node's tree of port events is kept from one of its steps to the next: every change inside a step updates
// it (port_events.h), and between steps only packets its peers published move it, in the rings it had seen
// empty (a ring whose head it had seen keeps that head: only the node pops it). So a step refreshes just those
// rings' leaves. The tree is rebuilt whole after the host wrote anything of the node (batch.h: mark_host_wrote;
// a shift moves its ports' completions and arrivals, a drain empties them) and when a device pass resumes it.
// Refreshing every port and rebuilding every tree each step had been ~17 % of a k = 8 incast's instructions.
// Only a node whose peers marked it (publish_tails) looks at its rings at all: a quiet 64-port switch otherwise
// read three lines per port every step to find nothing (GPT-3 175B: ~6 % of its samples).
// Returns whether a leaf changed.
ORRERY_HD inline bool refresh_new_arrivals(NetView& v, uint32_t node, const StepClock& clock) {
    const uint32_t read = clock.read_slot();
    bool changed = false;
    for (uint32_t row = v.node_port_begin[node]; row < v.node_port_begin[node + 1]; ++row) {
        if (v.times[row].next_arrival != kNever || v.ring_head[row].head >= v.ring_tail[row].published_tail[read]) continue;
        refresh_arrival(v, row, clock);
        port_event_changed(v, node, row);
        changed = true;
    }
    return changed;
}

ORRERY_HD inline void process_node(NetView& v, uint32_t node, const StepClock& clock) {
    const uint8_t role = v.node_role[node];
    NodeOutput& out = v.out[node];
    // Peers set this slot in the last step; they set the other one in this step, and this one again in the next.
    uint8_t& published = out.arrivals_published[clock.read_slot()];
    const bool new_arrivals = published != 0;
    if (new_arrivals) published = 0;
    if (!out.host_wrote && !out.suspended) {
        // A node with nothing to do in the step (no new arrival, its next event past the step's end) rests:
        // its tails last moved in step active_step and were published then; the other slot needs them once more.
        if (!(new_arrivals && refresh_new_arrivals(v, node, clock)) && out.next_event >= clock.window_end) {
            ++out.steps_rested;
            out.min_sent_arrival = kNever;
            if (clock.step <= out.active_step + 1) publish_tails(v, node, clock);
            return;
        }
    } else if (role != kRoleIdle) {
        for (uint32_t row = v.node_port_begin[node]; row < v.node_port_begin[node + 1]; ++row) refresh_arrival(v, row, clock);
        port_events_build(v, node);
    }
    // A node resumed in a later pass of the same step (device backend) keeps what it sent so far; its
    // arrivals and tree were rebuilt above from the state it stopped in, as at the step's start.
    if (out.suspended) out.suspended = 0;
    else out.min_sent_arrival = kNever;
    const uint64_t handled = out.packets_processed;
    if (out.host_wrote) out.active_step = clock.step;
    if (role != kRoleIdle) {
        const ExperimentParams& ep = node_params(v, node);
        const bool whole = role == kRoleSwitch ? run_events<kRoleSwitch>(v, node, ep, clock, out) : run_events<kRoleHost>(v, node, ep, clock, out);
        if (out.packets_processed != handled) out.active_step = clock.step;
        if (!whole) {
            out.suspended = 1;
            return;
        }
        if (out.open_completions) close_completions(v, node, clock, out);
    }
    out.host_wrote = 0;
    publish_tails(v, node, clock);
}

}  // namespace orrery::net
