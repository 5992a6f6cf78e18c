#pragma once
// `orrery-cli run` on scenarios whose workload is an LLM training job: every experiment is compiled to its
// task graph and checked for memory (an experiment that does not fit ends "oom" and the sweep goes on);
// analytic experiments run at once, packet-level ones together as one batch driven by their task graphs.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/load.h"
#include "scenario/presets.h"
#include "cli/run_session.h"
#include "telemetry/results_store.h"

namespace orrery::cli {

struct LlmRunResult {
    std::vector<nlohmann::json> summaries;  // per experiment, in experiment order
    bool cancelled = false;
};

// What can be told of each experiment before a run is stored: a job that breaks the parallelism's rules, or
// whose task graph cannot fit in this machine's memory, is refused (InputError, every problem with its file and
// field) before the results store is opened, so that no run that never started is stored.
void precheck_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets);

LlmRunResult run_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const Backend& backend, ProgressLines* progress = nullptr);

}  // namespace orrery::cli
