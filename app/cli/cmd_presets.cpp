#include <iostream>

#include "cli/commands.h"
#include "cli/inputs.h"

namespace orrery::cli {

Runner add_presets(CLI::App& app, const PresetLibrary& presets) {
    auto section = std::make_shared<std::string>();
    app.add_option("SECTION", *section, "topology, network or cc (all when omitted)")->check(CLI::IsMember({"topology", "network", "cc"}));
    return [&presets, section]() -> int {
        for (const char* s : {"topology", "network", "cc"}) {
            if (!section->empty() && *section != s) continue;
            std::cout << s << " presets (" << preset_folder(s) << "/):\n";
            for (const PresetInfo& p : presets.list(s)) std::cout << "  " << p.name << (p.description.empty() ? "" : "  — " + p.description) << "\n";
        }
        return kOk;
    };
}

}  // namespace orrery::cli
