#include <iostream>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "scenario/load.h"

namespace orrery::cli {

Runner add_expand(CLI::App& app, const PresetLibrary& presets) {
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    app.add_option("SCENARIO", *file, "Scenario .json, or the name of a bundled scenario")->required();
    app.add_flag("--json", *json, "Print the experiments as JSON");
    return [&presets, file, json]() -> int {
        LoadedScenario s = load_scenario_file(scenario_argument(*file, presets), presets, LoadOptions{false});
        print_diagnostics(s.warnings);
        if (*json) {
            nlohmann::json out = nlohmann::json::array();
            for (const Experiment& e : s.experiments) {
                nlohmann::json params = nlohmann::json::object();
                for (const auto& p : e.parameters) params[p["path"].get<std::string>()] = p["value"];
                out.push_back({{"id", e.id}, {"index", e.index}, {"seed", e.seed}, {"parameters", params}, {"sha256", e.sha256}});
            }
            std::cout << out.dump(2) << "\n";
            return kOk;
        }
        std::cout << s.experiments.size() << " experiment" << (s.experiments.size() == 1 ? "" : "s") << " from " << *file << "\n";
        for (const Experiment& e : s.experiments) {
            std::string params;
            for (const auto& p : e.parameters) {
                if (p["path"] == "seed") continue;  // printed on its own below
                params += (params.empty() ? "" : "  ") + p["path"].get<std::string>() + "=" + p["value"].dump();
            }
            std::cout << e.id << "  sha256:" << e.sha256.substr(0, 16) << "  seed=" << e.seed << (params.empty() ? "" : "  " + params) << "\n";
        }
        return kOk;
    };
}

}  // namespace orrery::cli
