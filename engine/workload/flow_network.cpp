#include "workload/flow_network.h"

namespace orrery {

FlowNetwork flow_network(const Scenario& s, const Fabric& built) {
    FlowNetwork n;
    n.split = s.network.load_balancing != LoadBalancing::ecmp;
    n.events = resolve_fabric_events(s.topology.events, built, topology_node_names(s.topology));
    const std::vector<FabricEvent>& events = n.events;
    if (events.empty() && !s.network.capacity_weights) return n;
    bool rates = false;
    for (const FabricEvent& ev : events) rates |= ev.kind == FabricEventKind::rate;
    if (rates) {
        n.changed = built;
        for (const FabricEvent& ev : events)
            if (ev.kind == FabricEventKind::rate)
                for (LinkId l : ev.links) n.changed->link_rate[l] = ev.rate;
    }
    const Fabric& f = n.fabric(built);
    const std::vector<uint8_t> down = links_down_after(events, f.link_count(), 0);
    n.routes = build_routes(f, 0, &down);
    if (s.network.capacity_weights) weight_by_capacity(f, *n.routes);
    return n;
}

}  // namespace orrery
