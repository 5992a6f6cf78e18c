#pragma once
// The CPU backend. With at least as many experiments as threads, each thread steps whole experiments,
// one after another; otherwise threads split the nodes and meet at a barrier every step, whose completion
// runs the host's share (telemetry, completion, idle-time jumps, pool growth, load balance). Results are
// identical for every thread count and either mode: nodes of one step never touch each other's state,
// experiments never touch each other's, and every reduction runs in node order on one thread.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/batch.h"

namespace orrery {

struct FlowResult {
    uint32_t flow;            // row in the batch
    int64_t finish;           // ps; kNever when unfinished
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
    int64_t end_time = 0;                     // ps: when its last flow finished (or the stop time)
    uint32_t drops = 0;
    bool stalled = false;                     // nothing left to do but flows unfinished
};

struct RunProgress {
    uint64_t step;
    std::vector<int64_t> clocks;              // ps, per experiment
    std::vector<uint32_t> flows_done;         // per experiment
};

struct RunOptions {
    int threads = 1;
    std::function<void(const RunProgress&)> progress;  // called on the host about every 1000 steps
};

std::vector<ExperimentResult> run_cpu(Batch& batch, const RunOptions& options);

}  // namespace orrery
