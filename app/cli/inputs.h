#pragma once
// What the CLI commands share: finding presets, recognizing input files, writing outputs safely.
#include <filesystem>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "io/fabric_formats.h"
#include "scenario/presets.h"
#include "topology/fabric.h"

namespace orrery {
struct LoadedScenario;
}

namespace orrery::cli {

// Exit codes of every command.
inline constexpr int kOk = 0, kInvalidInput = 1, kUsage = 2;

// ORRERY_PRESETS (':'-separated), then <exe>/../share/orrery/presets, then the source tree's presets/.
PresetLibrary find_presets(const char* argv0);

// What an input file holds. A fabric file's format is a row of io/fabric_formats.h's table.
enum class InputKind { scenario, hpcc_config, fabric, hpcc_flows, simai_workload, chakra_trace, msccl_xml, mscclpp_json };
struct Input {
    InputKind kind = InputKind::scenario;
    const FabricFormat* fabric = nullptr;  // set for InputKind::fabric
};
// The name --from takes for it.
std::string input_name(const Input& in);
// By --from when given, else by extension and, for text files, by their first line.
Input detect_input(const std::filesystem::path& file, const std::string& from);
// Every name --from takes, as "a, b, …".
std::string input_names();

// A scenario argument: a file, or the name of a bundled scenario (presets/scenarios/NAME.json) when no
// such file exists. `bundled` tells which.
std::filesystem::path scenario_argument(const std::string& arg, const PresetLibrary& presets, bool* bundled = nullptr);

// Reads any fabric file, or the fabric of a scenario file.
Fabric load_fabric(const std::filesystem::path& file, const Input& in, const PresetLibrary& presets, Diagnostics& warnings);

// Throws, naming the file, when it exists and `force` is not given, or when it cannot be written where it
// is named (no such folder, not a folder, not writable, a name longer than the file system takes): commands
// call it for every output before doing the work, so that a refusal never comes after a long run.
void refuse_existing(const std::filesystem::path& file, bool force);
// refuse_existing for each; two of them naming the same file (after resolving . and .. and links), or one
// naming a file the command reads (`inputs`), are refused, with or without --force.
void refuse_outputs(const std::vector<std::filesystem::path>& files, bool force, const std::vector<std::filesystem::path>& inputs = {});
// Refuses an output that names one of the command's inputs (--force does not change this); refuse_outputs
// does it too, this is for commands that check it before anything else.
void refuse_inputs_as_outputs(const std::vector<std::filesystem::path>& files, const std::vector<std::filesystem::path>& inputs);
// A results store is appended to, so it must be a regular file (or not exist yet), and none of `outputs`
// or `inputs`.
void refuse_store_path(const std::filesystem::path& store, const std::vector<std::filesystem::path>& outputs,
                       const std::vector<std::filesystem::path>& inputs = {});
// The files a run of `scenario_file` reads: the scenario and every file its experiments import (fabric,
// flows, workload, collective algorithms, operator table).
// Where `run` stores the scenario's results: --out when given, else output.store beside the scenario.
std::filesystem::path run_store_path(const LoadedScenario& loaded, const std::string& out_option);
// The reference-format file `file` (output.hpcc_files) of experiment e: NAME_<id>.ext when the sweep has
// several experiments; and every such file of the scenario.
std::filesystem::path hpcc_output_file(const LoadedScenario& loaded, const std::string& file, size_t e);
std::vector<std::filesystem::path> hpcc_output_files(const LoadedScenario& loaded);
std::vector<std::filesystem::path> scenario_inputs(const std::filesystem::path& scenario_file, const LoadedScenario& loaded);

// Writes through a temporary file and a rename; refuses to replace an existing file unless `force`.
void write_output(const std::filesystem::path& file, const std::string& text, bool force);

// Prints diagnostics to stderr, one line each.
void print_diagnostics(const Diagnostics& d);

// The fabric in the format named by `to` (a written format of io/fabric_formats.h) or, when empty, by the
// extension (HPCC's text when there is none).
std::string fabric_text(const Fabric& f, const std::filesystem::path& out, const std::string& to);
}
