#pragma once
// The text the Inspector draws, as plain functions (tested without OpenGL): times and values with their
// units, the time ruler's ticks and labels, and what a timeline span is (hover tooltip, details panel).
#include <string>
#include <vector>

#include "views/run/telemetry_data.h"

namespace orrery::views {

std::string time_label(double seconds);                     // "1.25 ms", four significant digits
std::string value_label(double value, const char* unit);    // "3.2 MB", SI prefixes up to T

// The time ruler: about `count` ticks at 1, 2 or 5 × 10^k s inside [t0, t1], and each tick's label in the unit
// of the step (ns, us, ms or s) with as many digits as tell neighbouring ticks apart.
std::vector<double> ruler_ticks(double t0, double t1, int count);
std::string ruler_label(double t, double step);

// A span named as Perfetto names a slice: its task, kind and rank first, then stream and iteration, its
// times, and for communication the bytes per rank and the peers. Lines separated by '\n'.
std::string span_description(const Span& s);

// The timeline's row labels: "rank 3", or in a mix of jobs "job b · rank 3" with the rank the job's own (its rows
// are consecutive; a job's first rank is the lowest row its spans are on). A job is named from `job_names` (by
// index) where the store has said, by its index until then. `job` -1 where no span says.
struct RankRow {
    std::string label;
    int job = -1;
};
std::vector<RankRow> rank_rows(const std::vector<Span>& spans, int ranks, const std::vector<std::string>& job_names = {});

}  // namespace orrery::views
