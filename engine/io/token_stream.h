#pragma once
// Whitespace-separated tokens with their line numbers: the HPCC/SimAI text formats are read this way
// (line breaks carry no meaning there), and every error names the file and the line of the bad token.
#include <cstdint>
#include <string>
#include <string_view>

namespace orrery {

class TokenStream {
public:
    TokenStream(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

    bool at_end();                       // skips whitespace first
    size_t line() const { return line_; }  // line of the last token read (or of the end)
    const std::string& source() const { return source_; }
    std::string where() const { return source_ + ":" + std::to_string(line_); }

    // Each reads one token or throws InputError("file:line", "expected <what>, found ...").
    std::string word(std::string_view what);
    uint64_t unsigned_integer(std::string_view what, uint64_t max);
    double number(std::string_view what);
    [[noreturn]] void fail(const std::string& message) const;

private:
    std::string_view text_;
    std::string source_;
    size_t pos_ = 0;
    size_t line_ = 1;
};

// Tokens of one line, for the line-based header detection of topology files.
size_t count_tokens(std::string_view line);

}  // namespace orrery
