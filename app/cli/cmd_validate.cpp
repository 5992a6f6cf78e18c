#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "imports/chakra_trace.h"
#include "imports/import_job.h"
#include "imports/simai_busbw.h"
#include "imports/msccl.h"
#include "imports/simai_workload.h"
#include "io/hpcc_config.h"
#include "runtime/hpcc_job.h"
#include "io/hpcc_flows.h"
#include "scenario/applicability.h"
#include "scenario/build.h"
#include "session/mix_prepare.h"
#include "runtime/batch.h"
#include "scenario/load.h"
#include "scenario/sweep.h"
#include "workload/llm_job.h"
#include "workload/tables.h"

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

// What `run` checks before it simulates, for each distinct experiment: a workload to run, the compiled
// network tables (link delays, NIC ports, ECN thresholds, buffers), and an LLM job's task graph (imported
// traces that agree, custom algorithms that fit). validate reports what run would refuse, not less.
void check_runnable(const LoadedScenario& s, const PresetLibrary& presets, Diagnostics& problems, Diagnostics& warnings) {
    std::map<std::string, size_t> seen;  // canonical document → first experiment with it
    std::optional<WorkloadTables> tables;
    std::optional<BusbwRatios> ratios;
    for (size_t i = 0; i < s.scenarios.size(); ++i) {
        const Scenario& x = s.scenarios[i];
        nlohmann::json doc = x.document;
        doc.erase("seed");
        if (!seen.emplace(canonical_json(doc), i).second) continue;
        const std::string id = s.experiments[i].id;
        try {
            const Fabric f = build_fabric(x.topology);
            if (x.workload.jobs) {  // a mix: placed, every job built, the merged job compiled for the packet level
                if (!tables) tables = load_workload_tables(presets);
                Diagnostics job_warnings;
                const PreparedMix m = prepare_job_mix(x, f, *tables, job_warnings);
                warnings.append(job_warnings);
                if (!m.oom_message.empty()) warnings.warning(x.source + ": workload.jobs", "experiment " + id + " does not fit: " + m.oom_message);
                else if (timing_mode(x) == TimingMode::packet && !m.mix.merged.transfers.empty())
                    compile_batch({{id, &x, &f, llm_flows(m.mix.merged, m.workloads[0]->collectives.priority)}});
            } else if (x.workload.llm) {
                if (!tables) tables = load_workload_tables(presets);
                LlmWorkload w = *x.workload.llm;
                Diagnostics job_warnings;
                if (w.collectives.model == CollectiveModel::busbw) {  // SimAI's closed form: no graph to build
                    if (!ratios) ratios = load_busbw_ratios(presets);
                    estimate_simai_import(w, uint32_t(f.count(NodeKind::host)), *ratios, job_warnings);
                    warnings.append(job_warnings);
                    continue;
                }
                const LlmJob job = prepare_any_llm_job(w, f, *tables, job_warnings);
                warnings.append(job_warnings);
                if (!job.oom_message.empty()) warnings.warning(x.source + ": workload", "experiment " + id + " does not fit: " + job.oom_message);
                else if (w.network_mode == NetworkMode::packet && !job.transfers.empty())
                    compile_batch({{id, &x, &f, llm_flows(job, w.collectives.priority)}});
            } else {
                const std::vector<FlowSpec> flows = workload_flows(x);
                if (flows.empty()) problems.error(x.source + ": workload", "experiment " + id + " has no flows to run");
                else compile_batch({{id, &x, &f, flows}});
            }
        } catch (const InputError& e) {
            // A bare JSON path ("workload.parallel.tp") is named with its file, as the reader's errors are.
            for (const Diagnostic& d : e.diagnostics().items()) {
                bool bare = false;
                for (const char* part : {"topology", "network", "cc", "workload", "output", "skipping", "sweep"})
                    bare |= d.where == part || d.where.rfind(std::string(part) + ".", 0) == 0;
                const std::string where = bare ? x.source + ": " + d.where : d.where;
                if (d.severity == Diagnostic::Severity::error) problems.error(where, d.message);
                else problems.warning(where, d.message);
            }
        }
    }
}

// `outputs`: the files a run writes; `store`: the results store it appends to, when it has one.
int validate_loaded(const std::filesystem::path& file, const LoadedScenario& s, const PresetLibrary& presets, Diagnostics warnings,
                    const std::vector<std::filesystem::path>& outputs, const std::optional<std::filesystem::path>& store) {
    warnings.append(s.warnings);
    for (const LlmWorkload* w : s.base.workload.llm_workloads()) check_workload_files(*w, warnings);  // imported traces, custom algorithms
    Diagnostics problems;
    // What `run` writes, checked as run checks it before its first step (an existing file is run's to
    // refuse or, with --force, to replace; a folder that is missing or an input named as output is not).
    const std::vector<std::filesystem::path> read = scenario_inputs(file, s);
    try {
        refuse_outputs(outputs, true, read);
    } catch (const InputError& e) {
        problems.append(e.diagnostics());
    }
    try {  // the store may be named anew by run's --out: a warning
        if (store) refuse_store_path(*store, outputs, read);
    } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics().items()) warnings.warning(d.where, d.message + " (output.store; run's --out can name another store)");
    }
    check_runnable(s, presets, problems, warnings);
    if (problems.has_errors()) {
        print_diagnostics(warnings);
        throw InputError(problems);
    }
    const Fabric f = build_fabric(s.base.topology);
    const size_t flows = workload_flows(s.base).size();
    return report(file, warnings, std::to_string(s.experiments.size()) + " experiment" + (s.experiments.size() == 1 ? "" : "s") +
                                      "; fabric " + fabric_summary(f) + "; " + std::to_string(flows) + " flows");
}

}  // namespace

