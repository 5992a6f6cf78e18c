#include "common/diagnostics.h"

#include <algorithm>
#include <cctype>

namespace orrery {

std::string Diagnostic::line() const {
    return where + ": " + (severity == Severity::error ? "error: " : "warning: ") + message;
}

void Diagnostics::error(std::string where, std::string message) {
    items_.push_back({Diagnostic::Severity::error, std::move(where), std::move(message)});
}

void Diagnostics::warning(std::string where, std::string message) {
    items_.push_back({Diagnostic::Severity::warning, std::move(where), std::move(message)});
}

void Diagnostics::append(const Diagnostics& other) {
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

size_t Diagnostics::error_count() const {
    return std::count_if(items_.begin(), items_.end(),
                         [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::error; });
}

std::string Diagnostics::format() const {
    std::string out;
    for (const Diagnostic& d : items_) out += d.line() + "\n";
    return out;
}

static std::string first_error_line(const Diagnostics& d) {
    for (const Diagnostic& item : d.items())
        if (item.severity == Diagnostic::Severity::error) return item.line();
    return "invalid input";
}

InputError::InputError(Diagnostics diagnostics)
    : std::runtime_error(first_error_line(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(std::string where, std::string message)
    : std::runtime_error(where + ": error: " + message) {
    diagnostics_.error(std::move(where), std::move(message));
}

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string normalized(const std::string& s) {
    std::string out;
    for (char c : s)
        if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
    for (const std::string& c : candidates) {
        // "hostsPerLeaf" vs "hosts_per_leaf" differ only in separators and case: always suggest.
        size_t d = normalized(c) == normalized(word) ? 0 : edit_distance(word, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
    }
    return best;
}

}  // namespace orrery
