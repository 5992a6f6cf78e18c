#pragma once
// Failures and degradations of a fabric over time (a scenario's topology.events): what each event names, and
// the links it takes down, brings back or slows once resolved against the fabric. The engine applies them
// (runtime/fabric_changes.h); routing recomputes around them (topology/routing.h, a mask of links down).
#include <cstdint>
#include <string>
#include <vector>

#include "common/units.h"
#include "topology/fabric.h"

namespace orrery {

enum class FabricEventKind : uint8_t { down, up, rate };

// As the scenario writes it (scenario/read_topology.cpp).
struct FabricEventSpec {
    Picoseconds at{0};
    FabricEventKind kind = FabricEventKind::down;
    bool names_switch = false;   // "switch": every link of one switch; else "link"
    int64_t link_index = -1;     // "link": 12
    std::string end_a, end_b;    // "link": ["leaf0", "spine2"]: node names, or ids where the fabric has none
    // "link": {"tiers": [2, 3], "index": 5} (the sixth link, in the fabric's order, joining those tiers) or
    // {"tiers": [2, 3], "random": 2, "seed": 7} (two of them drawn with the seed): a sweep fails each link of a
    // tier in turn, or random ones, without naming them.
    int tier_a = -1, tier_b = -1;
    int64_t tier_index = -1;
    int64_t random_count = 0;
    uint64_t random_seed = 0;
    std::string node;            // "switch": a name or id
    BitsPerSecond rate{0};       // FabricEventKind::rate: the link's rate from then on
    std::string where;           // "file: topology.events[2]": errors found against the fabric name it
};

// The same, resolved.
struct FabricEvent {
    int64_t at_ps = 0;
    FabricEventKind kind = FabricEventKind::down;
    std::vector<LinkId> links;
    BitsPerSecond rate{0};
    std::string what;            // "link 12 (leaf0 – spine2) down at 100us", for reports
};

// In time order (ties in the scenario's order). Throws InputError at the event's field when a link or switch
// does not exist, when a rate event names a host's link (its rate is the NIC's line rate, which congestion
// control starts from) or a switch. `names`: the fabric's node names (explicit lists); empty for generated
// and imported fabrics, whose nodes are named by id.
std::vector<FabricEvent> resolve_fabric_events(const std::vector<FabricEventSpec>& specs, const Fabric& f, const std::vector<std::string>& names);

// 1 for each link that the events at or before t leave down.
std::vector<uint8_t> links_down_after(const std::vector<FabricEvent>& events, size_t link_count, int64_t t);

// The node a scenario names: its name where the fabric has names, else its id as text.
std::string node_label(NodeId n, const std::vector<std::string>& names);

}  // namespace orrery
