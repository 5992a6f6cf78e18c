#pragma once
// Checks the editors show live, computed by the engine from the scenario being edited: the GPU memory each
// pipeline stage needs against the GPU's HBM, the job's world size against the fabric's hosts, and every
// error the scenario reader reports. Plain functions over the scenario JSON: the widgets only display them.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/presets.h"
#include "workload/memory.h"

namespace orrery::views {

struct MemoryCheck {
    std::vector<std::string> errors;   // the scenario reader's messages (JSON paths), when the job cannot be read
    std::optional<LlmWorkload> job;    // the job as the engine reads it (presets resolved, defaults filled)
    MemoryReport report;               // per pipeline stage, bytes
    std::string gpu;
    int world = 0;                     // TP × PP × DP
    size_t hosts = 0;                  // of the fabric (0 when it could not be built)
    std::string world_message;         // empty when the world size matches the fabric
    bool ok() const { return errors.empty() && world_message.empty() && !report.per_stage.empty() && report.fits(); }
};

// `document` is the scenario as edited (its sweep is ignored: the base experiment is checked);
// `hosts` is the fabric's host count.
MemoryCheck check_llm_job(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets, size_t hosts);

// Every error of the whole scenario and its sweep, as the CLI's `validate` prints them; empty when valid.
std::vector<std::string> validate_document(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets);

// The errors and the warnings (keys the job's mode ignores, TP across servers, ECN rates derived, …) of the
// engine's own validation, each "where: message", for the workbench's Problems list.
struct ScenarioProblems {
    std::vector<std::string> errors, warnings;
};
ScenarioProblems check_document(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets);

}  // namespace orrery::views
