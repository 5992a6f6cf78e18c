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

LlmRunResult run_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const Backend& backend, ProgressLines* progress = nullptr);

}  // namespace orrery::cli
