#include "workload/timeline_stream.h"

namespace orrery {

TimelineStream::TimelineStream(const TaskGraph& g) : graph_(g), ending_begin_(g.size() + 1, 0) {
    for (const CollectiveRecord& c : g.collectives) ++ending_begin_[c.end + 1];
    for (size_t op = 0; op < g.size(); ++op) ending_begin_[op + 1] += ending_begin_[op];
    ending_.resize(g.collectives.size());
    std::vector<uint32_t> fill(ending_begin_.begin(), ending_begin_.end() - 1);
    for (uint32_t ci = 0; ci < g.collectives.size(); ++ci) ending_[fill[g.collectives[ci].end]++] = ci;
}

std::vector<TimelineSpan> TimelineStream::take(const Executor& x) {
    std::vector<TimelineSpan> spans;
    const std::vector<uint32_t>& order = x.finish_order();
    const OpTimes times = x.times();
    for (; cursor_ < order.size(); ++cursor_) {
        const uint32_t op = order[cursor_];
        if (graph_.ops[op].kind == OpKind::compute) spans.push_back(compute_span(graph_, times, op));
        for (uint32_t i = ending_begin_[op]; i < ending_begin_[op + 1]; ++i) {
            span_members(graph_, graph_.collectives[ending_[i]], members_);
            for (uint32_t member : members_) spans.push_back(collective_span(graph_, times, ending_[i], member));
        }
    }
    taken_ += spans.size();
    return spans;
}

}  // namespace orrery
