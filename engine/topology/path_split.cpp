#include "topology/path_split.h"

#include <map>

namespace orrery {

void path_split(const Fabric& f, const Routes& r, NodeId src, NodeId dst, std::vector<std::pair<uint32_t, double>>& out) {
    out.clear();
    std::map<NodeId, double> layer{{src, 1.0}}, next;
    std::vector<uint32_t> candidates;
    for (size_t hops = 0; !layer.empty() && hops <= f.node_count(); ++hops) {
        next.clear();
        for (const auto& [node, share] : layer) {
            if (node == dst) continue;
            next_hops(f, r, node, dst, candidates);
            if (candidates.empty()) {
                out.clear();
                return;
            }
            const uint32_t* weights = next_hop_weights(r, node, dst);
            double total = 0;
            for (size_t i = 0; i < candidates.size(); ++i) total += weights ? weights[i] : 1.0;
            for (size_t i = 0; i < candidates.size(); ++i) {
                const double part = share * (weights ? weights[i] : 1.0) / total;
                const uint32_t port = f.port_begin[node] + candidates[i];
                out.emplace_back(port, part);
                next[f.port_peer[port]] += part;
            }
        }
        layer.swap(next);
    }
}

}  // namespace orrery
