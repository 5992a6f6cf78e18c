#pragma once
// Reading a results store back (read-only): which run holds an experiment, its timeline spans and its
// queue samples. Used by `orrery-cli export`; never writes, so a store another process is filling is safe.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "telemetry/results_store.h"

struct sqlite3;

namespace orrery {

struct PortSeries {               // one switch port's egress occupancy over time
    uint32_t node = 0, ifindex = 0;
    std::vector<std::pair<int64_t, uint64_t>> samples;  // (time ps, bytes), every sample time of the experiment (0 when empty)
    uint64_t max_bytes = 0;
};

// Simulated time when steady-state skipping froze some of an experiment's flows (the union of its skips):
// packets were not stepped there, so exports mark it.
struct SkippedSpan {
    int64_t start_ps = 0, end_ps = 0;
    int64_t skips = 0;                 // partition skips merged into this span
};

class StoreReader {
public:
    // Throws InputError naming the file when it is missing or is not an Orrery results store.
    explicit StoreReader(const std::filesystem::path& file);
    ~StoreReader();
    StoreReader(const StoreReader&) = delete;
    StoreReader& operator=(const StoreReader&) = delete;

    // The newest run that holds `experiment`; with `run` > 0, that run, checked. Throws InputError
    // listing the experiments there are when it is not found.
    int64_t find_run(const std::string& experiment, int64_t run = 0) const;
    std::string experiment_status(int64_t run, const std::string& experiment) const;
    bool has_running_run() const;  // a run still marked running (its process may be alive)
    // The scenario run `run` (0: the newest run) ran, as stored with it (RunRecord::scenario_json), and the
    // run's id; throws InputError when the store has no such run or kept no scenario for it.
    std::pair<int64_t, std::string> scenario_of(int64_t run) const;
    std::vector<TimelineRow> timeline(int64_t run, const std::string& experiment) const;
    // A mix of jobs: each job's name, ranks, hosts and iteration times; empty for one job.
    std::vector<JobRow> jobs(int64_t run, const std::string& experiment) const;
    // The `count` ports with the highest peak occupancy, each with a value at every sample time.
    std::vector<PortSeries> busiest_ports(int64_t run, const std::string& experiment, size_t count) const;
    // Every stored queue sample of the experiment (non-empty ports), in time order.
    void each_queue_sample(int64_t run, const std::string& experiment, const std::function<void(int64_t time_ps, const QueueSample&)>& visit) const;
    // Overlapping skips merged, in time order; empty without skipping.
    std::vector<SkippedSpan> skipped_spans(int64_t run, const std::string& experiment) const;

private:
    bool has_table(const char* name) const;
    sqlite3* db_ = nullptr;
    std::filesystem::path file_;
};

}  // namespace orrery
