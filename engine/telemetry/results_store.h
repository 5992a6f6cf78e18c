#pragma once
// The results store: one SQLite database (WAL) per project, holding runs and everything they measured.
// Schema in engine/telemetry/README.md. Writes happen on a writer thread in transactions while the run goes
// on, so the engine never waits on the disk and a crash keeps everything up to the last commit.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace orrery::wormhole {
struct SkipReport;
}

namespace orrery {

struct RunRecord {
    std::string scenario_name, scenario_file, scenario_sha256;
    std::string backend = "cpu", device;
    int threads = 1;
    int ranks = 1;  // MPI processes that ran the experiments (orrery-cli run under mpirun or srun)
    // The scenario that ran as it was written (presets by name, its sweep), as JSON: kept with the run so that it can be
    // reproduced when its file is gone (the workbench runs a temporary copy); empty: not recorded.
    std::string scenario_json;
};

struct ExperimentRecord {
    std::string id;
    size_t index = 0;
    uint64_t seed = 0;
    std::string sha256;
    nlohmann::json parameters;  // [{"path", "value"}]
};

struct FlowRow {
    uint32_t flow, src, dst, sport, dport, priority;
    uint64_t size_bytes;
    int64_t start_ps, finish_ps;  // finish_ps < 0: unfinished
    int64_t standalone_fct_ps;
};

struct QueueSample {            // one port's egress occupancy at a sample time
    uint32_t node, ifindex;
    uint64_t bytes;
};
struct TierSample {
    int tier;
    uint64_t max_bytes, p99_bytes, median_bytes;
    uint32_t ports;
};
struct RateSample {
    uint32_t flow;
    uint64_t rate_bps;
};

struct UplinkUtilization {      // each uplink of a switch tier over the last sample interval (uplink_load.h)
    int tier = 0;
    std::vector<uint16_t> permille;
};
struct FabricCounters {         // so far in a run: packets switches dropped, lost to failed links, sent again; timeouts
    uint64_t drops = 0, lost_to_failures = 0, retransmits = 0, timeouts = 0;
};

struct TimelineRow {             // one span of a rank's stream (LLM workloads)
    uint32_t rank;
    int iteration;
    std::string stream, task, kind;
    int64_t start_ps, end_ps, bytes;
    std::string peers;
    uint32_t job = 0;             // a mix of jobs: the job's index (its row in `jobs`); rank is then the mix's rank
};

struct JobRow {                   // one job of a mix (workload.kind "jobs")
    uint32_t job = 0;
    std::string name;
    uint32_t first_rank = 0, ranks = 0;  // its ranks in the experiment's timeline: first_rank .. first_rank + ranks − 1
    std::string hosts;            // host indices in rank order, as ranges ("0-31,64-95")
    int64_t start_ps = 0;
    double iteration_time_s = 0;
    double alone_iteration_time_s = 0, slowdown = 0;  // 0: not run alone (workload.isolation false)
    uint32_t first_flow = 0, flows = 0;  // its rows of the experiment's flows table (whose job column says so too)
    std::string kind = "llm";     // "flows": background flows, whose times above are their mean completion time
    std::string leaves;           // the placement map: each leaf switch (node id) under which its GPUs sit, and how many: "64 (16), 65 (16)"
};

class ResultsStore {
public:
    // Opens or creates the database; an existing store keeps its runs and gains a new one.
    // Throws InputError naming the file when it cannot be opened or is not an Orrery store.
    explicit ResultsStore(const std::filesystem::path& file);
    ~ResultsStore();  // flushes and closes
    ResultsStore(const ResultsStore&) = delete;
    ResultsStore& operator=(const ResultsStore&) = delete;

    int64_t begin_run(const RunRecord& run, const std::vector<ExperimentRecord>& experiments);
    void experiment_started(const std::string& experiment);
    void experiment_finished(const std::string& experiment, const std::string& status, const std::string& message, int64_t sim_end_ps,
                             uint64_t events, uint64_t packet_hops, double wall_seconds, std::vector<FlowRow> flows,
                             std::vector<std::tuple<int64_t, uint32_t, uint32_t, uint32_t, uint32_t>> pfc,
                             std::vector<std::tuple<std::string, double, std::string>> metrics,
                             std::function<void()> committed = {});  // called on the writer thread once it is on disk
    void samples(const std::string& experiment, int64_t time_ps, std::vector<QueueSample> queues, std::vector<TierSample> tiers,
                 std::vector<RateSample> rates);
    void timeline(const std::string& experiment, std::vector<TimelineRow> rows);
    // At a sample time: each tier's uplink utilization (tables uplink_tiers) and what was lost and resent so far
    // (fabric_counters), for the live inspector.
    void fabric_samples(const std::string& experiment, int64_t time_ps, std::vector<UplinkUtilization> uplinks, FabricCounters counters);
    // The jobs of a mix, replacing the experiment's rows: written with their placement as the experiment starts (the
    // live inspector names each job's ranks) and again with their times when it ends.
    void jobs(const std::string& experiment, std::vector<JobRow> rows);
    // An experiment's topology.events as resolved: when each happens and what it does ("link 12 (3 – 17) down
    // at 100us"), for the report to name an experiment's failed element and mark its charts.
    void fabric_events(const std::string& experiment, std::vector<std::pair<int64_t, std::string>> events);
    // Steady-state skipping of an experiment: every skip and every memo lookup (tables skips, memo_events).
    void skipping(const std::string& experiment, const wormhole::SkipReport& report);
    // finished, cancelled or failed; experiments still pending or running take the run's status.
    void end_run(const std::string& status, double wall_seconds);
    // Copies one experiment's results from another store holding a single run (an MPI rank's, written by the
    // same code) into this run: the experiment's row takes its status and figures, every other table its
    // rows. `committed` runs once they are on disk.
    void merge_experiment(const std::filesystem::path& other, const std::string& experiment, std::function<void()> committed = {});
    // Marks `running` runs whose process is gone (this host, pid and process start time recorded at
    // begin_run) as `interrupted`, with their unfinished experiments; returns how many. Called on open.
    int mark_interrupted_runs();

    // Waits until every queued write is committed.
    void flush();
    int64_t run_id() const { return run_id_; }
    static int schema_version() { return 2; }
    // Empty when the open database `db` is of a schema version this build knows; otherwise why not (a newer
    // Orrery wrote it, or its schema_version is not a positive integer). The reader and the writer both
    // refuse such a store.
    static std::string newer_schema_problem(sqlite3* db);
    // Empty when `db` is an Orrery results store (or project) that newer_schema_problem passes; otherwise
    // why not, for "FILE <why>" messages. What every reader checks before its first query.
    static std::string not_a_store_problem(sqlite3* db);

private:
    void add_missing_columns();
    void switch_to_wal();
    void post(std::function<void(sqlite3*)> job, std::function<void()> committed = {});
    void writer();

    sqlite3* db_ = nullptr;
    std::filesystem::path file_;
    int64_t run_id_ = 0;
    std::mutex lock_;
    std::condition_variable wake_, drained_;
    struct Job {
        std::function<void(sqlite3*)> write;
        std::function<void()> committed;
    };
    std::deque<Job> jobs_;
    bool stopping_ = false;
    size_t in_flight_ = 0;
    std::string error_;
    std::thread thread_;
};

}  // namespace orrery
