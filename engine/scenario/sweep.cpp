#include "scenario/sweep.h"

#include <cstdio>

#include "common/sha256.h"

namespace orrery {

bool set_at_path(nlohmann::json& doc, const std::string& path, const nlohmann::json& value, std::string* why) {
    nlohmann::json* at = &doc;
    size_t i = 0;
    while (i < path.size()) {
        if (path[i] == '[') {
            size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1) {
                if (why) *why = "unclosed or empty [index] in \"" + path + "\"";
                return false;
            }
            std::string digits = path.substr(i + 1, close - i - 1);
            if (digits.find_first_not_of("0123456789") != std::string::npos) {
                if (why) *why = "index \"" + digits + "\" is not a number in \"" + path + "\"";
                return false;
            }
            size_t index = std::stoul(digits);
            if (!at->is_array() || index >= at->size()) {
                if (why) *why = "\"" + path.substr(0, i) + "\" has no element " + digits;
                return false;
            }
            at = &(*at)[index];
            i = close + 1;
            if (i < path.size() && path[i] == '.') ++i;
            continue;
        }
        size_t end = path.find_first_of(".[", i);
        std::string key = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
        if (key.empty()) {
            if (why) *why = "empty name in \"" + path + "\"";
            return false;
        }
        if (at->is_null()) *at = nlohmann::json::object();
        if (!at->is_object()) {
            if (why) *why = "\"" + path.substr(0, i ? i - 1 : 0) + "\" is not an object, so it has no field \"" + key + "\"";
            return false;
        }
        at = &(*at)[key];
        i = end == std::string::npos ? path.size() : end;
        if (i < path.size() && path[i] == '.') ++i;
    }
    *at = value;
    return true;
}

// Invalid UTF-8 can only come from text a reader let through (a file name in a config, say): it is hashed
// as U+FFFD rather than stopping the run with an exception.
std::string canonical_json(const nlohmann::json& doc) { return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::vector<Experiment> expand_sweep(const nlohmann::json& raw_document, const SweepSpec& sweep) {
    std::vector<std::vector<size_t>> combinations;
    if (sweep.parameters.empty()) {
        combinations.push_back({});
    } else if (sweep.zip) {
        for (size_t i = 0; i < sweep.parameters[0].values.size(); ++i)
            combinations.push_back(std::vector<size_t>(sweep.parameters.size(), i));
    } else {
        std::vector<size_t> digits(sweep.parameters.size(), 0);
        for (;;) {
            combinations.push_back(digits);
            size_t d = digits.size();
            while (d > 0 && ++digits[d - 1] == sweep.parameters[d - 1].values.size()) digits[--d] = 0;
            if (d == 0) break;
        }
    }
    const std::vector<uint64_t> seeds = sweep.seeds.empty() ? std::vector<uint64_t>{raw_document.value("seed", uint64_t(1))} : sweep.seeds;
    const size_t total = combinations.size() * seeds.size();
    const int width = std::max<int>(4, int(std::to_string(total).size()));
    std::vector<Experiment> out;
    out.reserve(total);
    for (const auto& combo : combinations)
        for (uint64_t seed : seeds) {
            Experiment e;
            e.index = out.size();
            char id[32];
            std::snprintf(id, sizeof id, "e%0*zu", width, e.index);
            e.id = id;
            e.seed = seed;
            e.document = raw_document;
            e.document.erase("sweep");
            e.document["seed"] = seed;
            e.parameters = nlohmann::json::array();
            for (size_t p = 0; p < combo.size(); ++p) {
                const SweepParameter& param = sweep.parameters[p];
                set_at_path(e.document, param.path, param.values[combo[p]], nullptr);
                e.parameters.push_back({{"path", param.path}, {"value", param.values[combo[p]]}});
            }
            if (seeds.size() > 1) e.parameters.push_back({{"path", "seed"}, {"value", seed}});
            out.push_back(std::move(e));
        }
    return out;
}

}  // namespace orrery
