#include "scenario/json_reader.h"

#include <cmath>

#include "common/quantity.h"

namespace orrery {

std::string describe_json(const nlohmann::json& v) {
    std::string text = v.dump();
    if (text.size() > 48) text = text.substr(0, 45) + "...";
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::boolean: return "the boolean " + text;
        case nlohmann::json::value_t::string: return "the string " + text;
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned: return "the integer " + text;
        case nlohmann::json::value_t::number_float: return "the number " + text;
        case nlohmann::json::value_t::object: return "an object " + text;
        case nlohmann::json::value_t::array: return "an array " + text;
        default: return text;
    }
}

std::string join_path(const std::string& base, std::string_view key) {
    if (key.empty()) return base;
    return base.empty() ? std::string(key) : base + "." + std::string(key);
}

std::string index_path(const std::string& base, size_t index) { return base + "[" + std::to_string(index) + "]"; }

std::string quoted_list(const std::vector<std::string>& words) {
    std::string out;
    for (size_t i = 0; i < words.size(); ++i) out += (i ? ", \"" : "\"") + words[i] + "\"";
    return out;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string source, std::string path, Diagnostics& diags)
    : value_(value), source_(std::move(source)), path_(std::move(path)), diags_(diags) {}

bool JsonReader::has(std::string_view key) const { return value_.is_object() && value_.contains(key); }

std::string JsonReader::path_of(std::string_view key) const { return join_path(path_, key); }

std::string JsonReader::where(std::string_view key) const {
    std::string p = path_of(key);
    return source_ + ": " + (p.empty() ? "(top level)" : p);
}

void JsonReader::error(std::string_view key, const std::string& message) { diags_.error(where(key), message); }

const nlohmann::json* JsonReader::raw(std::string_view key, Need need, std::string_view expected) {
    known_.emplace_back(key);
    if (!value_.is_object()) return nullptr;
    auto it = value_.find(key);
    if (it == value_.end()) {
        if (need == Need::required) error(key, "missing required field: expected " + std::string(expected));
        return nullptr;
    }
    return &*it;
}

std::optional<int64_t> JsonReader::integer(std::string_view key, Need need, int64_t min, int64_t max) {
    if (diags_.recording_keys()) diags_.key_used({path_of(key), "integer", double(min), double(max), {}});
    std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    const nlohmann::json* v = raw(key, need, expected);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX))) {
        error(key, "expected " + expected + ", found " + describe_json(*v));
        return std::nullopt;
    }
    int64_t x = v->get<int64_t>();
    if (x < min || x > max) {
        error(key, "expected " + expected + ", found " + std::to_string(x));
        return std::nullopt;
    }
    return x;
}

std::optional<double> JsonReader::number(std::string_view key, Need need, double min, double max) {
    if (diags_.recording_keys()) diags_.key_used({path_of(key), "number", min, max, {}});
    auto fmt = [](double d) { std::string s = nlohmann::json(d).dump(); return s; };
    std::string expected = "a number in [" + fmt(min) + ", " + fmt(max) + "]";
    const nlohmann::json* v = raw(key, need, expected);
    if (!v) return std::nullopt;
    if (!v->is_number()) {
        error(key, "expected " + expected + ", found " + describe_json(*v));
        return std::nullopt;
    }
    double x = v->get<double>();
    if (!(x >= min && x <= max)) {
        error(key, "expected " + expected + ", found " + v->dump());
        return std::nullopt;
    }
    return x;
}

std::optional<bool> JsonReader::boolean(std::string_view key, Need need) {
    if (diags_.recording_keys()) diags_.key_used({path_of(key), "boolean", 0, 0, {}});
    const nlohmann::json* v = raw(key, need, "true or false");
    if (!v) return std::nullopt;
    if (!v->is_boolean()) {
        error(key, "expected true or false, found " + describe_json(*v));
        return std::nullopt;
    }
    return v->get<bool>();
}

