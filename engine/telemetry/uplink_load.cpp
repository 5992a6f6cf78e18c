#include "telemetry/uplink_load.h"

#include <algorithm>
#include <map>

namespace orrery {

std::vector<TierImbalance> uplink_imbalance(const Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    const Fabric& f = *x.fabric;
    struct Load {
        double max = 0, sum = 0;
        uint32_t count = 0;
    };
    std::map<int, Load> by_tier;
    for (uint32_t row = x.port_begin; row < x.port_end; ++row) {
        const net::PortInfo& p = b.port[row];
        const uint32_t a = b.node_fabric_id[p.node], c = b.node_fabric_id[b.port[p.peer_port].node];
        if (f.node_kind[a] != NodeKind::network_switch || f.node_kind[c] != NodeKind::network_switch) continue;
        if (f.node_tier[c] != f.node_tier[a] + 1 || p.rate_bps == 0) continue;
        const double load = double(b.tx[row].tx_bytes) / double(p.rate_bps);  // bytes per unit of capacity
        Load& l = by_tier[f.node_tier[a]];
        l.max = std::max(l.max, load), l.sum += load, ++l.count;
    }
    std::vector<TierImbalance> out;
    for (const auto& [tier, l] : by_tier)
        if (l.sum > 0) out.push_back({tier, l.count, l.max / (l.sum / double(l.count))});
    return out;
}

}  // namespace orrery
