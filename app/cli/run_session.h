#pragma once
// Running a batch from the command line: the results store attached (when given), one progress line per
// experiment on stderr, Ctrl-C to stop keeping what finished, and a summary per experiment.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

struct SessionResult {
    std::vector<ExperimentResult> results;
    std::vector<nlohmann::json> summaries;  // per experiment: status and metrics with units
    bool cancelled = false;
    double wall_seconds = 0;
};

// What a CLI run records about itself in the results store.
RunRecord cli_run_record(const std::string& name, const std::filesystem::path& file, const std::string& sha256, int threads);

// What a workload adds to a run: a driver per experiment (RunOptions::drive), and, when an experiment ends,
// its own status, summary and metrics (called before the experiment is stored).
struct SessionWorkload {
    std::function<DriverStatus(uint32_t, int64_t, uint32_t)> drive;
    std::function<void(uint32_t experiment, std::string& status, nlohmann::json& summary,
                       std::vector<std::tuple<std::string, double, std::string>>& metrics)> on_done;
};

// `store` may be null (nothing stored). The store's run must have been begun; it is ended here.
SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, int threads,
                          const SessionWorkload& workload = {});

}  // namespace orrery::cli
