#include "scenario/load.h"

#include "common/memory_budget.h"
#include "common/nesting.h"

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "scenario/applicability.h"
#include "scenario/build.h"
#include "scenario/json_reader.h"
#include "scenario/read.h"
#include "workload/tables.h"

namespace orrery {

std::string read_text_file(const std::filesystem::path& file) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw InputError(file.string(), "is a folder, expected a file");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file.string(), "cannot open the file (does it exist and is it readable?)");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

namespace {

// Tracks the JSON path while nlohmann parses, to report duplicate keys (which it would silently collapse).
struct DuplicateKeyCheck {
    struct Frame {
        bool array = false;
        size_t index = 0;
        std::set<std::string> keys;
        std::string key;
    };
    std::vector<Frame> stack;
    std::vector<std::string> duplicates;

    std::string path() const {
        std::string p;
        for (const Frame& f : stack) {
            if (f.array) {
                p += '[';
                p += std::to_string(f.index);
                p += ']';
            }
            else if (!f.key.empty()) {
                if (!p.empty()) p += '.';
                p += f.key;
            }
        }
        return p;
    }
    void value_done() {
        if (!stack.empty() && stack.back().array) ++stack.back().index;
    }
};

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& source, Diagnostics& diags) {
    if (const auto deep = json_too_deep(text)) {
        diags.error(source + ":" + std::to_string(deep->line) + ":" + std::to_string(deep->column), too_deep_message("JSON"));
        return nullptr;
    }
    DuplicateKeyCheck check;
    auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        switch (event) {
            case E::object_start: check.stack.push_back({false, 0, {}, ""}); break;
            case E::array_start: check.stack.push_back({true, 0, {}, ""}); break;
            case E::key: {
                std::string key = parsed.get<std::string>();
                DuplicateKeyCheck::Frame& f = check.stack.back();
                f.key = key;
                if (!f.keys.insert(key).second) check.duplicates.push_back(check.path());
                break;
            }
            case E::object_end:
            case E::array_end:
                check.stack.pop_back();
                check.value_done();
                break;
            case E::value: check.value_done(); break;
        }
        return true;
    };
    try {
        nlohmann::json doc = nlohmann::json::parse(text, callback);
        for (const std::string& d : check.duplicates)
            diags.error(source + ": " + d, "duplicate key: the same key appears twice in one object");
        if (!check.duplicates.empty()) return nullptr;
        return doc;
    } catch (const nlohmann::json::parse_error& e) {
        std::string what = e.what();
        size_t colon = what.find(": ", what.find("parse error"));
        diags.error(text_location(source, text, e.byte > 0 ? e.byte - 1 : 0),
                    "not valid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
        return nullptr;
    } catch (const nlohmann::json::exception& e) {
        // A number beyond a double's range (1e400) is reported after the text, with the number but no place:
        // find the number's first occurrence for the line.
        std::string what = e.what();
        const size_t quote = what.find('\''), end = what.rfind('\'');
        std::string where = source;
        if (quote != std::string::npos && end > quote) {
            const size_t at = text.find(what.substr(quote + 1, end - quote - 1));
            if (at != std::string::npos) where = text_location(source, text, at);
        }
        const size_t tail = what.find("] ");
        diags.error(where, "not a usable JSON value: " + (tail == std::string::npos ? what : what.substr(tail + 2)) + " (beyond the range of a double)");
        return nullptr;
    }
}

namespace {

std::string describe_parameters(const Experiment& e) {
    std::string out;
    for (const auto& p : e.parameters) out += (out.empty() ? "" : ", ") + p["path"].get<std::string>() + " = " + p["value"].dump();
    return out;
}

// Prefixes each new diagnostic with the experiment it belongs to.
void tag_experiment(Diagnostics& into, const Diagnostics& from, const Experiment& e) {
    for (const Diagnostic& d : from.items()) {
        std::string message = "in experiment " + e.id + " (" + describe_parameters(e) + "): " + d.message;
        if (d.severity == Diagnostic::Severity::error) into.error(d.where, message);
        else into.warning(d.where, message);
    }
}

}  // namespace

