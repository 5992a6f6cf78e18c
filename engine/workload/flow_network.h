#pragma once
// What the flow and analytic levels time a scenario's transfers on, beside its fabric: the fabric as its
// topology.events leave it at time 0 (links down routed around, rates set; later events are refused at these
// levels by check_against_fabric), next hops weighted with routing.weights "capacity", and whether transfers
// spread over their equal-cost paths (spraying, adaptive routing and flowlets: topology/path_split.h).
#include <optional>

#include "scenario/scenario.h"
#include "topology/routing.h"

namespace orrery {

struct FlowNetwork {
    std::optional<Fabric> changed;  // the fabric with the rates its events set; unset: the fabric as built
    std::optional<Routes> routes;   // routes around what is down, or weighted; unset: the fabric's plain routes
    bool split = false;
    std::vector<FabricEvent> events;  // its topology.events as resolved (what: "link 12 (3 – 17) down at 0us")
    const Fabric& fabric(const Fabric& built) const { return changed ? *changed : built; }
};

FlowNetwork flow_network(const Scenario& s, const Fabric& built);

}  // namespace orrery
