#pragma once
// Short fabric specs for the command line: "GENERATOR:key=value,key=value", e.g.
//   fat-tree:k=60
//   roft:gpus=128,gpus-per-server=8           (roft = rail-optimized)
//   leaf-spine:leaves=2,spines=2,hosts-per-leaf=8,oversubscription=4
//   single-switch:hosts=16,rate=400Gbps
// Dashes in keys stand for underscores; rate/delay keys (rate, host-rate, tier1-delay, ...) set
// link_defaults. The result is the same topology JSON a scenario holds, validated by the same reader.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"

namespace orrery {

// nullopt with an error in diags when the spec's shape is wrong (unknown generator, key without value).
std::optional<nlohmann::json> fabric_spec_to_json(const std::string& spec, Diagnostics& diags);

}  // namespace orrery
