#pragma once
// The "workload" section of kind "llm": model (fields or {"preset": NAME, overrides}), gpu, parallel,
// collectives, compute, network_mode, iterations. Errors name the JSON path.
#include "scenario/json_reader.h"
#include "workload/spec.h"

namespace orrery {

LlmWorkload read_llm_workload(JsonReader& r, const std::filesystem::path& base_dir);

}  // namespace orrery
