#pragma once
// The rate windows of the flows that are running, by local flow. A window is about a kilobyte (two rings of
// kMaxWindow samples); held for every flow of a job it was the skipper's largest table: MoE 32x22B on 1,024
// GPUs has millions of flows per iteration, and zeroing their windows when the skipper was built took
// longer than simulating the first millisecond (docs/history/wormhole-skipping.md, "MoE 32×22B on 1,024 GPUs").
// Only flows that have started and not finished have a window, so a slot is taken when a flow starts and
// given back when it finishes; a freed slot is reused lowest-first (free_slots.h), and a slot taken forgets its
// samples (count 0: every reader reads only the last `count` samples), so results cannot depend on reuse.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "wormhole/free_slots.h"
#include "wormhole/steady.h"

namespace orrery::wormhole {

class RateWindows {
public:
    explicit RateWindows(uint32_t flows) : slot_(flows, kNone) {}

    // Flow `flow` starts: it gets a cleared window.
    void open(uint32_t flow) {
        if (slot_[flow] != kNone) throw std::logic_error("wormhole: rate window of flow " + std::to_string(flow) + " opened twice");
        uint32_t s;
        if (free_.empty()) {
            s = uint32_t(pool_.size());
            pool_.emplace_back();
        } else {
            s = free_.take();
            pool_[s].reset(0, 0, 0);  // as a new window; its rings are not zeroed (a kilobyte at every flow's start)
        }
        slot_[flow] = s;
    }
    // Flow `flow` has finished: its window is given back.
    void close(uint32_t flow) {
        const uint32_t s = slot_[flow];
        if (s == kNone) return;
        slot_[flow] = kNone;
        free_.give(s);
    }
    RateWindow& operator[](uint32_t flow) { return pool_[checked(flow)]; }
    const RateWindow& operator[](uint32_t flow) const { return pool_[checked(flow)]; }
    // Windows held at most at once so far (what the table costs: that many times sizeof(RateWindow)).
    size_t capacity() const { return pool_.size(); }

private:
    static constexpr uint32_t kNone = 0xffffffffu;
    uint32_t checked(uint32_t flow) const {
        const uint32_t s = slot_[flow];
        if (s == kNone) throw std::logic_error("wormhole: flow " + std::to_string(flow) + " has no rate window (not running)");
        return s;
    }
    std::vector<uint32_t> slot_;  // by local flow: its window in pool_, or kNone
    std::vector<RateWindow> pool_;
    FreeSlots free_;
};

}  // namespace orrery::wormhole
