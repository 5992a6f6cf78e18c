#pragma once
// Presets: named building blocks in presets/<folder>/<name>.json, referenced from a scenario section as
// {"preset": "fat-tree-k8", "k": 16} and overridden field by field (RFC 7386 merge patch).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"

namespace orrery {

struct PresetInfo {
    std::string section;      // "topology", "network", "cc" or "model"
    std::string name;         // file stem
    std::string description;
    std::filesystem::path file;
};

class PresetLibrary {
public:
    PresetLibrary() = default;
    // Roots are searched in order; each holds fabrics/, network/ and cc/.
    explicit PresetLibrary(std::vector<std::filesystem::path> roots) : roots_(std::move(roots)) {}

    const std::vector<std::filesystem::path>& roots() const { return roots_; }
    std::vector<PresetInfo> list(const std::string& section) const;
    // The preset's value, or nullopt with a diagnostic that names `where` and suggests close names.
    std::optional<nlohmann::json> load(const std::string& section, const std::string& name, const std::string& where,
                                       Diagnostics& diags) const;

    // A calibration table of data/ (gpus.json, compute.json, intra_server.json): data/ sits beside each
    // presets/ root, searched in the same order.
    std::optional<std::filesystem::path> data_file(const std::string& name) const;

private:
    std::vector<std::filesystem::path> roots_;
};

// The folder of a section's presets ("topology" → "fabrics", "model" → "models").
std::string preset_folder(const std::string& section);

// Replaces {"preset": NAME, overrides...} in the sections that take presets by the preset merged with the
// overrides. Errors name the JSON path of the "preset" key.
// The roots every Orrery program searches: $ORRERY_PRESETS (':'-separated), then <exe>/../share/orrery/presets
// (an installation), then the source tree's presets/ (a build tree). `executable` is argv[0].
PresetLibrary standard_presets(const char* executable);

nlohmann::json resolve_presets(const nlohmann::json& document, const PresetLibrary& presets, const std::string& source,
                               Diagnostics& diags);

}  // namespace orrery
