#pragma once
// A run's telemetry as it is added to a results store: the workbench's live inspector polls it while the engine
// writes (WAL lets both work). Each call returns the rows added since the previous one, in the order they were
// written; a store written before a table existed has none of its rows. Read-only.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "telemetry/results_store.h"

struct sqlite3;

namespace orrery {

struct TierSampleRow {  // the largest, p99 and median port queue of a switch tier at a sample time
    std::string experiment;
    int64_t time_ps = 0;
    int tier = 0;
    int64_t max_bytes = 0, p99_bytes = 0, median_bytes = 0;
};
struct PortSampleRow {  // one switch port's egress queue at a sample time
    std::string experiment;
    int64_t time_ps = 0;
    uint32_t node = 0, ifindex = 0;
    uint64_t bytes = 0;
};
struct RateTotalRow {  // the flows' sending rates summed at a sample time, and how many flows were active
    std::string experiment;
    int64_t time_ps = 0;
    double total_bps = 0, flows = 0;
};
struct UplinkSampleRow {  // a switch tier's uplinks over the interval ending at a sample time
    std::string experiment;
    int64_t time_ps = 0;
    int tier = 0;
    std::vector<uint16_t> permille;  // each uplink's utilization, thousandths
};
struct CounterRow {  // what the fabric had lost and resent by a sample time
    std::string experiment;
    int64_t time_ps = 0;
    FabricCounters counters;
};
struct TimelineTailRow {
    std::string experiment;
    TimelineRow span;
};
struct JobNameRow {  // a job of a mix, by its index (the timeline's job column)
    std::string experiment;
    uint32_t job = 0;
    std::string name;
};
struct SkipRow {  // a partition's skip (steady-state skipping)
    std::string experiment;
    int64_t start_ps = 0, end_ps = 0;
    int flows = 0;
    bool from_memo = false;
};

class StoreTail {
public:
    // Throws InputError naming the file when it cannot be opened or is not a results store.
    StoreTail(const std::filesystem::path& file, int64_t run_id);
    ~StoreTail();
    StoreTail(const StoreTail&) = delete;
    StoreTail& operator=(const StoreTail&) = delete;

    std::vector<TierSampleRow> new_tier_samples();
    // Ports of the switch nodes given; `from_start`: their whole history (newly picked switches).
    std::vector<PortSampleRow> new_port_samples(const std::set<int>& nodes, bool from_start);
    std::vector<RateTotalRow> new_rate_totals();
    std::vector<UplinkSampleRow> new_uplink_samples();
    std::vector<CounterRow> new_fabric_counters();
    std::vector<TimelineTailRow> new_timeline();
    std::vector<SkipRow> new_skips();
    std::vector<JobNameRow> new_job_names();  // a job's row again when the session rewrites it (its times at the end)
    std::map<std::string, std::string> statuses() const;  // experiment → status, as it stands

private:
    sqlite3* db_ = nullptr;
    int64_t run_ = 0;
    std::map<std::string, int64_t> last_rowid_;  // per table
};

}  // namespace orrery
