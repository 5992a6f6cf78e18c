#pragma once
// Each command registers its options on a CLI11 subcommand and returns an exit code when run.
#include <functional>

#include <CLI/CLI.hpp>

#include "scenario/presets.h"

namespace orrery::cli {

using Runner = std::function<int()>;

Runner add_validate(CLI::App& app, const PresetLibrary& presets);
Runner add_expand(CLI::App& app, const PresetLibrary& presets);
Runner add_fabric(CLI::App& app, const PresetLibrary& presets);
Runner add_convert(CLI::App& app, const PresetLibrary& presets);
Runner add_presets(CLI::App& app, const PresetLibrary& presets);
Runner add_run_hpcc(CLI::App& app, const PresetLibrary& presets);
Runner add_run(CLI::App& app, const PresetLibrary& presets);
Runner add_export(CLI::App& app, const PresetLibrary& presets);
Runner add_report(CLI::App& app, const PresetLibrary& presets);
Runner add_devices(CLI::App& app, const PresetLibrary& presets);
#ifdef ORRERY_HAVE_MPI
Runner add_slurm(CLI::App& app, const PresetLibrary& presets);
#endif

}  // namespace orrery::cli
