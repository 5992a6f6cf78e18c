#pragma once
// The HPCC/SimAI ns-3 config.txt: "KEY value…" lines (reference/ns3-hpcc README §4, every key of the
// reference's third.cc and SimAI's monitor keys). Keys that Orrery does not model are reported as
// warnings, never dropped silently; unknown keys are reported with the closest known key.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"

namespace orrery {

struct HpccConfigEntry {
    std::string key;
    std::vector<std::string> values;
    size_t line = 0;
};

struct HpccConfig {
    std::string source;                    // file name for messages
    std::filesystem::path folder;          // the config's folder
    std::vector<HpccConfigEntry> entries;  // known keys, in file order; a later entry overrides an earlier one
    const HpccConfigEntry* find(const std::string& key) const;
};

HpccConfig read_hpcc_config(const std::string& text, const std::string& source, const std::filesystem::path& folder,
                            Diagnostics& diags);

// The reference opens every file name relative to its working directory. Orrery does the same and, when
// the file is not there, looks beside the config (with a warning). Errors name the config line.
std::filesystem::path resolve_config_file(const HpccConfig& config, const HpccConfigEntry& entry,
                                          const std::filesystem::path& working_dir, Diagnostics& diags);

// An Orrery scenario document equivalent to the config. File names are written relative to scenario_dir.
nlohmann::json scenario_from_hpcc_config(const HpccConfig& config, const std::filesystem::path& working_dir,
                                         const std::filesystem::path& scenario_dir, Diagnostics& diags);

// The scenario's diagnostics in the config's terms: one about a scenario field that a config key set
// ("SOURCE: network.packet_payload") is given that key's line ("config.txt:5: PACKET_PAYLOAD_SIZE: ...").
Diagnostics in_config_terms(const HpccConfig& config, const std::string& scenario_source, const Diagnostics& d);

// All keys the reader knows, for help texts and suggestions.
std::vector<std::string> known_hpcc_config_keys();

}  // namespace orrery

namespace orrery {
struct Scenario;
// An HPCC config.txt for the scenario, naming topology_file and flow_file as given.
std::string write_hpcc_config(const Scenario& s, const std::string& topology_file, const std::string& flow_file);
}  // namespace orrery
