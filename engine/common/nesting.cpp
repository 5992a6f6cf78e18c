#include "common/nesting.h"

namespace orrery {

TextPosition text_position(std::string_view text, size_t offset) {
    TextPosition p;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') ++p.line, p.column = 1;
        else ++p.column;
    }
    return p;
}

std::string text_location(const std::string& source, std::string_view text, size_t offset) {
    const TextPosition p = text_position(text, offset);
    return source + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
}

namespace {

// Brackets outside double-quoted strings (with backslash escapes); `comments` also skips // and /* */ and #.
std::optional<TooDeep> brackets_too_deep(std::string_view text, size_t limit, bool comments) {
    size_t depth = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
        } else if (comments && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n') ++i;
        } else if (comments && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? text.size() : end + 1;
        } else if (c == '{' || c == '[') {
            if (++depth > limit) return text_position(text, i);
        } else if ((c == '}' || c == ']') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<TooDeep> json_too_deep(std::string_view text, size_t limit) { return brackets_too_deep(text, limit, false); }

std::optional<TooDeep> braces_too_deep(std::string_view text, size_t limit) { return brackets_too_deep(text, limit, true); }

std::optional<TooDeep> xml_too_deep(std::string_view text, size_t limit) {
    size_t depth = 0;
    for (size_t i = text.find('<'); i != std::string_view::npos && i < text.size(); i = text.find('<', i + 1)) {
        const std::string_view rest = text.substr(i);
        const auto skip_to = [&](std::string_view end) {
            const size_t at = text.find(end, i);
            i = at == std::string_view::npos ? text.size() : at + end.size() - 1;
        };
        if (rest.starts_with("<!--")) skip_to("-->");
        else if (rest.starts_with("<![CDATA[")) skip_to("]]>");
        else if (rest.starts_with("<?")) skip_to("?>");
        else if (rest.starts_with("<!")) skip_to(">");
        else if (rest.starts_with("</")) {
            if (depth > 0) --depth;
            skip_to(">");
        } else {
            const size_t start = i;
            // The tag's end, outside quoted attribute values; "/>" closes it at once.
            char quote = 0;
            size_t j = i + 1;
            for (; j < text.size(); ++j) {
                if (quote) {
                    if (text[j] == quote) quote = 0;
                } else if (text[j] == '"' || text[j] == '\'') {
                    quote = text[j];
                } else if (text[j] == '>') {
                    break;
                }
            }
            const bool self_closing = j < text.size() && j > 0 && text[j - 1] == '/';
            if (!self_closing && ++depth > limit) return text_position(text, start);
            i = j;
        }
    }
    return std::nullopt;
}

bool valid_utf8(std::string_view text) {
    // RFC 3629: no overlong forms, no UTF-16 surrogates (U+D800..U+DFFF), nothing above U+10FFFF; the second
    // byte's range carries those limits (the table in its section 4), the others are plain continuations.
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        size_t continuation;
        unsigned char second_low = 0x80, second_high = 0xBF;
        if (c < 0x80) continuation = 0;
        else if (c >= 0xC2 && c <= 0xDF) continuation = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            continuation = 2;
            if (c == 0xE0) second_low = 0xA0;
            if (c == 0xED) second_high = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            continuation = 3;
            if (c == 0xF0) second_low = 0x90;
            if (c == 0xF4) second_high = 0x8F;
        } else return false;
        if (text.size() - i <= continuation) return false;
        for (size_t k = 1; k <= continuation; ++k) {
            const unsigned char b = static_cast<unsigned char>(text[i + k]);
            const unsigned char low = k == 1 ? second_low : 0x80, high = k == 1 ? second_high : 0xBF;
            if (b < low || b > high) return false;
        }
        i += continuation + 1;
    }
    return true;
}

std::string too_deep_message(const char* format) {
    return std::string("this ") + format + " is nested more than " + std::to_string(kMaxNesting) +
           " levels deep here; no file Orrery reads needs that many (refused before parsing, which would exhaust the stack)";
}

}  // namespace orrery
