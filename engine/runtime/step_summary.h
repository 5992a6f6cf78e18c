#pragma once
// One experiment after a step, summed over its nodes: what the host step (stepper.h) needs of the nodes.
// The CPU backend folds its host rows with these functions; the device backend reduces the same way on the
// device (device/device_tables.cpp, reduce_by_key), so both give the same summary.
#include <cstdint>

#include "common/host_device.h"
#include "net/state.h"

namespace orrery {

struct StepSummary {
    uint64_t events = 0;            // node events handled, cumulative
    uint64_t pfc_in_flight = 0;     // PFC frames sent and not yet received
    uint32_t completions = 0;       // flows completed, cumulative
    int64_t blocks_held = 0;        // packet blocks its rings and queues hold
    int64_t next_event = net::kNever;
    int64_t next_busy = net::kNever;  // leaving out queue-monitor samples; includes the earliest arrival sent
    uint32_t overflow = 0;          // events_overflow bits of its nodes, or'ed
    uint32_t overflow_node = UINT32_MAX;  // the first node with overflow bits
};

// Node `n`'s share.
ORRERY_HD inline StepSummary node_summary(const net::NodeOutput& o, uint32_t n) {
    StepSummary s;
    s.events = o.packets_processed;
    s.pfc_in_flight = o.pfc_sent - o.pfc_received;
    s.completions = o.completions;
    s.blocks_held = o.blocks_held;
    s.next_event = o.next_event;
    s.next_busy = o.next_busy_event < o.min_sent_arrival ? o.next_busy_event : o.min_sent_arrival;
    s.overflow = o.events_overflow;
    s.overflow_node = o.events_overflow ? n : UINT32_MAX;
    return s;
}

// Two shares together (associative and commutative: any order of reduction gives the same summary).
ORRERY_HD inline StepSummary merge_summaries(const StepSummary& a, const StepSummary& b) {
    StepSummary s;
    s.events = a.events + b.events;
    s.pfc_in_flight = a.pfc_in_flight + b.pfc_in_flight;
    s.completions = a.completions + b.completions;
    s.blocks_held = a.blocks_held + b.blocks_held;
    s.next_event = a.next_event < b.next_event ? a.next_event : b.next_event;
    s.next_busy = a.next_busy < b.next_busy ? a.next_busy : b.next_busy;
    s.overflow = a.overflow | b.overflow;
    s.overflow_node = a.overflow_node < b.overflow_node ? a.overflow_node : b.overflow_node;
    return s;
}

}  // namespace orrery
