#pragma once
// Tails measured to their completions, for partitions too large for a completion skip (MoE all-to-alls).
//
// A skip ends when a partition's first flow reaches its tail. A partition of a few flows in lockstep then
// takes a completion skip (drain.h: every flow finishes at its steady rate). An all-to-all's flows do not
// finish together: when the first half finish, the others take the bandwidth they leave, so steady rates
// put the last finishes 6.7 us (8 % of a flow) late on MoE 8x13B. Its tails were played at the packet level
// every time instead: 12 us of each 78-us all-to-all, and the misses and followers of the partitions its
// first finishes left behind (docs/history/wormhole-skipping.md, "Tails to their completions").
//
// So when a partition of a given conflict graph thaws with its first flow in its tail, the tail is measured
// at the packet level, untouched, until every flow of it has finished: how many bytes each had left and when
// it finished. Once two measurements of one graph agree (tails_agree), the next partition that thaws with an
// isomorphic graph and the same bytes left (within tail_bytes_tolerance) finishes each flow at the measured
// time instead, in a completion skip. Two must agree so that a tail DCQCN happened to cut (some flows of an
// all-to-all slowed in their tails and not others, at random) is not replayed wherever its graph recurs. That
// alone did not make MoE 32x22B's 96-192-flow tails safe: the skipper takes tails of 33 to 64 flows only
// (kTailMaxFlows), measured in docs/history/wormhole-skipping.md. (Under HPCC too since a thaw ages the flows' rates
// through the skip, age_hpcc_through_steady: before, HPCC's replays left tails that replayed 1 % early.)
//
// While its tail is measured a partition takes no memo replay and no steady skip. A recording is dropped when
// a flow joins its partition (the tail is no longer the one keyed) or when one of its flows is frozen all the
// same (a follower's wait). Recordings are per experiment and not written to the memo file.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "wormhole/memo.h"

namespace orrery::wormhole {

// The most a hitting flow's bytes left may differ from the stored flow's: its finish moves by the difference at
// the stored flow's mean rate over its tail. MoE 8x13B's refused replays (441 in one DCQCN iteration at 2 %, each
// leaving its 48 flows to the packet level, since a replayable graph is not measured again) differed by 7.9 % on
// average at the first flow out of bounds; at 10 % its events fell from 61.2 M to 55.4 M (TIMELY 62.5 M -> 58.3 M)
// and the per-flow FCT error stayed where it was (0.719 -> 0.724 % mean; TIMELY 0.721 -> 0.695 %).
inline double tail_bytes_tolerance(uint64_t stored_remaining, int64_t unit) {
    return 2.0 * double(unit) + 0.10 * double(stored_remaining);
}

struct TailRecording {
    FlowConflictGraph key;
    std::vector<uint32_t> flows;       // global flow rows, in the key's vertex order
    std::vector<uint64_t> remaining;   // bytes each still had to get acknowledged at t0
    std::vector<int64_t> finish;       // ps from t0 to its completion; -1 while it runs
    int64_t t0 = 0;
    uint32_t running = 0;
};

// Whether two measured tails of isomorphic graphs ended alike: their finish times, each sorted (which flow of
// a lockstep group finished first is not what repeats), within `tolerance_ps` of each other one by one.
inline bool tails_agree(const MemoEntry& a, const MemoEntry& b, int64_t tolerance_ps) {
    std::vector<int64_t> x = a.finish_ps, y = b.finish_ps;
    if (x.size() != y.size()) return false;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    for (size_t i = 0; i < x.size(); ++i)
        if (std::abs(x[i] - y[i]) > tolerance_ps) return false;
    return true;
}

// Measured tails by graph: replayable once a second measurement agreed with the first (tails_agree), never
// measured again once one did not.
struct TailMemo {
    MemoTable replayable, measured_once, unalike;

    // Whether the tail of graph `g` is still worth measuring.
    bool open(const FlowConflictGraph& g) const {
        std::vector<uint32_t> mapping;
        return !replayable.find(g, mapping) && !unalike.find(g, mapping);
    }
    // A finished measurement; returns whether it made its graph replayable.
    bool add(MemoEntry entry, int64_t tolerance_ps) {
        std::vector<uint32_t> mapping;
        const MemoEntry* first = measured_once.find(entry.key, mapping);
        if (!first) {
            measured_once.add(std::move(entry));
            return false;
        }
        if (!tails_agree(*first, entry, tolerance_ps)) {
            unalike.add(std::move(entry));
            return false;
        }
        return replayable.add(std::move(entry));
    }
};

// Open recordings and which flow is in which. Flows are global rows; `flow_begin` is the experiment's first.
class TailRecordings {
public:
    TailRecordings(uint32_t flow_begin, uint32_t flows) : begin_(flow_begin), of_flow_(flows, kNone) {}

    bool recording(uint32_t f) const { return of_flow_[f - begin_] != kNone; }

    void start(TailRecording r) {
        const uint32_t id = next_++;
        r.finish.assign(r.flows.size(), -1);
        r.running = uint32_t(r.flows.size());
        for (uint32_t f : r.flows) of_flow_[f - begin_] = id;
        open_.emplace(id, std::move(r));
    }

    // The recording flow `f` is in, if any, is dropped.
    void drop(uint32_t f) {
        const uint32_t id = of_flow_[f - begin_];
        if (id != kNone) close(id);
    }

    // Flow `f` finished at `at`: when it was the last of its recording, the finished tail as a memo entry.
    std::optional<MemoEntry> finished(uint32_t f, int64_t at) {
        const uint32_t id = of_flow_[f - begin_];
        if (id == kNone) return std::nullopt;
        TailRecording& r = open_.at(id);
        for (size_t i = 0; i < r.flows.size(); ++i)
            if (r.flows[i] == f && r.finish[i] < 0) r.finish[i] = at - r.t0, --r.running;
        if (r.running > 0) return std::nullopt;
        MemoEntry entry;
        entry.key = std::move(r.key);
        entry.bytes = std::move(r.remaining);
        entry.finish_ps = std::move(r.finish);
        for (int64_t t : entry.finish_ps) entry.transient_ps = std::max(entry.transient_ps, t);
        entry.ends_steady = false;
        close(id);
        return entry;
    }

private:
    void close(uint32_t id) {
        for (uint32_t g : open_.at(id).flows) of_flow_[g - begin_] = kNone;
        open_.erase(id);
    }

    static constexpr uint32_t kNone = ~uint32_t(0);
    uint32_t begin_;
    std::vector<uint32_t> of_flow_;  // by local flow: its open recording
    std::map<uint32_t, TailRecording> open_;
    uint32_t next_ = 0;
};

}  // namespace orrery::wormhole
