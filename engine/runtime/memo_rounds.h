#pragma once
// Sharing memoized transients along a sweep (skipping.share_memo) without giving up determinism.
//
// Experiments that share their memo and have the same memo domain (wormhole::memo_domain: the congestion
// control, its parameters, the MTU — the only ones whose transients can match) form a chain, in experiment
// order. Each chain member runs after the one before it and reads the run's memo plus everything its chain's
// earlier members learned. Chains are independent, so a chain's r-th members run together in round r (on
// as many threads as the run has). What an experiment reads is then fixed by the sweep alone: the same on any
// thread count, whichever experiment finishes first.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"

namespace orrery {

struct MemoRounds {
    static constexpr uint32_t kOwnMemo = UINT32_MAX;
    std::vector<std::vector<uint32_t>> rounds;  // experiments run together, in experiment order
    std::vector<uint32_t> chain;                // by experiment: its chain, or kOwnMemo when it does not share
    uint32_t chains = 0;
    bool sharing() const { return rounds.size() > 1; }
};

// One round of every experiment when no two of them share a chain.
MemoRounds plan_memo_rounds(const Batch& b);

}  // namespace orrery
