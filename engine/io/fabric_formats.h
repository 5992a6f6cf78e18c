#pragma once
// Every fabric file format Orrery reads or writes, declared once. The scenario reader (topology.import), the
// scenario builder, `orrery-cli validate`, `convert` and `fabric` (their --from, --to, help texts and the
// format an extension implies) all go through this table. A new format is its reader and writer and one row
// in fabric_formats.cpp.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "topology/fabric.h"

namespace orrery {

struct FabricFormat {
    const char* name;         // topology.import's "format", the CLI's --from and --to
    const char* extensions;   // space-separated, with their dots; the first is the one written
    const char* description;  // a few words for help texts
    // nullptr where the format is not read this way (an Orrery scenario is read as a scenario, with its presets).
    Fabric (*read)(const std::filesystem::path& file);
    // nullptr where it is not written; throws InputError naming `out` for what the format cannot say.
    std::string (*write)(const Fabric& fabric, const std::filesystem::path& out);
};

const std::vector<FabricFormat>& fabric_formats();
// nullptr when no format has that name.
const FabricFormat* fabric_format_named(std::string_view name);
// The format a file's extension names (case as written), nullptr when none does.
const FabricFormat* fabric_format_of_extension(const std::filesystem::path& file);
// The names of the formats that are read (readable) or written (!readable), in the table's order.
std::vector<std::string> fabric_format_names(bool readable);
// Those names as "a, b or c", for messages.
std::string fabric_format_list(bool readable);

}  // namespace orrery
