#pragma once
// Errors and warnings about user input. Each names its place: a file and line, or a file and JSON path.
#include <stdexcept>
#include <string>
#include <vector>

namespace orrery {

struct Diagnostic {
    enum class Severity { error, warning };
    Severity severity = Severity::error;
    std::string where;    // "scenario.json: topology.k" or "topology.txt:12"
    std::string message;  // what was expected and what was found
    std::string line() const;  // "where: error: message"
};

// A key a reader asked for, with the values it accepts. Recorded only when asked (record_keys), so that a
// test can walk every key the readers accept (tests/engine/test_settings.cpp) without a list kept by hand.
struct KeyUse {
    std::string path;                  // JSON path, e.g. "network.pfc.port_reserve" or "workload.flows[0].size"
    std::string kind;                  // integer, number, boolean, string, choice, rate, time, size
    double min = 0, max = 0;           // integer and number
    std::vector<std::string> choices;  // choice
};

class Diagnostics {
public:
    void record_keys(bool on) { record_keys_ = on; }
    bool recording_keys() const { return record_keys_; }
    void key_used(KeyUse use) { keys_used_.push_back(std::move(use)); }
    const std::vector<KeyUse>& keys_used() const { return keys_used_; }
    void error(std::string where, std::string message);
    void warning(std::string where, std::string message);
    void append(const Diagnostics& other);
    bool has_errors() const;
    size_t error_count() const;
    const std::vector<Diagnostic>& items() const { return items_; }
    std::string format() const;  // one line each, errors and warnings in order of discovery

private:
    std::vector<Diagnostic> items_;
    bool record_keys_ = false;
    std::vector<KeyUse> keys_used_;
};

// Thrown where input cannot be turned into a model at all; carries every diagnostic found so far.
class InputError : public std::runtime_error {
public:
    explicit InputError(Diagnostics diagnostics);
    InputError(std::string where, std::string message);
    const Diagnostics& diagnostics() const { return diagnostics_; }

private:
    Diagnostics diagnostics_;
};

// "did you mean" support: the candidate closest to `word` by edit distance, or empty when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace orrery
