#pragma once
// A run of a scenario whose workload is an LLM training job, as every front end drives it (`orrery-cli run`,
// the MPI sweep's ranks): every experiment is compiled to its task graph and checked for memory (an experiment
// that does not fit ends "oom" and the sweep goes on); experiments on the analytic or flow network, or timed by
// SimAI's busbw formula, run at once, one after another, and packet-level ones together as one batch driven
// by their task graphs through the batch session (session.h). Each experiment's timeline, flow rows and
// metrics go to the results store as it runs; the front end hears it through the same SessionObserver, with
// experiment indices of the scenario (not of the packet batch).
#include <atomic>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/load.h"
#include "scenario/presets.h"
#include "session/session.h"
#include "telemetry/results_store.h"

namespace orrery {

struct LlmSessionResult {
    std::vector<nlohmann::json> summaries;  // per experiment, in experiment order (null: never started, cancelled)
    bool cancelled = false;
};

// What can be told of each experiment before a run is stored: a job that breaks the parallelism's rules, or
// whose task graph cannot fit in this machine's memory, is refused (InputError, every problem with its file and
// field) before the results store is opened, so that no run that never started is stored.
void precheck_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets);

// `fabrics[i]`: experiment i's. The store's run must have been begun; it is ended here. `cancel` stops the run
// between experiments timed without packets and inside the packet batch, keeping what finished.
LlmSessionResult run_llm_session(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const SessionBackend& backend, const SessionObserver& observer, std::atomic<bool>& cancel);

}  // namespace orrery