Runner add_validate(CLI::App& app, const PresetLibrary& presets) {
    auto file = std::make_shared<std::string>();
    auto from = std::make_shared<std::string>();
    app.add_option("FILE", *file, "Scenario .json, HPCC/SimAI config.txt, topology.txt, flow.txt, ASTRA-sim .yml, .graphml, .dot, SimAI workload .txt, Chakra .et, MSCCL .xml or MSCCL++ .json")
        ->required();
    app.add_option("--from", *from, "Read FILE as this format: " + input_names());
    return [&presets, file, from]() -> int {
        bool bundled = false;
        const std::filesystem::path path = scenario_argument(*file, presets, &bundled);
        const Input input = detect_input(path, *from);
        const InputKind kind = input.kind;
        Diagnostics warnings;
        switch (kind) {
            case InputKind::scenario: {
                const LoadedScenario s = load_scenario_file(path, presets);
                // As run names them: a bundled scenario stores its results in the working folder (cmd_run.cpp).
                const std::string store_option = bundled ? path.stem().string() + ".sqlite" : "";
                return validate_loaded(path, s, presets, warnings, hpcc_output_files(s), run_store_path(s, store_option));
            }
            case InputKind::hpcc_config: {
                Diagnostics diags;
                HpccConfig config = read_hpcc_config(read_text_file(path), path.string(), path.parent_path().empty() ? "." : path.parent_path(), diags);
                nlohmann::json doc = scenario_from_hpcc_config(config, std::filesystem::current_path(), config.folder, diags);
                if (diags.has_errors()) throw InputError(diags);
                LoadedScenario s = load_config_scenario(config, doc, path.string(), config.folder, presets);
                // run-hpcc writes the config's output files where the reference does: relative to the working folder.
                std::vector<std::filesystem::path> outputs;
                for (const std::string& f : {s.base.output.hpcc_fct_file, s.base.output.hpcc_pfc_file, s.base.output.hpcc_qlen_file})
                    if (!f.empty()) outputs.push_back(f);
                return validate_loaded(path, s, presets, diags, outputs, std::nullopt);
            }
            case InputKind::simai_workload: {
                const SimaiWorkload w = read_simai_workload(read_text_file(path), path.string(), warnings);
                size_t collectives = 0;
                for (const SimaiRecord& r : w.records)
                    for (const SimaiComm* c : {&r.forward, &r.input_grad, &r.weight_grad}) collectives += c->group != SimaiGroup::none && c->bytes > 0;
                return report(path, warnings, "SimAI workload, policy " + w.policy + ", TP " + std::to_string(w.tp) + " PP " + std::to_string(w.pp) + " EP " +
                                                  std::to_string(w.ep) + (w.all_gpus ? ", " + std::to_string(w.all_gpus) + " GPUs" : "") + "; " +
                                                  std::to_string(w.records.size()) + " records, " + std::to_string(collectives) + " collectives");
            }
            case InputKind::chakra_trace: {
                std::ifstream in(path, std::ios::binary);
                const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
                const ChakraRank r = read_chakra_trace(bytes, path.string(), warnings);
                size_t count[8] = {};
                for (const ChakraNode& n : r.nodes) ++count[n.type >= 0 && n.type < 8 ? n.type : 0];
                return report(path, warnings, "Chakra trace" + (r.version.empty() ? std::string() : " " + r.version) + "; " + std::to_string(r.nodes.size()) +
                                                  " nodes: " + std::to_string(count[4]) + " compute, " + std::to_string(count[7]) + " collective, " +
                                                  std::to_string(count[5]) + " send, " + std::to_string(count[6]) + " receive");
            }
            case InputKind::msccl_xml:
            case InputKind::mscclpp_json: {
                const CustomAlgorithm a = kind == InputKind::msccl_xml ? read_msccl_xml(read_text_file(path), path.string(), warnings)
                                                                       : read_mscclpp_json(read_text_file(path), path.string(), warnings);
                size_t moves = 0;
                for (const CustomOp& op : a.ops) moves += op.send_to >= 0;
                return report(path, warnings, std::string(kind == InputKind::msccl_xml ? "MSCCL" : "MSCCL++") + " algorithm \"" + a.name + "\": " +
                                                  collective_kind_name(a.kind) + " on " + std::to_string(a.gpus) + " GPUs in " + std::to_string(a.chunks_per_loop) +
                                                  " chunks; " + std::to_string(a.ops.size()) + " operations, " + std::to_string(moves) + " transfers");
            }
            case InputKind::hpcc_flows:
                return report(path, warnings, std::to_string(read_hpcc_flow_file(path).size()) + " flows");
            default:
                return report(path, warnings, "fabric " + fabric_summary(load_fabric(path, input, presets, warnings)));
        }
    };
}

}  // namespace orrery::cli
