#pragma once
// An LLM job's timeline while it runs: the spans of the tasks that finished since the last take, so that a run
// writes its timeline as it goes (the workbench draws it live) instead of all of it when the experiment ends.
// The spans are summarize_llm's, one finished task at a time: a compute op's when it ends, a collective's (on
// each member with a span) when its last op ends.
#include <cstdint>
#include <vector>

#include "workload/execute.h"
#include "workload/llm_job.h"

namespace orrery {

class TimelineStream {
public:
    explicit TimelineStream(const TaskGraph& g);
    // The spans of every task that finished since the previous call, in the order the tasks finished.
    std::vector<TimelineSpan> take(const Executor& x);
    // Spans handed out so far.
    size_t taken() const { return taken_; }

private:
    const TaskGraph& graph_;
    size_t cursor_ = 0;  // into Executor::finish_order
    size_t taken_ = 0;
    // The collectives whose last op is op o: ending_[ending_begin_[o] .. ending_begin_[o + 1]).
    std::vector<uint32_t> ending_begin_, ending_;
    std::vector<uint32_t> members_;
};

}  // namespace orrery
