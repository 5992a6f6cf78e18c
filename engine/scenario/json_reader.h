#pragma once
// Reads one JSON object field by field, and says exactly what is wrong: each error names the JSON path,
// what was expected and what was found. Keys that no getter asked for are reported by finish(), with the
// closest known key as a suggestion. Absent optional fields take the caller's default; present but wrong
// fields are errors, never defaults.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "common/units.h"

namespace orrery {

enum class Need { optional, required };

class JsonReader {
public:
    // source: the file name for messages; path: the JSON path of `value` ("" for the root).
    JsonReader(const nlohmann::json& value, std::string source, std::string path, Diagnostics& diags);

    bool is_object() const { return value_.is_object(); }
    bool has(std::string_view key) const;
    std::string path_of(std::string_view key) const;
    std::string where(std::string_view key) const;  // "source: path.key"
    void error(std::string_view key, const std::string& message);

    // Marks the key as known and returns its value, or nullptr when absent.
    const nlohmann::json* raw(std::string_view key, Need need = Need::optional, std::string_view expected = "a value");

    std::optional<int64_t> integer(std::string_view key, Need need, int64_t min, int64_t max);
    std::optional<double> number(std::string_view key, Need need, double min, double max);
    std::optional<bool> boolean(std::string_view key, Need need);
    std::optional<std::string> string(std::string_view key, Need need);
    std::optional<std::string> choice(std::string_view key, Need need, const std::vector<std::string>& choices);
    std::optional<BitsPerSecond> rate(std::string_view key, Need need);
    std::optional<Picoseconds> time(std::string_view key, Need need);
    std::optional<Bytes> size(std::string_view key, Need need);
    // A nested object; nullopt when absent or not an object (the latter is reported).
    std::optional<JsonReader> object(std::string_view key, Need need);
    const nlohmann::json* array(std::string_view key, Need need, std::string_view expected);

    // Reports every key of the object that no getter asked for.
    void finish();

    Diagnostics& diagnostics() { return diags_; }
    const std::string& source() const { return source_; }
    const std::string& path() const { return path_; }

private:
    const nlohmann::json& value_;
    std::string source_;
    std::string path_;
    Diagnostics& diags_;
    std::vector<std::string> known_;
};

// "the string \"8\"", "the number 7", "an object", used in "found ..." messages.
std::string describe_json(const nlohmann::json& value);
std::string join_path(const std::string& base, std::string_view key);
std::string index_path(const std::string& base, size_t index);
std::string quoted_list(const std::vector<std::string>& words);
// The object's field `key` when it is a string, else "" (absent, another type, or `object` not an object):
// for peeking at a document before it is read, where nlohmann's value() would throw on a number.
std::string string_field(const nlohmann::json& object, const char* key);

}  // namespace orrery
