#pragma once
// Checks on raw text before it is parsed. Nesting depth: the parsers of JSON (nlohmann), XML (tinyxml2,
// Boost's GraphML reader) and DOT (Boost's Graphviz reader) recurse once per level, so a file nested tens
// of thousands of levels deep overflows the stack. No format Orrery reads needs more than a few dozen.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace orrery {

inline constexpr size_t kMaxNesting = 256;

struct TextPosition {
    size_t line = 1, column = 1;
};
// Line and column (1-based) of byte `offset` of `text`.
TextPosition text_position(std::string_view text, size_t offset);
// "source:line:column" of byte `offset`.
std::string text_location(const std::string& source, std::string_view text, size_t offset);

using TooDeep = TextPosition;  // where the text first goes deeper than the limit

// JSON: arrays and objects, outside strings.
std::optional<TooDeep> json_too_deep(std::string_view text, size_t limit = kMaxNesting);
// XML: elements (start tags not closed), outside comments, CDATA, processing instructions and declarations.
std::optional<TooDeep> xml_too_deep(std::string_view text, size_t limit = kMaxNesting);
// DOT: { } and [ ] outside quoted strings and comments.
std::optional<TooDeep> braces_too_deep(std::string_view text, size_t limit = kMaxNesting);

// Whether the bytes are well-formed UTF-8 (what JSON, and so every scenario and store, must hold).
bool valid_utf8(std::string_view text);

// "nested more than 256 levels deep" for messages.
std::string too_deep_message(const char* format);

}  // namespace orrery
