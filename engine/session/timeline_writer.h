#pragma once
// An LLM experiment's timeline written to the results store while it runs, at its telemetry's pace
// (output.sample_interval of simulated time): the spans finished since the last write, so the workbench draws
// the timeline as the run goes.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/results_store.h"
#include "workload/timeline_stream.h"

namespace orrery {

// `job_of_rank`: a mix of jobs, per rank of the mix its job (empty: one job).
inline std::vector<TimelineRow> timeline_rows(const std::vector<TimelineSpan>& spans, const std::vector<uint32_t>& job_of_rank = {}) {
    std::vector<TimelineRow> rows;
    rows.reserve(spans.size());
    for (const TimelineSpan& s : spans)
        rows.push_back({s.rank, s.iteration, s.stream, s.name, s.kind, s.start_ps, s.end_ps, s.bytes, s.peers, job_of_rank.empty() ? 0 : job_of_rank[s.rank]});
    return rows;
}

class TimelineWriter {
public:
    TimelineWriter(ResultsStore& store, std::string experiment, const TaskGraph& graph, int64_t pace_ps, std::vector<uint32_t> job_of_rank = {})
        : store_(store), experiment_(std::move(experiment)), stream_(graph), pace_(std::max<int64_t>(1, pace_ps)), job_of_rank_(std::move(job_of_rank)) {}
    // At simulated time `now`: writes what finished once `now` has passed the next multiple of the pace.
    void at(const Executor& x, int64_t now) {
        if (now < next_) return;
        next_ = (now / pace_ + 1) * pace_;
        write(x);
    }
    // Everything finished and not yet written (the experiment's end, or the pieces of a flow-level run).
    void write(const Executor& x) {
        std::vector<TimelineSpan> spans = stream_.take(x);
        if (!spans.empty()) store_.timeline(experiment_, timeline_rows(spans, job_of_rank_));
    }
    int64_t pace() const { return pace_; }

private:
    ResultsStore& store_;
    std::string experiment_;
    TimelineStream stream_;
    int64_t pace_;
    int64_t next_ = 0;
    std::vector<uint32_t> job_of_rank_;
};

}  // namespace orrery
