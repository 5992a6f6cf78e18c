#include "runtime/hpcc_job.h"

#include "io/hpcc_config.h"
#include "scenario/build.h"

namespace orrery {

LoadedScenario load_config_scenario(const HpccConfig& config, const nlohmann::json& doc, const std::string& source,
                                    const std::filesystem::path& base_dir, const PresetLibrary& presets) {
    try {
        LoadedScenario loaded = load_scenario_document(doc, source, base_dir, presets);
        loaded.warnings = in_config_terms(config, source, loaded.warnings);
        return loaded;
    } catch (const InputError& e) {
        throw InputError(in_config_terms(config, source, e.diagnostics()));
    }
}

std::unique_ptr<HpccJob> load_hpcc_job(const std::filesystem::path& config, const std::filesystem::path& working_dir,
                                       const PresetLibrary& presets, Diagnostics& warnings, uint64_t seed) {
    Diagnostics diags;
    const std::filesystem::path folder = config.parent_path().empty() ? "." : config.parent_path();
    HpccConfig parsed = read_hpcc_config(read_text_file(config), config.string(), folder, diags);
    nlohmann::json doc = scenario_from_hpcc_config(parsed, working_dir, working_dir, diags);
    if (diags.has_errors()) throw InputError(diags);
    warnings.append(diags);
    doc["seed"] = seed;
    auto job = std::make_unique<HpccJob>();
    job->loaded = load_config_scenario(parsed, doc, config.string(), working_dir, presets);
    warnings.append(job->loaded.warnings);
    const Scenario& s = job->loaded.scenarios.at(0);
    job->fabric = std::make_unique<Fabric>(build_fabric(s.topology));
    job->input = ExperimentInput{"e0000", &s, job->fabric.get(), workload_flows(s)};
    return job;
}

}  // namespace orrery
