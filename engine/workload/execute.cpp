#include "workload/execute.h"

#include <cmath>

namespace orrery {

Executor::Executor(const TaskGraph& g, double overlap_slowdown, std::function<int64_t(uint32_t, int64_t)> start_transfer)
    : graph_(g), slowdown_(overlap_slowdown), start_transfer_(std::move(start_transfer)), succ_begin_(g.size() + 1, 0), waiting_(g.size()),
      ready_(g.size(), 0), start_(g.size(), kNoTime), end_(g.size(), kNoTime), blocker_(g.size(), UINT32_MAX), comm_in_flight_(g.world, 0) {
    for (uint32_t op = 0; op < g.size(); ++op) {
        waiting_[op] = uint32_t(g.deps[op].size());
        for (uint32_t d : g.deps[op]) ++succ_begin_[d + 1];
    }
    for (size_t op = 0; op < g.size(); ++op) succ_begin_[op + 1] += succ_begin_[op];
    finish_order_.reserve(g.size());
    succ_.resize(succ_begin_[g.size()]);
    std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (uint32_t op = 0; op < g.size(); ++op)
        for (uint32_t d : g.deps[op]) succ_[fill[d]++] = op;
}

void Executor::begin(int64_t t0) {
    for (uint32_t op = 0; op < graph_.size(); ++op)
        if (waiting_[op] == 0) launch(op, t0);
}

void Executor::launch(uint32_t id, int64_t t) {
    const Op& op = graph_.ops[id];
    start_[id] = t;
    switch (op.kind) {
        case OpKind::join: events_.push({t + op.duration, id}); break;
        case OpKind::local:
            ++comm_in_flight_[op.rank];
            if (op.peer != op.rank) ++comm_in_flight_[op.peer];
            if (start_local_) start_local_(id, t);
            else events_.push({t + op.duration, id});
            break;
        case OpKind::compute: {
            int64_t d = op.duration;
            const double slowdown = graph_.lane_overlap_slowdown.empty() ? slowdown_ : graph_.lane_overlap_slowdown[op.rank];
            if (slowdown > 0 && comm_in_flight_[op.rank] > 0) d = int64_t(std::llround(double(d) * (1 + slowdown)));
            events_.push({t + d, id});
            break;
        }
        case OpKind::transfer:
            ++comm_in_flight_[op.rank];
            if (op.peer != op.rank) ++comm_in_flight_[op.peer];  // a lockstep transfer inside one lane counts once
            start_[id] = start_transfer_(id, t);
            break;
    }
}

void Executor::transfer_done(uint32_t op, int64_t t) { events_.push({t, op}); }

void Executor::finish(uint32_t id, int64_t t) {
    const Op& op = graph_.ops[id];
    end_[id] = t;
    ++finished_ops_;
    finish_order_.push_back(id);
    if (op.kind == OpKind::transfer || op.kind == OpKind::local) {
        --comm_in_flight_[op.rank];
        if (op.peer != op.rank) --comm_in_flight_[op.peer];
    }
    for (uint32_t i = succ_begin_[id]; i < succ_begin_[id + 1]; ++i) {
        const uint32_t s = succ_[i];
        if (t >= ready_[s]) ready_[s] = t, blocker_[s] = id;
        if (--waiting_[s] == 0) launch(s, ready_[s]);
    }
}

void Executor::advance(int64_t now) {
    while (!events_.empty() && events_.top().first <= now) {
        const Event e = events_.top();
        events_.pop();
        finish(e.second, e.first);
    }
}

int64_t Executor::next_time() const { return events_.empty() ? kNoTime : events_.top().first; }

}  // namespace orrery
