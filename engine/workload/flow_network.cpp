#include "workload/flow_network.h"

#include <algorithm>

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
            if (ev.kind == FabricEventKind::rate && ev.at_ps == 0)
                for (LinkId l : ev.links) n.changed->link_rate[l] = ev.rate;
    }
    const Fabric& f = n.fabric(built);
    auto routes_after = [&](int64_t t) {
        const std::vector<uint8_t> down = links_down_after(events, f.link_count(), t);
        return routes_around(f, &down, s.network.capacity_weights);
    };
    n.routes = routes_after(0);
    // Later events: capacities at once, routes after the convergence delay.
    std::vector<double> rate(f.link_count());
    for (LinkId l = 0; l < f.link_count(); ++l) rate[l] = double(f.link_rate[l].count) / 8;
    std::vector<uint8_t> down = links_down_after(events, f.link_count(), 0);
    for (const FabricEvent& ev : events) {
        if (ev.at_ps == 0) continue;
        FlowFabricChange c;
        c.at = ev.at_ps;
        for (LinkId l : ev.links) {
            if (ev.kind == FabricEventKind::rate) rate[l] = double(ev.rate.count) / 8;
            else down[l] = ev.kind == FabricEventKind::down;
            c.link_bytes_per_s.emplace_back(l, down[l] ? 0.0 : rate[l]);
        }
        n.changes.push_back(std::move(c));
        if (ev.kind == FabricEventKind::rate) continue;
        FlowFabricChange r;
        r.at = ev.at_ps + s.network.routing_convergence.count;
        r.routes = std::make_shared<const Routes>(routes_after(ev.at_ps));
        n.changes.push_back(std::move(r));
    }
    std::stable_sort(n.changes.begin(), n.changes.end(), [](const FlowFabricChange& a, const FlowFabricChange& b) { return a.at < b.at; });
    return n;
}

}  // namespace orrery
