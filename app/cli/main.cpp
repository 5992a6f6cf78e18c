// orrery-cli: Orrery without the workbench. Map: main() builds the CLI11 app from one add_* per command
// (cmd_*.cpp), parses, runs the chosen command and turns every InputError into exit code 1.
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/version.h"
#include "runtime/device/device_runner.h"

int main(int argc, char** argv) {
    using namespace orrery;
    const PresetLibrary presets = cli::find_presets(argv[0]);
    CLI::App app{"Orrery: design and simulate LLM-training cluster fabrics, headless.\n"
                 "Exit codes: 0 success, 1 invalid input, 2 usage error.",
                 "orrery-cli"};
    app.require_subcommand(1);
    app.set_version_flag("--version",
                         [] {
                             // Say exactly what exists and what was verified: the device backend's OpenMP build is
                             // tested against the CPU backend; its CUDA build compiles but has never run on a GPU.
                             const std::string system = device_backend_system();
                             const std::string device = system.empty() ? "no device backend"
                                                        : system == "OpenMP" ? "device backend on Thrust's OpenMP device system (CPU cores; byte-identical to the CPU backend in the project's tests)"
                                                                             : "device backend on CUDA (compiled for sm 80/90; never yet run on a GPU: no GPU speed or correctness is claimed)";
                             return "orrery-cli " + version() + " (git " + git_revision() + "; CPU backend; " + device + ")";
                         },
                         "Print the version and git revision, then exit");
    std::map<CLI::App*, cli::Runner> runners;
    auto add = [&](const char* name, const char* help, auto adder) {
        CLI::App* sub = app.add_subcommand(name, help);
        runners[sub] = adder(*sub, presets);
    };
    add("validate", "Check an Orrery scenario (.json) or an HPCC/SimAI config.txt with the files it names, or any fabric or flow file",
        cli::add_validate);
    add("expand", "List the experiments a scenario's sweep expands to, with their distinguishing parameters", cli::add_expand);
    add("fabric", "Build a fabric from a spec (fat-tree:k=8), a preset, a scenario or a fabric file; print its statistics or write it",
        cli::add_fabric);
    add("convert", "Convert between Orrery JSON, HPCC/SimAI text files, ASTRA-sim YAML (read), DOT and GraphML", cli::add_convert);
    add("presets", "List the presets a scenario can name (fabrics, network, cc)", cli::add_presets);
    add("run", "Simulate every experiment of a scenario's sweep and store the results (SQLite); a summary per experiment", cli::add_run);
    add("run-hpcc", "Simulate an HPCC/SimAI config.txt unchanged and write its FCT, PFC and queue-length files in the reference's formats",
        cli::add_run_hpcc);
    add("devices", "List what this build can run on: CPU threads, its device backend's system, CUDA GPUs and their memory", cli::add_devices);
#ifdef ORRERY_HAVE_MPI
    add("slurm", "Write an sbatch script that runs a scenario's sweep over MPI ranks on a Slurm cluster (srun; rank 0 writes the store)", cli::add_slurm);
#endif
    add("export", "Export what a run stored: `export timeline` writes an LLM experiment's timeline as Chrome trace JSON for Perfetto, "
        "`export scenario` the scenario the run ran",
        cli::add_export);
    add("report", "Write a run's comparison report (which design is better and why) as HTML, PDF or CSV, as the workbench does",
        cli::add_report);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return cli::kUsage;
    }
    for (auto& [sub, run] : runners) {
        if (!sub->parsed()) continue;
        try {
            return run();
        } catch (const InputError& e) {
            cli::print_diagnostics(e.diagnostics());
            return cli::kInvalidInput;
        } catch (const std::filesystem::filesystem_error& e) {
            // A path the system refuses (too long, not a folder on the way, no permission): the user's input.
            const std::string path = e.path1().empty() ? std::string("(file)") : e.path1().string();
            std::cerr << (path.size() > 120 ? path.substr(0, 117) + "..." : path) << ": error: " << e.code().message() << "\n";
            return cli::kInvalidInput;
        } catch (const std::exception& e) {
            std::cerr << "orrery-cli: internal error: " << e.what() << "\n";
            return 3;
        }
    }
    return cli::kUsage;
}
