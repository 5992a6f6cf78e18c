#pragma once
// An HPCC/SimAI config.txt as one runnable experiment: the scenario it means, its fabric and its flows.
// File names resolve as the reference resolves them (the working directory, then beside the config).
#include <filesystem>
#include <memory>

#include "common/diagnostics.h"
#include "runtime/batch.h"
#include "scenario/load.h"

namespace orrery {

struct HpccJob {
    LoadedScenario loaded;
    std::unique_ptr<Fabric> fabric;
    ExperimentInput input;  // points into loaded and fabric
};

struct HpccConfig;

// load_scenario_document for a scenario made from a config (scenario_from_hpcc_config): its errors and
// warnings name the config's keys and lines, not the scenario's fields.
LoadedScenario load_config_scenario(const HpccConfig& config, const nlohmann::json& doc, const std::string& source,
                                    const std::filesystem::path& base_dir, const PresetLibrary& presets);

// Throws InputError with every problem; warnings (keys not modelled) go to `warnings`. `seed` is the
// experiment's seed (its random ECN marks): the counterpart of the reference's RngRun, not a replay of it.
std::unique_ptr<HpccJob> load_hpcc_job(const std::filesystem::path& config, const std::filesystem::path& working_dir,
                                       const PresetLibrary& presets, Diagnostics& warnings, uint64_t seed = 1);

}  // namespace orrery
