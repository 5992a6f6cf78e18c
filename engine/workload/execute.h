#pragma once
// Executes a task graph in time order: an op starts when the last op it waits on ends. Compute takes its
// duration, stretched by the overlap slowdown when its rank has communication in flight as it starts
// (multiverse §4.1); local (intra-server) ops take their α-β time; joins take none; transfers are timed by
// whoever runs the network — the analytic α-β path model here, or the packet engine through a driver
// (workload/llm_job.cpp) that releases a flow per transfer and reports its completion.
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "workload/graph.h"

namespace orrery {

inline constexpr int64_t kNoTime = INT64_MAX;

// When each op of a graph started and ended (ps) and which predecessor ended last: what a run leaves for its
// summary (an Executor's, or a slice of a mix's run for one of its jobs, workload/job_mix.h).
struct OpTimes {
    const std::vector<int64_t>& start;
    const std::vector<int64_t>& end;
    const std::vector<uint32_t>& blocker;  // UINT32_MAX: none
};

class Executor {
public:
    // `start_transfer(op, t)` is called when a transfer may start at t; it returns when the transfer really
    // starts (≥ t) and reports its end later through transfer_done (analytic networks may call it at once).
    Executor(const TaskGraph& g, double overlap_slowdown, std::function<int64_t(uint32_t op, int64_t t)> start_transfer);
    // Local (intra-server) ops go to `start_local` as transfers go to start_transfer (the flow network shares
    // NVLink among them); without one a local op takes its α-β duration.
    void set_start_local(std::function<void(uint32_t op, int64_t t)> start_local) { start_local_ = std::move(start_local); }

    void begin(int64_t t0);                      // starts every op that waits on nothing
    void transfer_done(uint32_t op, int64_t t);  // a transfer or network-timed local op ended at t (≥ its start)
    void advance(int64_t now);                   // handles every end at or before `now`, in (time, op) order
    int64_t next_time() const;                   // the next end it knows of; kNoTime when none
    bool finished() const { return finished_ops_ == graph_.size(); }
    size_t unfinished() const { return graph_.size() - finished_ops_; }

    const std::vector<int64_t>& start() const { return start_; }
    const std::vector<int64_t>& end() const { return end_; }
    const std::vector<uint32_t>& blocker() const { return blocker_; }  // per op: the predecessor that ended last
    // Every finished op, in the order it finished: what a run reports while it goes (workload/timeline_stream.h).
    const std::vector<uint32_t>& finish_order() const { return finish_order_; }
    const TaskGraph& graph() const { return graph_; }
    OpTimes times() const { return {start_, end_, blocker_}; }

private:
    void launch(uint32_t op, int64_t t);
    void finish(uint32_t op, int64_t t);

    const TaskGraph& graph_;
    double slowdown_;
    std::function<int64_t(uint32_t, int64_t)> start_transfer_;
    std::function<void(uint32_t, int64_t)> start_local_;
    // Op d's successors, in op order: succ_[succ_begin_[d] .. succ_begin_[d + 1]) (one list per op was 0.4 % of a
    // MoE 8x13B skip-on run in allocations alone: 580,000 ops).
    std::vector<uint32_t> succ_begin_, succ_;
    std::vector<uint32_t> waiting_;
    std::vector<int64_t> ready_, start_, end_;
    std::vector<uint32_t> blocker_;
    std::vector<int32_t> comm_in_flight_;  // per rank
    using Event = std::pair<int64_t, uint32_t>;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    std::vector<uint32_t> finish_order_;
    size_t finished_ops_ = 0;
};

}  // namespace orrery
