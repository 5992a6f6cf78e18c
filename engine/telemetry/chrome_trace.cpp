#include "telemetry/chrome_trace.h"

#include <algorithm>
#include <map>
#include <set>

namespace orrery {
namespace {

// Trace Event Format timestamps are microseconds; ours are picoseconds, kept exact to the ns.
double micros(int64_t ps) { return double(ps / 1000) / 1000.0; }

int stream_order(const std::string& s) {
    static const char* order[] = {"compute", "tp", "pp", "dp", "ep", "embedding"};
    for (int i = 0; i < 6; ++i)
        if (s == order[i]) return i;
    return 6;
}

}  // namespace

std::vector<int> timeline_iterations(const std::vector<TimelineRow>& rows) {
    std::set<int> its;
    for (const TimelineRow& r : rows) its.insert(r.iteration);
    return {its.begin(), its.end()};
}

nlohmann::json chrome_trace(const std::vector<TimelineRow>& rows, const std::vector<PortSeries>& ports, const TraceWindow& window,
                            const std::vector<SkippedSpan>& skipped, const std::vector<JobRow>& jobs) {
    auto process_name = [&](uint32_t rank) {
        for (const JobRow& j : jobs)
            if (rank >= j.first_rank && rank < j.first_rank + j.ranks) return "job " + j.name + " · rank " + std::to_string(rank - j.first_rank);
        return "rank " + std::to_string(rank);
    };
    auto job_of = [&](uint32_t rank) -> const JobRow* {
        for (const JobRow& j : jobs)
            if (rank >= j.first_rank && rank < j.first_rank + j.ranks) return &j;
        return nullptr;
    };
    nlohmann::json events = nlohmann::json::array();
    // Lanes: per (rank, stream) the spans sorted by start, each on the first lane free at its start.
    std::map<std::pair<uint32_t, std::string>, std::vector<const TimelineRow*>> by_track;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const TimelineRow& r : rows) {
        if (window.iteration >= 0 && r.iteration != window.iteration) continue;
        by_track[{r.rank, r.stream}].push_back(&r);
        first = std::min(first, r.start_ps);
        last = std::max(last, r.end_ps);
    }
    std::set<uint32_t> ranks;
    for (auto& [key, spans] : by_track) {
        const auto& [rank, stream] = key;
        if (ranks.insert(rank).second) {
            events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", rank}, {"tid", 0}, {"args", {{"name", process_name(rank)}}}});
            events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"tid", 0}, {"args", {{"sort_index", rank}}}});
            if (const JobRow* j = job_of(rank))
                events.push_back({{"ph", "M"}, {"name", "process_labels"}, {"pid", rank}, {"tid", 0}, {"args", {{"labels", "job " + j->name}}}});
        }
        std::stable_sort(spans.begin(), spans.end(), [](const TimelineRow* a, const TimelineRow* b) {
            return a->start_ps != b->start_ps ? a->start_ps < b->start_ps : a->end_ps > b->end_ps;
        });
        std::vector<int64_t> lane_free;  // per lane: when its last span ends
        for (const TimelineRow* s : spans) {
            size_t lane = 0;
            while (lane < lane_free.size() && lane_free[lane] > s->start_ps) ++lane;
            const int tid = stream_order(stream) * 100 + int(lane);
            if (lane == lane_free.size()) {
                lane_free.push_back(0);
                const std::string name = lane == 0 ? stream : stream + " #" + std::to_string(lane + 1);
                events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", tid}, {"args", {{"name", name}}}});
                events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", rank}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
            }
            lane_free[lane] = s->end_ps;
            nlohmann::json args = {{"kind", s->kind}, {"iteration", s->iteration}};
            if (s->bytes > 0) args["bytes"] = s->bytes;
            if (!s->peers.empty()) args["peers"] = s->peers;
            events.push_back({{"ph", "X"}, {"name", s->task}, {"cat", s->kind}, {"pid", rank}, {"tid", tid},
                              {"ts", micros(s->start_ps)}, {"dur", micros(s->end_ps) - micros(s->start_ps)}, {"args", args}});
        }
    }
    if (!ports.empty()) {
        const uint32_t pid = ranks.empty() ? 0 : *ranks.rbegin() + 1;
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "fabric: busiest switch ports"}}}});
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", -1}}}});
        for (const PortSeries& p : ports) {
            const std::string name = "queue node " + std::to_string(p.node) + " port " + std::to_string(p.ifindex) + " (bytes)";
            uint64_t previous = UINT64_MAX;
            for (auto [t, bytes] : p.samples) {
                if (window.iteration >= 0 && (t < first || t > last)) continue;
                if (bytes == previous) continue;  // a counter holds its value until the next event
                previous = bytes;
                events.push_back({{"ph", "C"}, {"name", name}, {"pid", pid}, {"tid", 0}, {"ts", micros(t)}, {"args", {{"bytes", bytes}}}});
            }
        }
    }
    if (!skipped.empty()) {
        const uint32_t pid = (ranks.empty() ? 0 : *ranks.rbegin() + 1) + (ports.empty() ? 0 : 1);
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                          {"args", {{"name", "steady-state skipping: flows frozen, packets not simulated"}}}});
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", -2}}}});
        for (const SkippedSpan& k : skipped) {
            if (window.iteration >= 0 && (k.end_ps < first || k.start_ps > last)) continue;
            events.push_back({{"ph", "X"}, {"name", "skipped (steady state)"}, {"cat", "skipping"}, {"pid", pid}, {"tid", 0}, {"ts", micros(k.start_ps)},
                              {"dur", micros(k.end_ps) - micros(k.start_ps)}, {"args", {{"partition_skips", k.skips}}}});
        }
    }
    nlohmann::json trace;
    trace["traceEvents"] = std::move(events);
    trace["displayTimeUnit"] = "ns";
    trace["otherData"] = {{"title", window.title}, {"time_unit_of_ts", "us"}};
    if (window.iteration >= 0) trace["otherData"]["iteration"] = window.iteration;
    return trace;
}

}  // namespace orrery
