#include "telemetry/samples.h"

#include <algorithm>
#include <map>

namespace orrery {

SampleSet take_samples(const Batch& b, uint32_t e, bool queues, bool rates) {
    SampleSet s;
    const ExperimentSlice& x = b.experiments[e];
    if (queues) {
        std::map<int, std::vector<uint64_t>> by_tier;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            if (b.node_role[n] != net::kRoleSwitch) continue;
            const int tier = x.fabric->node_tier[b.node_fabric_id[n]];
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                const uint64_t bytes = net::egress_bytes_total(b.mmu[row]);
                by_tier[tier].push_back(bytes);
                if (bytes) s.queues.push_back({b.node_fabric_id[n], uint32_t(b.port[row].local + 1), bytes});
            }
        }
        for (auto& [tier, values] : by_tier) {
            // Nearest-rank percentiles over the tier's ports.
            std::sort(values.begin(), values.end());
            auto rank = [&](double p) { return values[std::min(values.size() - 1, size_t(p * double(values.size() - 1) + 0.5))]; };
            s.tiers.push_back({tier, values.back(), rank(0.99), rank(0.5), uint32_t(values.size())});
        }
    }
    if (rates)
        for (uint32_t f = x.flow_begin; f < x.flow_end; ++f)
            if (b.qp[f].phase == net::kActive) s.rates.push_back({f - x.flow_begin, b.qp[f].rate});
    return s;
}

}  // namespace orrery
