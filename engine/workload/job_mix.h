#pragma once
// Several jobs on one fabric as one task graph (workload.kind "jobs"). Each job is prepared alone on its hosts
// (workload/placement.h) with its own graph and rank numbering; merge_jobs lays their graphs side by side —
// ops, lanes, ranks, collectives, pair and member sets one job after another, nothing shared, no edge between
// jobs — so every network mode runs a mix as it runs one job, and jobs meet only where their traffic shares
// links. A job starting later waits on a join as long as its start (Op::duration of a join). A job's results
// are its slice of the run's op times, summarized against its own graph (summarize_mix): its ranks, timeline
// and iteration time (from its start) read exactly as if it had run alone.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/jobs.h"
#include "workload/llm_job.h"

namespace orrery {

struct MixPart {
    std::string name;
    LlmJob job;                       // alone on its hosts: its graph, placement, transfers
    int64_t start_ps = 0;
    uint32_t first_op = 0, first_lane = 0, first_rank = 0, first_transfer = 0;  // where it sits in the merged job
    bool background = false;          // background flows (background_job): measured by their mean completion time
};

struct JobMix {
    std::vector<MixPart> parts;
    LlmJob merged;
};

// Lays the parts' graphs into mix.merged (and sets each part's offsets). The parts must agree on lanes: all
// lockstep or none (the caller refuses a mix that does not).
void merge_jobs(JobMix& mix);

// A background job's flows as a job: a rank per host its flows touch (in the order they first appear), a transfer
// per flow, which waits on a join lasting until the flow's start. `w` (its priority, the experiment's network mode)
// must outlive the job.
LlmJob background_job(const std::vector<BackgroundFlow>& flows, const Fabric& f, const LlmWorkload& w);

// Compute slowdown per rank of a job's graph (stragglers): its compute ops on that rank take `factor` times as
// long. In a lockstep graph a lane runs at its slowest rank's pace.
void slow_ranks(TaskGraph& g, const std::vector<std::pair<uint32_t, double>>& factors);

// Per job (part order) its outcome from the merged run's op times; returns the mix's own: every transfer's times
// (merged order), the longest iteration time, ops and network flows of all.
LlmOutcome summarize_mix(const JobMix& mix, const OpTimes& x, std::vector<LlmOutcome>& per_job);

}  // namespace orrery
