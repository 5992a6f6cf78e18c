#pragma once
// Freezing a partition by moving it in time (Wormhole §6.2–6.3): every pending event of the partition —
// packets on its links, transmissions under way on its ports, pacing, retries and CC timers of its flows —
// moves `dt` later, and every sequence number of each flow moves by its credited bytes. No packet moves
// while the rest of the fabric runs on; the partition's queues keep their occupancy in the switches' shared
// buffers; at the end of the skip it resumes exactly where it stopped, `dt` later and `credit` bytes further.
// A negative dt with negative credits undoes part of a skip (skip-back, when a flow arrives early).
#include <cstdint>
#include <vector>

#include "runtime/batch.h"

namespace orrery::wormhole {

struct ShiftPlan {
    const std::vector<uint32_t>* ports = nullptr;  // global egress port rows of the partition
    const std::vector<uint32_t>* flows = nullptr;  // global flow rows of the partition
    const std::vector<int64_t>* credit = nullptr;  // bytes per flow, parallel to `flows` (multiples of the MTU)
    int64_t dt_ps = 0;                             // a multiple of 1 ns, so INT and TIMELY stamps move exactly
};

// Applies the plan to the batch's tables (host side, between steps). `scratch` is a per-flow buffer of the
// experiment (size: its flow count, all zero), returned all zero.
void shift_partition(Batch& b, uint32_t experiment, const ShiftPlan& plan, std::vector<int64_t>& scratch);

// Whether a PFC frame of experiment `experiment` is on a link: its nodes have put on links more frames than
// they have taken off them (both counted as the step sends and pops them).
bool pfc_frames_on_links(const Batch& b, uint32_t experiment);

// Whether anything of the partition is held by PFC: a paused class on one of its ports, or a pause or
// resume frame queued at or travelling toward one of them. Such a partition is not frozen (a frozen port
// could not take a resume that arrives while it is frozen). `frames_on_links`: pfc_frames_on_links now; without
// a frame on any link no ring is read (reading every packet of the partition's rings was 0.9 % of a MoE 8x13B
// skip-on run, which sends no PFC frame at all).
bool touches_pfc(const Batch& b, const std::vector<uint32_t>& ports, bool frames_on_links);

}  // namespace orrery::wormhole
