#pragma once
// The "workload" section of kind "jobs": network_mode (every job's), isolation, and the jobs, each a workload
// as kind "llm" reads it plus name, placement, start and stragglers. Errors name the JSON path.
#include <filesystem>

#include "scenario/json_reader.h"
#include "workload/jobs.h"

namespace orrery {

JobsWorkload read_jobs_workload(JsonReader& r, const std::filesystem::path& base_dir);

}  // namespace orrery
