#include "views/editors/scenario_form.h"

#include <sstream>

namespace orrery::views {
namespace {

// The object a dotted path walks through, or null where a key is missing or not an object.
template <typename Json>
Json* walk(Json& doc, const std::string& path) {
    Json* at = &doc;
    std::stringstream parts(path);
    std::string key;
    while (at && std::getline(parts, key, '.')) at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
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
