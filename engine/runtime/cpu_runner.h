#pragma once
// The CPU backend. With at least as many experiments as threads, each thread steps whole experiments,
// one after another; otherwise threads split the nodes and meet at a barrier every step, whose completion
// runs the host's share (telemetry, completion, idle-time jumps, PFC log sizing, load balance). Results are
// identical for every thread count and either mode: nodes of one step never touch each other's state,
// experiments never touch each other's, and every reduction runs in node order on one thread.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/batch.h"
#include "wormhole/skipper.h"

namespace orrery {

struct FlowResult {
    uint32_t flow;            // row in the batch
    int64_t finish;           // ps; kNever when unfinished
    uint32_t timeouts = 0;    // retransmission timeouts of its sender
    uint32_t retransmits = 0; // data packets its sender sent again
};

struct QueueSnapshot {
    int64_t time;             // ps: a multiple of 100 ms (the reference's dump interval)
    // per switch port with samples: node (fabric id), ifindex, counts per 1 KB bucket up to the highest hit
    struct Port {
        uint32_t node, ifindex;
        std::vector<uint32_t> counts;
    };
    std::vector<Port> ports;
};

struct ExperimentResult {
    std::string id;
    std::vector<FlowResult> flows;            // in completion order (finish time, then sender node, then order)
    std::vector<net::PfcEvent> pfc;           // in time order; node = fabric id
    std::vector<QueueSnapshot> queues;
    uint64_t events = 0;                      // node events handled
    uint64_t packet_hops = 0;                 // packets put on a link
    uint64_t steps = 0;
    uint64_t split_steps = 0;                 // steps whose nodes were split over several threads
    uint64_t streamed_steps = 0;              // steps whose packets were written by non-temporal stores (RunOptions)
    uint64_t node_steps_rested = 0;           // over its nodes, steps a node had nothing to do in (net/node.h: process_node)
    int64_t end_time = 0;                     // ps: when its last flow finished (or the stop time)
    uint32_t drops = 0;                       // packets switches dropped for lack of buffer
    uint64_t lost = 0;                        // packets lost on links (network.error_rate_per_link, a link's error_rate)
    uint64_t lost_to_failures = 0;            // packets lost to failed links: queued toward them or on them when they went down, sent into them after
    uint64_t sent_into_failures = 0;          // of those, what switches sent into a failed link (or had no route for) after it went down
    std::vector<FabricEvent> fabric_events;   // its topology.events as resolved (what: "link 12 (3 – 17) down at 100us")
    uint64_t timeouts = 0;                    // retransmission timeouts, over its flows
    uint64_t retransmits = 0;                 // data packets sent again, over its flows
    bool stalled = false;                     // nothing left to do but flows unfinished
    bool cancelled = false;                   // stopped by RunOptions::cancel
    wormhole::SkipReport skipping;            // with skipping on: every skip, memo lookups, what was learned
};

struct RunProgress {
    uint64_t step;
    std::vector<int64_t> clocks;              // ps, per experiment
    std::vector<uint32_t> flows_done;         // per experiment
};

// Hooks are called on the thread stepping the experiment (several at once in a batch run on several
// threads): they must be thread-safe and quick, and they may read the batch's rows of their experiment.
// A workload that drives an experiment's flows (workload/llm_job.cpp): after every step, and before a step
// that starts at one of its own event times, it is called with `now` (every flow completion before `now`
// is in the tables) and the experiment's count of finished flows. It handles its own events up to `now`,
// may release flows (release_flow) at `now` or later, and says when its next own event is. It changes the
// tables only through release_flow, which marks the flow's sender (batch.h: mark_host_wrote).
struct DriverStatus {
    int64_t next_own = INT64_MAX;      // ps: its next own event (> now); INT64_MAX: none
    int64_t next_release = INT64_MAX;  // ps: the earliest start of a flow it has released and not yet started
    bool finished = false;             // nothing left to run: the experiment ends
};

struct RunOptions {
    int threads = 1;
    // Bytes of packets a worker writes in a step above which it writes them by non-temporal stores (net/link.h:
    // write_ring_slot); 0: the size of a core's own cache (L2). Changes speed only, never results.
    uint64_t stream_packets_above = 0;
    std::function<void(const RunProgress&)> progress;  // node-parallel runs: about every 1000 steps
    // Every 1000 steps of the stepper advancing it, per unfinished experiment: its clock (ps) and finished flows.
    std::function<void(uint32_t experiment, int64_t clock, uint32_t flows_done)> on_progress;
    std::function<void(uint32_t experiment)> on_experiment_start;
    // At every multiple of the experiment's sample interval while it is busy (idle stretches are skipped).
    std::function<void(uint32_t experiment, int64_t time_ps)> on_sample;
    std::function<void(uint32_t experiment, const ExperimentResult&)> on_experiment_done;
    // Per experiment: when set, the experiment's flows start when its driver releases them, and it ends
    // when the driver says it has finished (not when its flows have).
    std::function<DriverStatus(uint32_t experiment, int64_t now, uint32_t flows_done)> drive;
    // Checked after every step: when set, every unfinished experiment stops and reports what it finished.
    const std::atomic<bool>* cancel = nullptr;
    // Steady-state skipping: the memo as it stood when the run began (read only; null = empty). What each
    // experiment learns comes back in its result (ExperimentResult::skipping.learned).
    const wormhole::MemoTable* memo = nullptr;
    // By experiment, where set: the memo it reads instead of `memo` (runs in memo rounds, memo_rounds.h).
    std::vector<const wormhole::MemoTable*> memo_by_experiment;
    const wormhole::MemoTable* memo_for(uint32_t experiment) const {
        return experiment < memo_by_experiment.size() && memo_by_experiment[experiment] ? memo_by_experiment[experiment] : memo;
    }
};

std::vector<ExperimentResult> run_cpu(Batch& batch, const RunOptions& options);

// Nodes [begin, end) with each switch followed by the hosts attached to it, so that contiguous chunks
// (and the threads' shares of them) hold whole racks or pods: in generated fabrics the hosts come first
// and the switches after, and cutting that order puts every host on another thread than its switch,
// sending every packet between cores. Also the order a partitioned run (partition.h) cuts.
std::vector<uint32_t> locality_order(const Batch& b, uint32_t begin, uint32_t end);

}  // namespace orrery