// A generated fabric's NVLink links run at workload.gpu's NVLink bandwidth (data/gpus.json) unless the
// scenario sets link_defaults.nvlink.rate: an A100 job gets 600 GB/s, a B200 job 1,800 GB/s. Written into
// the resolved document, so the experiment's record and its fabric say which rate was used.
// `gpu_table` holds data/gpus.json once read (a sweep reads it once, not per experiment).
void nvlink_rate_from_gpu(nlohmann::json& resolved, const PresetLibrary& presets, std::optional<nlohmann::json>& gpu_table) {
    if (!resolved.is_object() || !resolved.contains("workload") || !resolved["workload"].is_object()) return;
    const nlohmann::json& w = resolved["workload"];
    const std::string kind = string_field(w, "kind");
    if ((kind != "llm" && kind != "jobs") || !resolved.contains("topology") || !resolved["topology"].is_object()) return;
    // SimAI's busbw formula takes its bandwidths from workload.collectives.busbw (scenario/applicability.h).
    if (w.contains("collectives") && string_field(w["collectives"], "model") == "busbw") return;
    nlohmann::json& t = resolved["topology"];
    if (!t.contains("generator")) return;  // explicit and imported fabrics carry their own rates
    if (t.contains("link_defaults") && t["link_defaults"].is_object() && t["link_defaults"].contains("nvlink") &&
        t["link_defaults"]["nvlink"].is_object() && t["link_defaults"]["nvlink"].contains("rate"))
        return;
    // A mix's jobs share the fabric's GPUs (workload/placement.h refuses two kinds): the first job's.
    const nlohmann::json* first = kind == "jobs" && w.contains("jobs") && w["jobs"].is_array() && !w["jobs"].empty() && w["jobs"][0].is_object()
                                      ? &w["jobs"][0] : &w;
    const std::string gpu = first->contains("gpu") && (*first)["gpu"].is_string() ? (*first)["gpu"].get<std::string>() : LlmWorkload{}.gpu;
    if (!gpu_table) {
        try {
            gpu_table = read_data_table(presets, "gpus.json", "orrery-gpu-specs");
        } catch (const InputError&) {
            gpu_table = nlohmann::json::object();  // no table here: the reader's default stands (the run names the missing table)
        }
    }
    const nlohmann::json& table = *gpu_table;
    const nlohmann::json* spec = table.contains("gpus") && table["gpus"].contains(gpu) ? &table["gpus"][gpu] : nullptr;
    if (!spec || !spec->contains("nvlink_gb_per_s") || !(*spec)["nvlink_gb_per_s"].is_number()) return;  // an unknown GPU is named later
    if (!t.contains("link_defaults") || !t["link_defaults"].is_object()) t["link_defaults"] = nlohmann::json::object();
    if (!t["link_defaults"].contains("nvlink") || !t["link_defaults"]["nvlink"].is_object()) t["link_defaults"]["nvlink"] = nlohmann::json::object();
    t["link_defaults"]["nvlink"]["rate"] = std::to_string(int64_t(std::llround((*spec)["nvlink_gb_per_s"].get<double>()))) + "GBps";
}

