#pragma once
// Turns a scenario document (presets already resolved) into a typed Scenario, collecting every error.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace orrery {

struct ReadContext {
    std::string source;              // file name used in messages
    std::filesystem::path base_dir;  // relative file names in the scenario resolve here
};

std::optional<Scenario> read_scenario(const nlohmann::json& document, const ReadContext& context, Diagnostics& diags);

// The topology part alone: `orrery-cli fabric SPEC` and the workbench's generators use it.
std::optional<TopologySpec> read_topology(JsonReader& r, const std::filesystem::path& base_dir);

}  // namespace orrery
