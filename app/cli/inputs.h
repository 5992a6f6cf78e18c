#pragma once
// What the CLI commands share: finding presets, recognizing input files, writing outputs safely.
#include <filesystem>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "scenario/presets.h"
#include "topology/fabric.h"

namespace orrery::cli {

// Exit codes of every command.
inline constexpr int kOk = 0, kInvalidInput = 1, kUsage = 2;

// ORRERY_PRESETS (':'-separated), then <exe>/../share/orrery/presets, then the source tree's presets/.
PresetLibrary find_presets(const char* argv0);

enum class InputKind { scenario, hpcc_config, hpcc_topology, hpcc_flows, astra_yaml, graphml, dot, simai_workload, chakra_trace, msccl_xml, mscclpp_json };
const char* input_kind_name(InputKind k);
// By --from when given, else by extension and, for text files, by their first line.
InputKind detect_input(const std::filesystem::path& file, const std::string& from);

// A scenario argument: a file, or the name of a bundled scenario (presets/scenarios/NAME.json) when no
// such file exists. `bundled` tells which.
std::filesystem::path scenario_argument(const std::string& arg, const PresetLibrary& presets, bool* bundled = nullptr);

// Reads any fabric file, or the fabric of a scenario file.
Fabric load_fabric(const std::filesystem::path& file, InputKind kind, const PresetLibrary& presets, Diagnostics& warnings);

// Throws, naming the file, when it exists and `force` is not given: commands call it for every output
// before doing the work, so that a refusal never comes after a long run.
void refuse_existing(const std::filesystem::path& file, bool force);
// refuse_existing for each, and two of them naming the same file (after resolving . and ..) are refused.
void refuse_outputs(const std::vector<std::filesystem::path>& files, bool force);
// A results store is appended to, so it must be a regular file (or not exist yet), and none of `outputs`.
void refuse_store_path(const std::filesystem::path& store, const std::vector<std::filesystem::path>& outputs);

// Writes through a temporary file and a rename; refuses to replace an existing file unless `force`.
void write_output(const std::filesystem::path& file, const std::string& text, bool force);

// Prints diagnostics to stderr, one line each.
void print_diagnostics(const Diagnostics& d);

}  // namespace orrery::cli

namespace orrery::cli {
// The fabric in the format named by `to` (orrery, hpcc, graphml, dot) or, when empty, by the extension.
std::string fabric_text(const Fabric& f, const std::filesystem::path& out, const std::string& to);
}
