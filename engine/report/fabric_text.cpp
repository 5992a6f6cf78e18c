#include "report/fabric_text.h"

#include "common/quantity.h"

namespace orrery::report {
namespace {

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// "" for an event at the start, " from 100us" otherwise.
std::string when(const nlohmann::json& at) {
    if (at.is_null()) return "";
    const auto t = parse_time(text_of(at), at.is_number());
    if (!t) return std::string(" from ").append(text_of(at));
    return t->count == 0 ? std::string() : std::string(" from ").append(format_time(*t));
}

std::string what(const nlohmann::json& e) {
    if (e.contains("switch")) return "switch " + text_of(e["switch"]);
    const nlohmann::json& l = e.value("link", nlohmann::json());
    if (l.is_array() && l.size() == 2) return "link " + text_of(l[0]) + " – " + text_of(l[1]);
    if (l.is_object() && l.contains("tiers") && l["tiers"].is_array() && l["tiers"].size() == 2) {
        const std::string tiers = "tiers " + text_of(l["tiers"][0]) + " and " + text_of(l["tiers"][1]);
        if (l.contains("index")) return "link " + text_of(l["index"]) + " between " + tiers;
        const bool plural = l.value("random", 1) != 1;
        return text_of(l.value("random", nlohmann::json(1))) + " random link" + (plural ? "s" : "") + " between " + tiers;
    }
    return "link " + text_of(l);
}

}  // namespace

std::string events_label(const nlohmann::json& events) {
    if (events.is_null() || (events.is_array() && events.empty())) return kHealthyFabric;
    if (!events.is_array()) return events.dump();
    std::string out;
    for (const nlohmann::json& e : events) {
        if (!e.is_object()) return events.dump();
        std::string s = what(e);
        if (e.contains("rate")) s.append(" at ").append(text_of(e["rate"]));
        else s.append(" ").append(text_of(e.value("state", nlohmann::json("down"))));
        s.append(when(e.value("at", nlohmann::json())));
        if (e.contains("link") && e["link"].is_object() && e["link"].contains("random"))
            s.append(" (seed ").append(text_of(e["link"].value("seed", nlohmann::json(0)))).append(")");
        if (!out.empty()) out.append("; ");
        out.append(s);
    }
    return out;
}

}  // namespace orrery::report
