#include "wormhole/conflict_edges.h"

#include <algorithm>
#include <cstring>

#include "net/ns3_arith.h"

namespace orrery::wormhole {
namespace {

// The pair counts behind the edges, port by port (each port's flows are all in this partition): comparing
// every pair's port lists was 5 % of a MoE 8x13B skip-on run (48-flow rail partitions, 1,128 pairs).
void count_edges(ConflictEdges& c, const Partitions& parts, const Partition& part, const std::vector<std::vector<uint32_t>>& flow_data_ports,
                 std::vector<FlowConflictGraph::Edge>& edges) {
    const std::vector<uint32_t>& flows = part.flows;
    const size_t n = flows.size();
    if (c.vertex_of.size() < flow_data_ports.size()) c.vertex_of.resize(flow_data_ports.size());
    for (size_t i = 0; i < n; ++i) c.vertex_of[flows[i]] = uint32_t(i);
    c.pair_ports.assign(n * n, 0);
    c.pair_data_ports.assign(n * n, 0);
    auto count_pairs = [&](const std::vector<uint32_t>& on, std::vector<uint16_t>& into) {
        for (size_t u = 0; u < on.size(); ++u)
            for (size_t w = u + 1; w < on.size(); ++w) {
                const uint32_t a = std::min(c.vertex_of[on[u]], c.vertex_of[on[w]]), b = std::max(c.vertex_of[on[u]], c.vertex_of[on[w]]);
                ++into[a * n + b];
            }
    };
    for (uint32_t port : part.ports) {
        const std::vector<uint32_t>& on = parts.flows_crossing(port);
        count_pairs(on, c.pair_ports);
        c.data_on.clear();
        for (uint32_t f : on)
            if (std::binary_search(flow_data_ports[f].begin(), flow_data_ports[f].end(), port)) c.data_on.push_back(f);
        count_pairs(c.data_on, c.pair_data_ports);
    }
    edges.clear();
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
            if (const uint16_t common = c.pair_ports[i * n + j]) edges.push_back({uint32_t(i), uint32_t(j), edge_weight(common, c.pair_data_ports[i * n + j])});
}

}  // namespace

std::shared_ptr<const std::vector<FlowConflictGraph::Edge>> conflict_edges(ConflictEdges& c, const Partitions& parts, const Partition& part,
                                                           const std::vector<std::vector<uint32_t>>& flow_ports,
                                                           const std::vector<std::vector<uint32_t>>& flow_data_ports) {
    if (c.port_name.size() < parts.port_count()) c.port_name.resize(parts.port_count()), c.port_named_in.resize(parts.port_count(), 0);
    const uint64_t named_in = ++c.shapes_named;
    uint32_t names = 0;
    c.shape.clear();
    for (uint32_t f : part.flows) {
        const std::vector<uint32_t>& all = flow_ports[f];
        const std::vector<uint32_t>& data = flow_data_ports[f];
        c.shape.push_back(uint32_t(all.size()));
        const size_t first = c.shape.size();
        size_t d = 0;  // both lists are sorted: a merge tells which ports carry the flow's data
        for (uint32_t port : all) {
            if (c.port_named_in[port] != named_in) c.port_named_in[port] = named_in, c.port_name[port] = names++;
            while (d < data.size() && data[d] < port) ++d;
            c.shape.push_back(c.port_name[port] << 1 | uint32_t(d < data.size() && data[d] == port));
        }
        std::sort(c.shape.begin() + first, c.shape.end());
    }
    uint64_t h = c.shape.size();
    for (uint32_t v : c.shape) h = (h + v) * 0x9e3779b97f4a7c15ull;
    h = net::mix64(h);
    auto [lo, hi] = c.by_shape.equal_range(h);
    for (auto it = lo; it != hi; ++it)
        if (it->second.shape.size() == c.shape.size() && std::memcmp(it->second.shape.data(), c.shape.data(), c.shape.size() * sizeof(uint32_t)) == 0) {
            ++c.hits;
            return it->second.edges;
        }
    ++c.misses;
    auto edges = std::make_shared<std::vector<FlowConflictGraph::Edge>>();
    count_edges(c, parts, part, flow_data_ports, *edges);
    const size_t size = edges->size() + c.shape.size() + 8;
    if (c.held + size > ConflictEdges::kMaxHeld) {
        c.by_shape.clear();  // partitions keep the edges they were given
        c.held = 0;
    }
    c.held += size;
    c.by_shape.emplace(h, ConflictEdges::Known{c.shape, edges});
    return edges;
}

}  // namespace orrery::wormhole
