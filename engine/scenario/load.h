#pragma once
// Loading a scenario file: JSON text → presets resolved → typed Scenario → sweep expanded into experiments,
// each validated on its own (and, when asked, against the fabric it builds).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "scenario/presets.h"
#include "scenario/scenario.h"
#include "scenario/sweep.h"

namespace orrery {

// Parses JSON text; syntax errors and duplicate keys are reported as "source:line:column".
// Returns null (and an error in diags) when the text is not valid JSON.
nlohmann::json parse_json_text(const std::string& text, const std::string& source, Diagnostics& diags);

struct LoadOptions {
    bool check_fabrics = true;  // build every experiment's fabric and check flows and ECN settings against it
};

struct LoadedScenario {
    nlohmann::json written;              // the document as written (presets by name, the sweep): what reproduces the run
    Scenario base;                       // the scenario as written, presets resolved
    std::vector<Experiment> experiments; // with sha256 set
    std::vector<Scenario> scenarios;     // one typed scenario per experiment
    Diagnostics warnings;
};

// Throws InputError carrying every error found.
LoadedScenario load_scenario_file(const std::filesystem::path& file, const PresetLibrary& presets, LoadOptions options = {});
LoadedScenario load_scenario_document(const nlohmann::json& document, const std::string& source,
                                      const std::filesystem::path& base_dir, const PresetLibrary& presets, LoadOptions options = {});

std::string read_text_file(const std::filesystem::path& file);  // throws InputError naming the file

}  // namespace orrery
