#pragma once
// What the live inspector draws, as plain data: time series (simulated seconds → value), timeline spans and
// skipped stretches per experiment, and the downsampling that turns a series into one min/max pair per pixel
// column so that a peak is never lost between pixels.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace orrery::views {

struct Series {
    std::vector<double> t;   // simulated time, s (ascending)
    std::vector<double> v;
    void add(double time, double value) {
        t.push_back(time);
        v.push_back(value);
    }
};

struct Span {
    int rank = 0;
    std::string stream, task, kind, peers;
    double start = 0, end = 0;   // s
    int64_t bytes = 0;
    int iteration = 0;
    int job = 0;                 // a mix of jobs: the job of `rank` (a rank of the mix)
};

struct SkipBand {
    double start = 0, end = 0;   // s
    int flows = 0;
    bool from_memo = false;
};

struct ExperimentTelemetry {
    std::array<Series, 3> tier_max, tier_p99, tier_median;  // bytes, tiers 1–3
    std::map<std::pair<int, int>, Series> ports;            // (node, ifindex) → bytes
    // Each switch tier's uplinks: utilization (0–1) of each over the latest sample interval, and the busiest and
    // the mean over time (tiers 1–2; uplinks go one tier up).
    std::array<std::vector<float>, 3> uplinks_now;
    double uplinks_at = -1;                                  // s: the sample uplinks_now is from
    std::array<Series, 3> uplink_busiest, uplink_mean;
    Series drops, lost_to_failures, retransmits, timeouts;  // so far, packets (timeouts: count)
    Series total_rate;                                      // b/s summed over active flows
    Series active_flows;
    std::vector<Span> spans;
    std::vector<SkipBand> skips;
    std::vector<std::string> job_names;                     // a mix: each job's name by its index (Span::job)
    std::string status;
    double last_time() const;
    void append(const ExperimentTelemetry& more);           // a later chunk of the same experiment
};

struct ColumnRange {
    double lo = 0, hi = 0;
    int count = 0;           // samples in the column (0: none; drawn as a gap, never as zero)
};
// One range per pixel column of [t0, t1): every sample inside falls into exactly one column.
std::vector<ColumnRange> downsample(const Series& s, double t0, double t1, int columns);

// Union of overlapping bands, sorted: what the time axes shade.
std::vector<SkipBand> merge_bands(std::vector<SkipBand> bands);

}  // namespace orrery::views
