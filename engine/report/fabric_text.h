#pragma once
// How a report names a fabric's events (a swept topology.events, read back from the store as JSON): what a
// legend, a table and a summary sentence call an experiment's failure, as a person would say it.
#include <string>

#include <nlohmann/json.hpp>

namespace orrery::report {

// What an experiment without events is called.
inline constexpr const char* kHealthyFabric = "healthy fabric";

// "healthy fabric", "link 144 down", "link leaf0 – spine2 down from 100us", "8 random links between tiers 1 and
// 2 down (seed 1)", "switch spine3 down; link 12 at 200Gbps from 1ms": the events as the scenario wrote them
// (the links a tier selector drew are in the store's fabric_events, as each experiment resolved them).
std::string events_label(const nlohmann::json& events);

}  // namespace orrery::report
