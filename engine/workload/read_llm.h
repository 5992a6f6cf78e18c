#pragma once
// The "workload" section of kind "llm": model (fields or {"preset": NAME, overrides}), gpu, parallel,
// collectives, compute, network_mode, iterations. Errors name the JSON path.
#include <optional>

#include "scenario/json_reader.h"
#include "workload/spec.h"

namespace orrery {

// `mode`: a job of several (workload.jobs) runs on the experiment's network mode; its own network_mode is refused.
LlmWorkload read_llm_workload(JsonReader& r, const std::filesystem::path& base_dir, std::optional<NetworkMode> mode = std::nullopt);

}  // namespace orrery
