#pragma once
// Sweep expansion: the scenario's swept parameters (value lists, combined as a Cartesian product or
// zipped) times its seeds become experiments, each a complete scenario document of its own.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "scenario/scenario.h"

namespace orrery {

struct Experiment {
    size_t index = 0;
    std::string id;                      // "e0003": stable for the same scenario file
    nlohmann::json parameters;           // ordered [{"path": ..., "value": ...}], plus the seed when replicated
    uint64_t seed = 0;
    nlohmann::json document;             // raw document with the values applied, "sweep" removed, "seed" set
    std::string sha256;                  // of the canonical JSON of the resolved document
};

// The combinations in expansion order: the last parameter varies fastest, then the seed.
std::vector<Experiment> expand_sweep(const nlohmann::json& raw_document, const SweepSpec& sweep);

// Sets the value at a dotted path ("cc.dcqcn.rate_ai", "workload.flows[2].size") inside `doc`, creating
// objects on the way; returns false with `why` when the path is malformed or crosses a non-object.
bool set_at_path(nlohmann::json& doc, const std::string& path, const nlohmann::json& value, std::string* why);

// Sorted keys, no spaces: equal scenarios give equal bytes.
std::string canonical_json(const nlohmann::json& doc);

}  // namespace orrery
