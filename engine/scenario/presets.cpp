#include "scenario/presets.h"

#include "scenario/load.h"

#include <cstdlib>

#include <fstream>
#include <set>

#include "scenario/json_reader.h"

namespace orrery {

PresetLibrary standard_presets(const char* executable) {
    std::vector<std::filesystem::path> roots;
    if (const char* env = std::getenv("ORRERY_PRESETS")) {
        const std::string list = env;
        size_t start = 0;
        while (start <= list.size()) {
            size_t end = list.find(':', start);
            if (end == std::string::npos) end = list.size();
            if (end > start) roots.emplace_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec && executable) exe = std::filesystem::absolute(executable, ec);
    if (!exe.empty()) roots.push_back(exe.parent_path().parent_path() / ORRERY_INSTALL_DATADIR / "presets");
    roots.emplace_back(std::filesystem::path(ORRERY_SOURCE_DIR) / "presets");
    return PresetLibrary(roots);
}


std::string preset_folder(const std::string& section) {
    if (section == "topology") return "fabrics";
    if (section == "model") return "models";
    return section;
}

std::vector<PresetInfo> PresetLibrary::list(const std::string& section) const {
    std::vector<PresetInfo> out;
    std::set<std::string> seen;
    for (const auto& root : roots_) {
        std::filesystem::path dir = root / preset_folder(section);
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec)) continue;
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
            if (entry.path().extension() == ".json") files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            if (!seen.insert(file.stem().string()).second) continue;  // an earlier root wins
            PresetInfo info{section, file.stem().string(), "", file};
            Diagnostics ignored;  // a damaged preset is reported when it is loaded; listing only wants its description
            nlohmann::json doc = parse_json_text(read_text_file(file), file.string(), ignored);
            if (doc.is_object() && doc.contains("description") && doc["description"].is_string())
                info.description = doc["description"].get<std::string>();
            out.push_back(std::move(info));
        }
    }
    return out;
}

std::optional<nlohmann::json> PresetLibrary::load(const std::string& section, const std::string& name,
                                                  const std::string& where, Diagnostics& diags) const {
    std::vector<PresetInfo> all = list(section);
    for (const PresetInfo& p : all) {
        if (p.name != name) continue;
        const size_t errors = diags.error_count();
        nlohmann::json doc = parse_json_text(read_text_file(p.file), p.file.string(), diags);
        if (diags.error_count() != errors) return std::nullopt;
        if (!doc.is_object() || string_field(doc, "format") != "orrery-preset" || string_field(doc, "section") != section ||
            !doc.contains("value") || !doc["value"].is_object()) {
            diags.error(p.file.string(), "expected a preset {\"format\": \"orrery-preset\", \"section\": \"" + section +
                                             "\", \"value\": {...}}");
            return std::nullopt;
        }
        return doc["value"];
    }
    std::vector<std::string> names;
    for (const PresetInfo& p : all) names.push_back(p.name);
    std::string hint = closest_match(name, names);
    std::string message = "unknown " + section + " preset \"" + name + "\"";
    if (!hint.empty()) message += " (did you mean \"" + hint + "\"?)";
    else if (!names.empty()) message += "; available: " + quoted_list(names);
    else message += "; no presets were found (searched " + std::to_string(roots_.size()) + " folders)";
    diags.error(where, message);
    return std::nullopt;
}

std::optional<std::filesystem::path> PresetLibrary::data_file(const std::string& name) const {
    for (const std::filesystem::path& root : roots_) {
        std::error_code ec;
        const std::filesystem::path candidate = root.parent_path() / "data" / name;
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    }
    return std::nullopt;
}

nlohmann::json resolve_presets(const nlohmann::json& document, const PresetLibrary& presets, const std::string& source,
                               Diagnostics& diags) {
    nlohmann::json out = document;
    if (!out.is_object()) return out;
    // (section, where it sits in the document): the model of an LLM workload is one level down.
    const std::pair<const char*, std::vector<const char*>> places[] = {
        {"topology", {"topology"}}, {"network", {"network"}}, {"cc", {"cc"}}, {"model", {"workload", "model"}}};
    // Each job of a mix (workload.jobs[i].model) too.
    std::vector<std::pair<const char*, nlohmann::json*>> found;
    std::vector<std::string> dotted_of;
    for (const auto& [section, keys] : places) {
        nlohmann::json* at = &out;
        std::string dotted;
        for (const char* key : keys) {
            at = at && at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
            if (!dotted.empty()) dotted += '.';
            dotted += key;
        }
        found.emplace_back(section, at);
        dotted_of.push_back(dotted);
    }
    if (out.contains("workload") && out["workload"].is_object() && out["workload"].contains("jobs") && out["workload"]["jobs"].is_array())
        for (size_t i = 0; i < out["workload"]["jobs"].size(); ++i) {
            nlohmann::json& job = out["workload"]["jobs"][i];
            found.emplace_back("model", job.is_object() && job.contains("model") ? &job["model"] : nullptr);
            dotted_of.push_back("workload.jobs[" + std::to_string(i) + "].model");
        }
    for (size_t k = 0; k < found.size(); ++k) {
        const char* section = found[k].first;
        nlohmann::json* at = found[k].second;
        const std::string& dotted = dotted_of[k];
        if (!at || !at->is_object() || !at->contains("preset")) continue;
        nlohmann::json& part = *at;
        const std::string where = source + ": " + dotted + ".preset";
        if (!part["preset"].is_string()) {
            diags.error(where, "expected the name of a " + std::string(section) + " preset, found " + describe_json(part["preset"]));
            continue;
        }
        std::optional<nlohmann::json> base = presets.load(section, part["preset"].get<std::string>(), where, diags);
        if (!base) continue;
        part.erase("preset");
        base->merge_patch(part);
        part = std::move(*base);
    }
    return out;
}

}  // namespace orrery