LoadedScenario load_scenario_document(const nlohmann::json& document, const std::string& source,
                                      const std::filesystem::path& base_dir, const PresetLibrary& presets, LoadOptions options) {
    Diagnostics diags;
    ReadContext context{source, base_dir};
    nlohmann::json resolved = resolve_presets(document, presets, source, diags);
    if (diags.has_errors()) throw InputError(diags);
    std::optional<nlohmann::json> gpu_table;
    nvlink_rate_from_gpu(resolved, presets, gpu_table);
    std::optional<Scenario> base = read_scenario(resolved, context, diags);
    if (!base) throw InputError(diags);

    LoadedScenario out;
    out.written = document;
    out.base = std::move(*base);
    {   // Each experiment keeps its document, a resolved copy and a typed scenario: estimate before expanding.
        const SweepSpec& sw = out.base.sweep;
        long double count = std::max<size_t>(1, sw.seeds.size());
        for (const SweepParameter& p : sw.parameters) count *= sw.zip ? 1.0L : (long double)p.values.size();
        if (sw.zip && !sw.parameters.empty()) count *= (long double)sw.parameters[0].values.size();
        const long double bytes = count * (long double)(3 * document.dump().size() + 4096);
        if (count > 1e8L) throw InputError(source + ": sweep", "the sweep makes " + std::to_string((unsigned long long)std::min(count, 1.8e19L)) +
                                                                  " experiments; at most 100,000,000 are expanded (split the sweep)");
        refuse_beyond_memory(source + ": sweep", "expanding the sweep's " + std::to_string((unsigned long long)count) + " experiments", uint64_t(bytes));
    }
    out.experiments = expand_sweep(document, out.base.sweep);
    std::map<std::string, std::vector<std::string>> fabric_problems;  // by the canonical JSON of what the check reads
    for (Experiment& e : out.experiments) {
        Diagnostics local;
        for (const auto& p : e.parameters) {
            if (p["path"] == "seed") continue;
            std::string why;
            nlohmann::json probe = document;
            if (!set_at_path(probe, p["path"].get<std::string>(), p["value"], &why))
                local.error(source + ": sweep.parameters", "cannot apply \"" + p["path"].get<std::string>() + "\": " + why);
        }
        nlohmann::json experiment_resolved = resolve_presets(e.document, presets, source, local);
        if (!local.has_errors()) nvlink_rate_from_gpu(experiment_resolved, presets, gpu_table);
        std::optional<Scenario> s;
        if (!local.has_errors()) s = read_scenario(experiment_resolved, context, local);
        if (s) check_applicability(experiment_resolved, *s, source, local);  // keys this experiment's mode does not honour
        if (s && !local.has_errors()) {
            e.sha256 = sha256_of_document(experiment_resolved);
            if (options.check_fabrics) {
                // Everything check_against_fabric reads: the fabric, the flows and stop time, the network's ECN
                // and payload settings, and cc's ECN table (a sweep over anything else shares the result).
                const nlohmann::json& cc = experiment_resolved.contains("cc") ? experiment_resolved["cc"] : nlohmann::json();
                const std::string key = canonical_json(nlohmann::json::array({experiment_resolved["topology"], experiment_resolved.value("workload", nlohmann::json()),
                                                        experiment_resolved.value("network", nlohmann::json()),
                                                        cc.is_object() ? cc.value("ecn", nlohmann::json()) : nlohmann::json()}));
                auto it = fabric_problems.find(key);
                if (it == fabric_problems.end()) {
                    Diagnostics fabric_diags;
                    std::vector<std::string> problems;
                    try {
                        Fabric f = build_fabric(s->topology);
                        check_against_fabric(*s, f, fabric_diags);
                    } catch (const InputError& error) {
                        fabric_diags.append(error.diagnostics());
                    }
                    for (const Diagnostic& d : fabric_diags.items())
                        problems.push_back(std::string(d.severity == Diagnostic::Severity::error ? "E" : "W") + d.where + "\x1f" + d.message);
                    it = fabric_problems.emplace(key, problems).first;
                }
                for (const std::string& p : it->second) {
                    const size_t sep = p.find('\x1f');
                    if (p[0] == 'E') local.error(p.substr(1, sep - 1), p.substr(sep + 1));
                    else local.warning(p.substr(1, sep - 1), p.substr(sep + 1));
                }
            }
            out.scenarios.push_back(std::move(*s));
        }
        if (out.experiments.size() == 1) diags.append(local);
        else tag_experiment(diags, local, e);
    }
    if (diags.has_errors()) throw InputError(diags);
    out.warnings = diags;
    return out;
}

LoadedScenario load_scenario_file(const std::filesystem::path& file, const PresetLibrary& presets, LoadOptions options) {
    const std::string text = read_text_file(file);
    Diagnostics diags;
    const std::string source = file.filename().string();
    nlohmann::json document = parse_json_text(text, source, diags);
    if (diags.has_errors()) throw InputError(diags);
    return load_scenario_document(document, source, file.parent_path().empty() ? "." : file.parent_path(), presets, options);
}

}  // namespace orrery
