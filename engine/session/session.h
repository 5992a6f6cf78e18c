#pragma once
// One run of a batch, as every front end drives it (orrery-cli run and run-hpcc, the MPI runners, and through
// them the workbench): the memo file read and saved, queue and rate samples, each experiment's summary metrics
// and its rows in the results store, on the CPU threads, the device backend or this rank's share of a
// partitioned run. What a front end prints is its own: it hears the session through a SessionObserver.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/partition.h"
#include "telemetry/results_store.h"

namespace orrery {

struct SessionResult {
    std::vector<ExperimentResult> results;
    std::vector<nlohmann::json> summaries;  // per experiment: status and metrics with units
    bool cancelled = false;
    double wall_seconds = 0;
    std::vector<PartitionStats> partition_stats;  // partitioned runs: every rank's figures, by rank
};

// Where a run's steps execute: CPU threads, the device backend (engine/runtime/device) where the build has one,
// or this rank's share of each experiment (runtime/partition.h; `threads` is then 1). Results are identical.
struct SessionBackend {
    int threads = 1;
    bool device = false;
    PartitionComm* partition = nullptr;
    std::string name = "CPU backend";  // as notes about the backend name it
};

// What a workload adds to a run: a driver per experiment (RunOptions::drive), and, when an experiment ends,
// its own status, summary and metrics (called before the experiment is stored).
struct SessionWorkload {
    std::function<DriverStatus(uint32_t, int64_t, uint32_t)> drive;
    std::function<void(uint32_t experiment, std::string& status, nlohmann::json& summary,
                       std::vector<std::tuple<std::string, double, std::string>>& metrics)> on_done;
};

// What the front end hears, each member optional. Calls for different experiments may come from different
// threads; `finished` calls are serialized.
struct SessionObserver {
    std::function<void(uint32_t experiment)> started;
    // Every 1000 steps (set it only when wanted: it costs a call per experiment then).
    std::function<void(uint32_t experiment, int64_t sim_time_ps, uint32_t flows_done, uint32_t flows, double wall_s)> progress;
    // Once the experiment's rows are on disk (at once without a store), so a program reading the store finds them.
    std::function<void(uint32_t experiment, const std::string& status, double wall_s)> committed;
    // The experiment's summary (status and metrics with units); `finished` counts the experiments done so far.
    std::function<void(uint32_t experiment, const ExperimentResult& result, const nlohmann::json& summary, size_t finished, double wall_s)> finished;
    // A note for people (the memo read and saved, what the device backend holds): its subject ("memo", the
    // backend's name) and text; `always`: worth saying even where progress lines are off.
    std::function<void(const std::string& subject, const std::string& text, bool always)> note;
};

// Per experiment: its flows' FCT and slowdown statistics, PFC pauses, drops, simulated time, events, memory and
// wall time, and with skipping what was skipped; as metrics with units and as the summary JSON.
struct SessionSummary {
    nlohmann::json json;
    std::vector<std::tuple<std::string, double, std::string>> metrics;
};
SessionSummary summarize_experiment(const Batch& b, uint32_t e, const ExperimentResult& r, double wall);

// An experiment's resolved topology.events as the store keeps them: (time in ps, what happens).
std::vector<std::pair<int64_t, std::string>> event_rows(const std::vector<FabricEvent>& events);

// `store` may be null (nothing stored); its run must have been begun, and is ended here (`failed` when the run
// throws). `cancel`: set from elsewhere (a signal, the workbench) to stop, keeping what finished.
SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, const SessionBackend& backend,
                          const SessionWorkload& workload, const SessionObserver& observer, std::atomic<bool>& cancel);

}  // namespace orrery
