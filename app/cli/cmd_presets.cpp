#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "scenario/load.h"

namespace orrery::cli {
namespace {

// Bundled scenarios are whole scenario documents (presets/scenarios/NAME.json), run by name.
void list_scenarios(const PresetLibrary& presets) {
    std::cout << "scenarios (scenarios/; run one with `orrery-cli run NAME`):\n";
    std::set<std::string> seen;
    for (const std::filesystem::path& root : presets.roots()) {
        const std::filesystem::path dir = root / "scenarios";
        if (!std::filesystem::is_directory(dir)) continue;
        std::vector<std::filesystem::path> files;
        for (const auto& e : std::filesystem::directory_iterator(dir))
            if (e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const std::filesystem::path& f : files) {
            if (!seen.insert(f.stem().string()).second) continue;
            std::string about;
            try {
                Diagnostics unread;
                const nlohmann::json j = parse_json_text(read_text_file(f), f.string(), unread);
                about = j.contains("description") && j["description"].is_string() ? j["description"].get<std::string>()
                        : j.contains("name") && j["name"].is_string()               ? j["name"].get<std::string>()
                                                                                    : "";
            } catch (const std::exception&) {
                about = "(not valid JSON)";
            }
            std::cout << "  " << f.stem().string() << (about.empty() ? "" : "  — " + about) << "\n";
        }
    }
}

}  // namespace

Runner add_presets(CLI::App& app, const PresetLibrary& presets) {
    auto section = std::make_shared<std::string>();
    app.add_option("SECTION", *section, "topology, network, cc, model or scenarios (all when omitted)")
        ->check(CLI::IsMember({"topology", "network", "cc", "model", "scenarios"}));
    return [&presets, section]() -> int {
        for (const char* s : {"topology", "network", "cc", "model"}) {
            if (!section->empty() && *section != s) continue;
            std::cout << s << " presets (" << preset_folder(s) << "/):\n";
            for (const PresetInfo& p : presets.list(s)) std::cout << "  " << p.name << (p.description.empty() ? "" : "  — " + p.description) << "\n";
        }
        if (section->empty() || *section == "scenarios") list_scenarios(presets);
        return kOk;
    };
}

}  // namespace orrery::cli
