#include "views/scenario_checks.h"

#include "common/diagnostics.h"
#include "scenario/load.h"
#include "workload/tables.h"

namespace orrery::views {
namespace {

std::vector<std::string> messages(const InputError& e) {
    std::vector<std::string> out;
    for (const Diagnostic& d : e.diagnostics().items()) out.push_back(d.where + ": " + d.message);
    if (out.empty()) out.push_back(e.what());
    return out;
}

}  // namespace

MemoryCheck check_llm_job(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets, size_t hosts) {
    MemoryCheck c;
    c.hosts = hosts;
    nlohmann::json base = document;
    base.erase("sweep");
    try {
        const LoadedScenario loaded = load_scenario_document(base, "scenario", base_dir, presets, LoadOptions{false});
        const Scenario& s = loaded.base;
        if (!s.workload.llm) {
            c.errors.push_back("workload: not an LLM training job (kind \"llm\")");
            return c;
        }
        const LlmWorkload& w = *s.workload.llm;
        if (w.trace) {
            c.errors.push_back("workload.import: an imported trace carries its own placement; the memory check needs a model");
            return c;
        }
        const WorkloadTables tables = load_workload_tables(presets);
        auto gpu = tables.gpus.find(w.gpu);
        if (gpu == tables.gpus.end()) {
            c.errors.push_back("workload.gpu: unknown GPU \"" + w.gpu + "\"");
            return c;
        }
        c.gpu = w.gpu;
        c.job = w;
        c.world = w.parallel.world();
        c.report = memory_per_rank(w, gpu->second);
        if (hosts > 0 && size_t(c.world) != hosts)
            c.world_message = "the job needs TP × PP × DP = " + std::to_string(w.parallel.tp) + " × " + std::to_string(w.parallel.pp) + " × " +
                              std::to_string(w.parallel.dp) + " = " + std::to_string(c.world) + " GPUs, the fabric has " + std::to_string(hosts) +
                              " hosts (one GPU each)";
    } catch (const InputError& e) {
        c.errors = messages(e);
    }
    return c;
}

ScenarioProblems check_document(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets) {
    ScenarioProblems p;
    try {
        const LoadedScenario loaded = load_scenario_document(document, "scenario", base_dir, presets, LoadOptions{true});
        for (const Diagnostic& d : loaded.warnings.items()) p.warnings.push_back(d.where + ": " + d.message);
    } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics().items())
            (d.severity == Diagnostic::Severity::error ? p.errors : p.warnings).push_back(d.where + ": " + d.message);
        if (p.errors.empty()) p.errors.push_back(e.what());
    }
    return p;
}

std::vector<std::string> validate_document(const nlohmann::json& document, const std::filesystem::path& base_dir, const PresetLibrary& presets) {
    try {
        load_scenario_document(document, "scenario", base_dir, presets, LoadOptions{true});
        return {};
    } catch (const InputError& e) {
        return messages(e);
    }
}

}  // namespace orrery::views
