#pragma once
// Running a batch from the command line: the engine's run session (session/session.h) with one progress line
// per experiment on stderr, Ctrl-C to stop keeping what finished, and a summary per experiment.
#include <filesystem>
#include <exception>
#include <functional>
#include <mutex>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/partition.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "session/llm_session.h"
#include "session/session.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

// Where a run's steps execute: CPU threads, or the device backend (engine/runtime/device) where this build
// has one. Results are identical either way.
struct Backend {
    int threads = 1;
    bool device = false;
    // Set on every rank of a partitioned run (`run --partition`): this rank steps its share of each
    // experiment's nodes (runtime/partition.h); `threads` is then 1.
    PartitionComm* partition = nullptr;
};
// --threads, and --backend cpu|device when this build has a device backend.
void add_backend_options(CLI::App& app, Backend& backend);
// "CPU backend, 2 threads", "device backend (OpenMP device system, 2 CPU threads)", ...
std::string describe_backend(const Backend& backend);

// What a CLI run records about itself in the results store.
// `document`: the scenario that runs as written (LoadedScenario::written), kept with the run (RunRecord::scenario_json).
RunRecord cli_run_record(const std::string& name, const std::filesystem::path& file, const std::string& sha256, const Backend& backend,
                         const nlohmann::json& document = nlohmann::json());

// `orrery-cli run --progress-json`: one JSON object per line on stderr for a program that watches the run
// (the workbench): {"event": "run", "run_id", "experiments", "store"}, {"event": "start", "experiment"},
// {"event": "progress", "experiment", "sim_time_ps", "flows_done", "flows", "wall_s"} every 1000 steps, at
// most every 0.2 s of wall time per experiment, {"event": "done", "experiment", "status", "wall_s"}. Off: every call is a no-op.
//
// `--json` (summaries = true): each experiment's summary as one JSON object per line on stdout as soon as it
// has finished (completion order; every object carries its "experiment" id).
class ProgressLines {
public:
    // `lines` false: the human-readable lines (say()) are left out too, as on an MPI rank that is not rank 0.
    explicit ProgressLines(bool on, bool summaries = false, bool lines = true) : on_(on), summaries_(summaries), lines_(lines) {}
    bool on() const { return on_; }
    bool lines() const { return lines_; }
    void summary(const nlohmann::json& j);
    void run(int64_t run_id, size_t experiments, const std::filesystem::path& store);
    void start(const std::string& experiment);
    // Returns without printing when the experiment's previous progress line is younger than 0.2 s.
    void progress(const std::string& experiment, int64_t sim_time_ps, uint64_t flows_done, uint64_t flows, double wall_s);
    void done(const std::string& experiment, const std::string& status, double wall_s);

private:
    void line(const nlohmann::json& j);
    bool on_, summaries_, lines_;
    std::mutex lock_;
    std::map<std::string, double> last_wall_;
};

// A human-readable line on stderr (printf format), unless `progress` is one that leaves them out.
void say(ProgressLines* progress, const char* format, ...) __attribute__((format(printf, 2, 3)));

// Ends the store's run as `failed` when the scope is left by an exception (an input error found mid-run, a
// full disk): the run never stays `running` after its process has given up on it.
class FailedRunMark {
public:
    explicit FailedRunMark(ResultsStore& store) : store_(store), exceptions_(std::uncaught_exceptions()) {}
    ~FailedRunMark();
    FailedRunMark(const FailedRunMark&) = delete;
    FailedRunMark& operator=(const FailedRunMark&) = delete;

private:
    ResultsStore& store_;
    int exceptions_;
};

// The engine's run session (session/session.h) with this command's progress lines, Ctrl-C and SIGTERM to stop
// keeping what finished. `store` may be null (nothing stored). The store's run must have been begun; it is
// ended here.
SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, const Backend& backend,
                          const SessionWorkload& workload = {}, ProgressLines* progress = nullptr);

// The engine's LLM-job session (session/llm_session.h) the same way.
LlmSessionResult run_llm_session(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const Backend& backend, ProgressLines* progress = nullptr);

}  // namespace orrery::cli
