#include "scenario/fabric_spec.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace orrery {

std::optional<nlohmann::json> fabric_spec_to_json(const std::string& spec, Diagnostics& diags) {
    const size_t colon = spec.find(':');
    std::string generator = spec.substr(0, colon);
    if (generator == "roft" || generator == "rail") generator = "rail-optimized";
    const std::vector<std::string> generators = {"fat-tree", "three-tier", "rail-optimized", "roft", "leaf-spine", "single-switch"};
    if (std::find(generators.begin(), generators.end(), generator) == generators.end()) {
        std::string hint = closest_match(generator, generators);
        diags.error(spec, "unknown fabric generator \"" + generator + "\"" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") +
                              "; known: fat-tree, three-tier, rail-optimized (roft), leaf-spine, single-switch");
        return std::nullopt;
    }
    nlohmann::json out = {{"generator", generator}};
    if (colon == std::string::npos) return out;
    std::string rest = spec.substr(colon + 1);
    size_t start = 0;
    while (start <= rest.size()) {
        size_t end = rest.find(',', start);
        if (end == std::string::npos) end = rest.size();
        std::string item = rest.substr(start, end - start);
        start = end + 1;
        if (item.empty()) {
            if (end == rest.size()) break;
            continue;
        }
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
            diags.error(spec, "expected key=value, found \"" + item + "\"");
            return std::nullopt;
        }
        std::string key = item.substr(0, eq), text = item.substr(eq + 1);
        std::replace(key.begin(), key.end(), '-', '_');
        nlohmann::json value;
        char* parsed_end = nullptr;
        long long integer = std::strtoll(text.c_str(), &parsed_end, 10);
        if (parsed_end == text.c_str() + text.size()) {
            value = integer;
        } else {
            double number = std::strtod(text.c_str(), &parsed_end);
            value = parsed_end == text.c_str() + text.size() ? nlohmann::json(number) : nlohmann::json(text);
        }
        // Link classes: "rate", "delay", "host_rate", "tier1_delay", "nvlink_rate", ...
        bool link_key = false;
        for (const char* cls : {"", "host_", "tier1_", "tier2_", "nvlink_"})
            for (const char* what : {"rate", "delay"})
                if (key == std::string(cls) + what) {
                    std::string name = *cls ? std::string(cls, std::string(cls).size() - 1) : "all";
                    out["link_defaults"][name][what] = text;
                    link_key = true;
                }
        if (key == "gpus_per_server" && generator != "rail-optimized") {
            out["servers"]["gpus_per_server"] = value;
            link_key = true;
        }
        if (!link_key) {
            if (out.contains(key)) {
                diags.error(spec, "\"" + key + "\" is given twice");
                return std::nullopt;
            }
            out[key] = value;
        }
    }
    return out;
}

}  // namespace orrery
