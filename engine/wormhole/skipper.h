#pragma once
// The steady-state skipper of one experiment (Wormhole's workflow, §3.2): called by the runner after every
// step, it keeps the experiment's partitions (partitions.h) as flows start and finish, samples the rates of
// their flows every sampling interval, and when every flow of a partition is steady (steady.h) freezes the
// partition until its first flow would finish or a known flow start touches it (shift.h). A flow released
// later that touches a frozen partition pulls the partition's end back to its start (skip-back, §6.3).
// Transients are memoized (memo.h): a partition whose conflict graph was seen before skips its transient
// with the stored duration, bytes and end rates.
//
// Host code: it runs between steps on the thread stepping the experiment and touches only that
// experiment's rows, so results are identical for any thread count.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/batch.h"
#include "wormhole/memo.h"
#include "wormhole/partitions.h"
#include "wormhole/steady.h"

namespace orrery::wormhole {

struct SkipRecord {
    uint32_t partition = 0;
    uint32_t flows = 0;
    int64_t start_ps = 0, end_ps = 0;     // the frozen span of simulated time
    uint64_t bytes = 0;                   // credited to its flows
    uint64_t events_saved = 0;            // estimated: 2 events (arrival, transmit completion) per packet per port crossed
    bool from_memo = false;               // the span began with a memoized transient
    bool completes = false;               // its flows finished at its end, their last round trip not played (drain.h)
};

struct MemoRecord {
    int64_t time_ps = 0;
    uint32_t partition = 0, flows = 0;
    enum Kind : uint8_t { kHit, kMiss, kStored, kFollow } kind = kMiss;  // kFollow: waited on an identical partition that missed at the same instant
};

struct SkipReport {
    std::vector<SkipRecord> skips;
    std::vector<MemoRecord> memo;
    std::vector<MemoEntry> learned;       // transients this experiment measured (merged into the memo after the run)
    uint64_t events_saved = 0;
    uint64_t bytes_credited = 0;
    uint32_t memo_hits = 0, memo_misses = 0;
    uint32_t memo_follows = 0;            // misses that waited on an identical partition's measurement instead of repeating it
    int64_t sample_interval_ps = 0;       // in force
    uint32_t completion_skips = 0;        // skips whose flows all finished at their end (drain.h)
    uint32_t tails_measured = 0;          // tails of large partitions measured to their completions (tails.h)
    uint32_t tail_replays = 0;            // completion skips that finished a tail at its measured times
};

// The part of every memo key an experiment fixes for the whole run: its congestion control and every
// parameter of it, and the MTU. Experiments whose domains differ never match each other's transients.
std::string memo_domain(const Batch& b, uint32_t experiment);

class Skipper {
public:
    // `shared`: the memo as it stood when the run began (may be null; read only).
    Skipper(Batch& b, uint32_t experiment, const MemoTable* shared);
    ~Skipper();

    // After a step ending at `end` (every event before it handled, the driver's releases made). `next` is the
    // experiment's next event as the runner computed it; returns it, moved earlier if a skip was cut back.
    int64_t after_step(int64_t end, int64_t next, uint32_t flows_done);
    // Completion skips (drain.h): the end of the earliest still frozen (kNever: none); at a step ending
    // there or later, before the workload driver takes the step's completions, complete_due finishes their
    // flows (returns how many) and gives their packets' blocks to `cache`. wake(next): `next` moved before
    // the earliest end, so that a step ends exactly there.
    int64_t completion_due() const;
    uint32_t complete_due(int64_t end, net::BlockCache& cache);
    int64_t wake(int64_t next) const;
    SkipReport take_report();

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace orrery::wormhole
