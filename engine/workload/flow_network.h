#pragma once
// What the flow and analytic levels time a scenario's transfers on, beside its fabric: the fabric as its
// topology.events leave it at time 0 (links down routed around, rates set), the later events as changes the
// flow level applies at their times (the analytic level refuses them: check_against_fabric), next hops weighted with routing.weights "capacity", and whether transfers
// spread over their equal-cost paths (spraying, adaptive routing and flowlets: topology/path_split.h).
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "scenario/scenario.h"
#include "topology/routing.h"

namespace orrery {

// A change of the fabric during a flow-level run (topology.events after the start): links' capacities from
// `at` on (0: down), or, once routing has converged, the routes transfers take from then on. A transfer
// crossing a link that went down stalls until the routes change, then moves to its new path with the bytes it
// has left (the packet level loses what was on the link and resends it after a timeout).
struct FlowFabricChange {
    int64_t at = 0;
    std::vector<std::pair<LinkId, double>> link_bytes_per_s;
    std::shared_ptr<const Routes> routes;
};

struct FlowNetwork {
    std::optional<Fabric> changed;  // the fabric with the rates its events set; unset: the fabric as built
    std::optional<Routes> routes;   // routes around what is down, or weighted; unset: the fabric's plain routes
    bool split = false;
    std::vector<FabricEvent> events;  // its topology.events as resolved (what: "link 12 (3 – 17) down at 0us")
    std::vector<FlowFabricChange> changes;  // the events after the start, in time order (the flow level's; analytic refuses them)
    const Fabric& fabric(const Fabric& built) const { return changed ? *changed : built; }
};

FlowNetwork flow_network(const Scenario& s, const Fabric& built);

}  // namespace orrery
