#include "views/editors/scenario_checks.h"

#include <map>

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

// "where: in experiment e0001 (cc.preset = …): message" of several experiments with the same where and message
// becomes one line, "where: in 4 experiments (e0000, …): message": a sweep's shared problem is said once.
std::vector<std::string> merged_by_experiment(const std::vector<std::pair<std::string, std::string>>& items) {
    using Key = std::pair<std::string, std::string>;  // where, message without the experiment
    std::vector<Key> keys;                              // in first-seen order
    std::map<Key, std::vector<std::string>> ids;        // key → experiments
    for (const auto& [where, message] : items) {
        std::string id, rest = message;
        if (message.rfind("in experiment ", 0) == 0) {
            const size_t space = message.find(' ', 14), close = message.find("): ", 14);
            if (space != std::string::npos && close != std::string::npos) {
                id = message.substr(14, space - 14);
                rest = message.substr(close + 3);
            }
        }
        const Key key{where, rest};
        if (!ids.count(key)) keys.push_back(key);
        if (!id.empty()) ids[key].push_back(id);
        else ids[key];
    }
    std::vector<std::string> out;
    for (const Key& key : keys) {
        const std::vector<std::string>& e = ids[key];
        if (e.empty()) {
            out.push_back(key.first + ": " + key.second);
            continue;
        }
        std::string list;
        for (size_t i = 0; i < e.size() && i < 3; ++i) list += (i ? ", " : "") + e[i];
        if (e.size() > 3) list += ", …";
        out.push_back(key.first + ": " + (e.size() == 1 ? "in experiment " + e[0] : "in " + std::to_string(e.size()) + " experiments (" + list + ")") + ": " +
                      key.second);
    }
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
        if (s.workload.jobs) {
            c.errors.push_back("workload: several jobs share the fabric (kind \"jobs\"): edit each job's model and strategy in the Jobs tab");
            return c;
        }
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
    std::vector<std::pair<std::string, std::string>> errors, warnings;
    std::string failure;
    try {
        const LoadedScenario loaded = load_scenario_document(document, "scenario", base_dir, presets, LoadOptions{true});
        for (const Diagnostic& d : loaded.warnings.items()) warnings.push_back({d.where, d.message});
    } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics().items()) (d.severity == Diagnostic::Severity::error ? errors : warnings).push_back({d.where, d.message});
        if (errors.empty()) failure = e.what();
    }
    ScenarioProblems p{merged_by_experiment(errors), merged_by_experiment(warnings)};
    if (!failure.empty()) p.errors.push_back(failure);
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
