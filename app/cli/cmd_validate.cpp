#include <iostream>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "io/hpcc_config.h"
#include "io/hpcc_flows.h"
#include "scenario/build.h"
#include "scenario/load.h"

namespace orrery::cli {
namespace {

std::string fabric_summary(const Fabric& f) {
    return std::to_string(f.count(NodeKind::host)) + " hosts, " + std::to_string(f.count(NodeKind::network_switch)) + " switches, " +
           (f.count(NodeKind::nvswitch) ? std::to_string(f.count(NodeKind::nvswitch)) + " NVSwitches, " : "") +
           std::to_string(f.link_count()) + " links";
}

int report(const std::filesystem::path& file, const Diagnostics& warnings, const std::string& what) {
    print_diagnostics(warnings);
    std::cout << file.string() << ": valid: " << what << "\n";
    return kOk;
}

int validate_loaded(const std::filesystem::path& file, const LoadedScenario& s, Diagnostics warnings) {
    warnings.append(s.warnings);
    const Fabric f = build_fabric(s.base.topology);
    const size_t flows = workload_flows(s.base).size();
    return report(file, warnings, std::to_string(s.experiments.size()) + " experiment" + (s.experiments.size() == 1 ? "" : "s") +
                                      "; fabric " + fabric_summary(f) + "; " + std::to_string(flows) + " flows");
}

}  // namespace

Runner add_validate(CLI::App& app, const PresetLibrary& presets) {
    auto file = std::make_shared<std::string>();
    auto from = std::make_shared<std::string>();
    app.add_option("FILE", *file, "Scenario .json, HPCC/SimAI config.txt, topology.txt, flow.txt, ASTRA-sim .yml, .graphml or .dot")
        ->required();
    app.add_option("--from", *from, "Read FILE as this format: orrery, hpcc-config, hpcc, hpcc-flows, astra-yaml, graphml, dot");
    return [&presets, file, from]() -> int {
        const std::filesystem::path path = *file;
        const InputKind kind = detect_input(path, *from);
        Diagnostics warnings;
        switch (kind) {
            case InputKind::scenario: return validate_loaded(path, load_scenario_file(path, presets), warnings);
            case InputKind::hpcc_config: {
                Diagnostics diags;
                HpccConfig config = read_hpcc_config(read_text_file(path), path.string(), path.parent_path().empty() ? "." : path.parent_path(), diags);
                nlohmann::json doc = scenario_from_hpcc_config(config, std::filesystem::current_path(), config.folder, diags);
                if (diags.has_errors()) throw InputError(diags);
                LoadedScenario s = load_scenario_document(doc, path.string(), config.folder, presets);
                return validate_loaded(path, s, diags);
            }
            case InputKind::hpcc_flows:
                return report(path, warnings, std::to_string(read_hpcc_flow_file(path).size()) + " flows");
            default:
                return report(path, warnings, "fabric " + fabric_summary(load_fabric(path, kind, presets, warnings)));
        }
    };
}

}  // namespace orrery::cli
