#include "views/scenario_form.h"

#include <sstream>

namespace orrery::views {

nlohmann::json json_at(const nlohmann::json& doc, const std::string& path) {
    const nlohmann::json* at = &doc;
    std::stringstream parts(path);
    std::string key;
    while (std::getline(parts, key, '.')) {
        if (!at->is_object() || !at->contains(key)) return nullptr;
        at = &(*at)[key];
    }
    return *at;
}

}  // namespace orrery::views
