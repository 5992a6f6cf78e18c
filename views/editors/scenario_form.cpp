#include "views/editors/scenario_form.h"

#include <cstdlib>
#include <sstream>

namespace orrery::views {
namespace {

// The value a dotted path walks to ("workload.jobs[1].placement"), or null where a key or an index is missing.
template <typename Json>
Json* walk(Json& doc, const std::string& path) {
    Json* at = &doc;
    std::stringstream parts(path);
    std::string part;
    while (at && std::getline(parts, part, '.')) {
        const size_t bracket = part.find('[');
        const std::string key = part.substr(0, bracket);
        if (!key.empty()) at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
        for (size_t open = bracket; at && open != std::string::npos; open = part.find('[', open + 1)) {
            const size_t index = size_t(std::strtoul(part.c_str() + open + 1, nullptr, 10));
            at = at->is_array() && index < at->size() ? &(*at)[index] : nullptr;
        }
    }
    return at;
}

}  // namespace

nlohmann::json json_at(const nlohmann::json& doc, const std::string& path) {
    const nlohmann::json* at = walk(doc, path);
    return at ? *at : nlohmann::json();
}

void erase_at(nlohmann::json& doc, const std::string& path) {
    const size_t dot = path.rfind('.');
    nlohmann::json* parent = dot == std::string::npos ? &doc : walk(doc, path.substr(0, dot));
    if (parent && parent->is_object()) parent->erase(path.substr(dot == std::string::npos ? 0 : dot + 1));
}

}  // namespace orrery::views