std::optional<std::string> JsonReader::string(std::string_view key, Need need) {
    if (diags_.recording_keys()) diags_.key_used({path_of(key), "string", 0, 0, {}});
    const nlohmann::json* v = raw(key, need, "a string");
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        error(key, "expected a string, found " + describe_json(*v));
        return std::nullopt;
    }
    return v->get<std::string>();
}

std::optional<std::string> JsonReader::choice(std::string_view key, Need need, const std::vector<std::string>& choices) {
    if (diags_.recording_keys()) diags_.key_used({path_of(key), "choice", 0, 0, choices});
    std::string expected = "one of " + quoted_list(choices);
    const nlohmann::json* v = raw(key, need, expected);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        error(key, "expected " + expected + ", found " + describe_json(*v));
        return std::nullopt;
    }
    std::string s = v->get<std::string>();
    for (const std::string& c : choices)
        if (c == s) return s;
    std::string hint = closest_match(s, choices);
    error(key, "expected " + expected + ", found \"" + s + "\"" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
    return std::nullopt;
}

namespace {
template <class Q, class Parse>
std::optional<Q> quantity(JsonReader& r, std::string_view key, Need need, std::string_view kind, std::string_view example, Parse parse) {
    std::string expected = "a " + std::string(kind) + " with its unit, like " + std::string(example);
    if (r.diagnostics().recording_keys()) r.diagnostics().key_used({r.path_of(key), std::string(kind), 0, 0, {}});
    const nlohmann::json* v = r.raw(key, need, expected);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        std::string hint = v->is_number() ? " (numbers need a unit: write it as a string)" : "";
        r.error(key, "expected " + expected + ", found " + describe_json(*v) + hint);
        return std::nullopt;
    }
    std::string why;
    std::optional<Q> q = parse(v->get<std::string>(), &why);
    if (!q) r.error(key, "expected " + expected + ", found \"" + v->get<std::string>() + "\": " + why);
    return q;
}
}  // namespace

std::optional<BitsPerSecond> JsonReader::rate(std::string_view key, Need need) {
    return quantity<BitsPerSecond>(*this, key, need, "rate", "\"100Gbps\"",
                                   [](const std::string& s, std::string* w) { return parse_rate(s, w); });
}

std::optional<Picoseconds> JsonReader::time(std::string_view key, Need need) {
    return quantity<Picoseconds>(*this, key, need, "time", "\"1us\"",
                                 [](const std::string& s, std::string* w) { return parse_time(s, false, w); });
}

std::optional<Bytes> JsonReader::size(std::string_view key, Need need) {
    return quantity<Bytes>(*this, key, need, "size", "\"1000B\" or \"32MiB\"",
                           [](const std::string& s, std::string* w) { return parse_size(s, w); });
}

std::optional<JsonReader> JsonReader::object(std::string_view key, Need need) {
    const nlohmann::json* v = raw(key, need, "an object");
    if (!v) return std::nullopt;
    if (!v->is_object()) {
        error(key, "expected an object, found " + describe_json(*v));
        return std::nullopt;
    }
    return JsonReader(*v, source_, path_of(key), diags_);
}

const nlohmann::json* JsonReader::array(std::string_view key, Need need, std::string_view expected) {
    const nlohmann::json* v = raw(key, need, expected);
    if (!v) return nullptr;
    if (!v->is_array()) {
        error(key, "expected " + std::string(expected) + ", found " + describe_json(*v));
        return nullptr;
    }
    return v;
}

void JsonReader::finish() {
    if (!value_.is_object()) return;
    for (auto it = value_.begin(); it != value_.end(); ++it) {
        if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
        std::string hint = closest_match(it.key(), known_);
        diags_.error(where(it.key()), "unknown key \"" + it.key() + "\"" +
                                          (hint.empty() ? "; known keys here: " + quoted_list(known_)
                                                        : " (did you mean \"" + hint + "\"?)"));
    }
}

std::string string_field(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace orrery
