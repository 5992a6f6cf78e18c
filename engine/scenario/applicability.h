#pragma once
// Which scenario keys each way of timing an LLM job honours: one table (key × mode), which validate, run
// and the workbench's forms consult, and which test_settings checks against what each mode computes.
//
// A flow workload ("kind": "flows") always runs at packet level and honours every key it accepts. An LLM job
// runs on one of four networks (workload.network_mode, or SimAI's busbw formula): a key there is
//   honoured     it changes what that mode computes;
//   meaningless  the mode has nothing it acts on (no queues for ECN, no packets for congestion control): a
//                warning names the key and what the mode does instead, so a sweep shared between modes runs;
//   refused      asking for it there is a mistake the mode cannot carry out: an error.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"

namespace orrery {

struct Scenario;

enum class TimingMode : uint8_t { packet, flow, analytic, busbw };
inline constexpr size_t kTimingModes = 4;
const char* timing_mode_name(TimingMode m);  // "packet", "flow", "analytic", "busbw"
std::string timing_mode_phrase(TimingMode m);  // "at network_mode \"flow\"", "with \"collectives\": {\"model\": \"busbw\"}"

enum class Applies : uint8_t { honoured, meaningless, refused };

struct KeyApplicability {
    const char* key;                  // a JSON path prefix without indices ("cc", "network.ecn", "output.record.queues")
    Applies in[kTimingModes];         // by TimingMode
    const char* why;                  // what the modes that do not honour it do instead
};

// The table, most specific keys first.
const std::vector<KeyApplicability>& key_applicability();

// The row that governs `key` (a path without indices; an output.record entry as "output.record.<entry>"),
// or nullptr when every mode honours it.
const KeyApplicability* applicability_of(std::string_view key);

// How an LLM scenario is timed; nullopt-like packet for flow workloads (every key honoured).
bool is_llm(const Scenario& s);
TimingMode timing_mode(const Scenario& s);
// The same read off a (resolved) document, for forms that edit one; nullopt for a flow workload.
std::optional<TimingMode> timing_mode_of(const nlohmann::json& doc);

// Warnings (meaningless) and errors (refused) for every key of the resolved document `doc` that `s`'s mode
// does not honour, at "source: key". Nothing for flow workloads.
void check_applicability(const nlohmann::json& doc, const Scenario& s, const std::string& source, Diagnostics& diags);

// What check_applicability says of one key in one mode, or "" when it is honoured (for the workbench's forms).
std::string applicability_note(std::string_view key, TimingMode mode);

}  // namespace orrery
