#include "telemetry/uplink_load.h"

#include <algorithm>
#include <map>

namespace orrery {

namespace {

// Calls visit(tier, row) for every uplink of experiment e: a switch port whose peer is a switch one tier up.
template <class Visit>
void for_each_uplink(const Batch& b, uint32_t e, Visit visit) {
    const ExperimentSlice& x = b.experiments[e];
    const Fabric& f = *x.fabric;
    for (uint32_t row = x.port_begin; row < x.port_end; ++row) {
        const net::PortInfo& p = b.port[row];
        const uint32_t a = b.node_fabric_id[p.node], c = b.node_fabric_id[b.port[p.peer_port].node];
        if (f.node_kind[a] != NodeKind::network_switch || f.node_kind[c] != NodeKind::network_switch) continue;
        if (f.node_tier[c] != f.node_tier[a] + 1 || p.rate_bps == 0) continue;
        visit(int(f.node_tier[a]), row);
    }
}

}  // namespace

std::vector<UplinkBusy> uplink_busy(const Batch& b, uint32_t e) {
    std::map<int, std::vector<uint64_t>> by_tier;
    for_each_uplink(b, e, [&](int tier, uint32_t row) {
        by_tier[tier].push_back(uint64_t(double(b.tx[row].tx_bytes) * 8e9 / double(b.port[row].rate_bps)));
    });
    std::vector<UplinkBusy> out;
    for (auto& [tier, busy] : by_tier) out.push_back({tier, std::move(busy)});
    return out;
}

std::vector<uint16_t> utilization_permille(const std::vector<uint64_t>& before, const std::vector<uint64_t>& now, int64_t dt_ps) {
    std::vector<uint16_t> out(now.size(), 0);
    if (dt_ps <= 0) return out;
    for (size_t i = 0; i < now.size(); ++i) {
        const uint64_t from = i < before.size() ? before[i] : 0;
        const double busy_ps = double(now[i] > from ? now[i] - from : 0) * 1e3;
        out[i] = uint16_t(std::min(1000.0, busy_ps / double(dt_ps) * 1000.0 + 0.5));
    }
    return out;
}

FabricCounters fabric_counters(const Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    FabricCounters c;
    c.lost_to_failures = x.lost_to_failures;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
        c.lost_to_failures += b.out[n].sent_into_failures;
        if (b.node_role[n] == net::kRoleSwitch) c.drops += b.sw[n].drops;
    }
    for (uint32_t f = x.flow_begin; f < x.flow_end; ++f) c.retransmits += b.recovery[f].retransmits, c.timeouts += b.recovery[f].timeouts;
    return c;
}

std::vector<TierImbalance> uplink_imbalance(const Batch& b, uint32_t e) {
    struct Load {
        double max = 0, sum = 0;
        uint32_t count = 0;
    };
    std::map<int, Load> by_tier;
    for_each_uplink(b, e, [&](int tier, uint32_t row) {
        const double load = double(b.tx[row].tx_bytes) / double(b.port[row].rate_bps);  // bytes per unit of capacity
        Load& l = by_tier[tier];
        l.max = std::max(l.max, load), l.sum += load, ++l.count;
    });
    std::vector<TierImbalance> out;
    for (const auto& [tier, l] : by_tier)
        if (l.sum > 0) out.push_back({tier, l.count, l.max / (l.sum / double(l.count))});
    return out;
}

}  // namespace orrery
