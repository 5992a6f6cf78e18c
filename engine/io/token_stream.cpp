#include "io/token_stream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/diagnostics.h"

namespace orrery {

bool TokenStream::at_end() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        if (text_[pos_] == '\n') ++line_;
        ++pos_;
    }
    return pos_ >= text_.size();
}

void TokenStream::fail(const std::string& message) const { throw InputError(where(), message); }

std::string TokenStream::word(std::string_view what) {
    if (at_end()) fail("expected " + std::string(what) + ", found the end of the file");
    size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
}

uint64_t TokenStream::unsigned_integer(std::string_view what, uint64_t max) {
    std::string t = word(what);
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
        fail("expected " + std::string(what) + " (a non-negative integer), found \"" + t + "\"");
    errno = 0;
    unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
    if (errno == ERANGE || v > max) fail("expected " + std::string(what) + " of at most " + std::to_string(max) + ", found " + t);
    return v;
}

double TokenStream::number(std::string_view what) {
    std::string t = word(what);
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size() || !std::isfinite(v)) fail("expected " + std::string(what) + " (a number), found \"" + t + "\"");
    return v;
}

size_t count_tokens(std::string_view line) {
    size_t n = 0;
    bool in = false;
    for (char c : line) {
        bool space = std::isspace(static_cast<unsigned char>(c));
        if (!space && !in) ++n;
        in = !space;
    }
    return n;
}

}  // namespace orrery
