// plan_partition (partition.h): racks in locality order cut into contiguous runs of equal weight, then the
// switches without hosts placed by their neighbours, nearest to the racks first.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "runtime/partition.h"

namespace orrery {

using namespace net;

PartitionPlan plan_partition(const Batch& b, int ranks) {
    if (ranks < 1 || ranks > 65535) throw std::invalid_argument("a partitioned run takes 1 to 65535 ranks, not " + std::to_string(ranks));
    PartitionPlan plan;
    plan.ranks = ranks;
    const uint32_t node_count = uint32_t(b.node_role.size());
    plan.owner.assign(node_count, 0);
    plan.weight.assign(size_t(ranks), 0);
    constexpr uint16_t kUnassigned = 0xffff;
    auto weight = [&](uint32_t n) { return uint64_t(1 + b.node_port_begin[n + 1] - b.node_port_begin[n]); };
    auto neighbours = [&](uint32_t n, auto visit) {
        for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) visit(b.port[b.port[row].peer_port].node);
    };
    for (const ExperimentSlice& x : b.experiments) {
        const std::vector<uint32_t> order = locality_order(b, x.node_begin, x.node_end);
        // Racks: a switch followed in `order` by its hosts, or a host wired to a host; switches without hosts are free.
        std::vector<std::vector<uint32_t>> racks;
        std::vector<uint32_t> free_switches;
        for (size_t i = 0; i < order.size(); ++i) {
            const uint32_t n = order[i];
            const bool host_follows = i + 1 < order.size() && b.node_role[order[i + 1]] == kRoleHost;
            if (b.node_role[n] == kRoleHost) {
                if (!racks.empty() && b.node_role[racks.back().front()] != kRoleHost) racks.back().push_back(n);
                else racks.push_back({n});
            } else if (host_follows) {
                racks.push_back({n});
            } else {
                free_switches.push_back(n);
            }
        }
        uint64_t total = 0, in_racks = 0;
        for (uint32_t n : order) total += weight(n);
        for (const auto& rack : racks)
            for (uint32_t n : rack) in_racks += weight(n);
        std::vector<uint64_t> load(size_t(ranks), 0);
        std::vector<uint16_t> owner(x.node_end - x.node_begin, kUnassigned);
        uint64_t before = 0;
        for (const auto& rack : racks) {
            uint64_t w = 0;
            for (uint32_t n : rack) w += weight(n);
            // The rack's middle decides its rank, so runs of racks split evenly by weight.
            const int r = int(std::min<uint64_t>(uint64_t(ranks - 1), (2 * before + w) * uint64_t(ranks) / (2 * std::max<uint64_t>(1, in_racks))));
            for (uint32_t n : rack) owner[n - x.node_begin] = uint16_t(r);
            load[size_t(r)] += w;
            before += w;
        }
        // Free switches, nearest to the racks first (aggregation before core): each to the rank with most
        // links to it, unless that rank is already over its share.
        const uint64_t share = total / uint64_t(ranks) + 1;
        std::vector<uint32_t> pending = free_switches;
        while (!pending.empty()) {
            std::vector<uint32_t> later;
            bool placed = false;
            for (uint32_t n : pending) {
                std::vector<uint32_t> links(size_t(ranks), 0);
                bool touches = false;
                neighbours(n, [&](uint32_t m) {
                    const uint16_t o = owner[m - x.node_begin];
                    if (o != kUnassigned) ++links[o], touches = true;
                });
                if (!touches) {
                    later.push_back(n);
                    continue;
                }
                int best = -1;
                for (int r = 0; r < ranks; ++r) {
                    const size_t i = size_t(r);
                    if (links[i] == 0 || load[i] + weight(n) > share) continue;
                    if (best < 0 || links[i] > links[size_t(best)] || (links[i] == links[size_t(best)] && load[i] < load[size_t(best)])) best = r;
                }
                if (best < 0) best = int(std::min_element(load.begin(), load.end()) - load.begin());
                owner[n - x.node_begin] = uint16_t(best);
                load[size_t(best)] += weight(n);
                placed = true;
            }
            if (!placed) {  // none touches a placed node (a fabric without hosts): seed the least loaded rank
                const int r = int(std::min_element(load.begin(), load.end()) - load.begin());
                owner[later.front() - x.node_begin] = uint16_t(r);
                load[size_t(r)] += weight(later.front());
                later.erase(later.begin());
            }
            pending = std::move(later);
        }
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) plan.owner[n] = owner[n - x.node_begin];
        for (int r = 0; r < ranks; ++r) plan.weight[size_t(r)] += load[size_t(r)];
    }
    return plan;
}

}  // namespace orrery
