#pragma once
// An LLM experiment's timeline as Chrome trace JSON (the Trace Event Format that Perfetto and
// chrome://tracing open): a process per rank, a thread per stream (compute, tp, pp, dp, ep) — a stream whose
// spans overlap (gradient buckets in flight together, sends both ways) gets extra lanes "dp #2", … so every
// track nests properly — complete events named like NVTX ranges, and counter tracks for the queue
// occupancy of the busiest switch ports.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/results_store.h"
#include "telemetry/store_reader.h"

namespace orrery {

struct TraceWindow {
    int iteration = -1;                      // ≥ 0: only this iteration's spans, and counters inside its time span
    std::string title;                       // shown as the trace's metadata
};

// `skipped`: spans where steady-state skipping froze flows, drawn as their own track so that nobody reads a
// flat stretch of the counters as an anomaly. `jobs`: a mix of jobs (the store's jobs rows): each rank's process
// is named for its job and its rank there ("job a · rank 3"), labelled with the job, and the jobs' processes sort
// one job after another.
nlohmann::json chrome_trace(const std::vector<TimelineRow>& rows, const std::vector<PortSeries>& ports, const TraceWindow& window,
                            const std::vector<SkippedSpan>& skipped = {}, const std::vector<JobRow>& jobs = {});

// The iterations the rows cover, ascending.
std::vector<int> timeline_iterations(const std::vector<TimelineRow>& rows);

}  // namespace orrery
