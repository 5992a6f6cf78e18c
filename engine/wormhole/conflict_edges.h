#pragma once
// The edges of a partition's flow conflict graph (memo.h): vertex i is the partition's i-th flow, and two flows
// that share ports are joined by an edge weighted by how many they share and how many of those both send data
// through (edge_weight). Counted port by port, and kept by the partition's shape, so that a shape met again is
// not counted again.
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "wormhole/memo.h"
#include "wormhole/partitions.h"

namespace orrery::wormhole {

// A partition's shape: for each of its flows in order, its ports renamed in the order the partition's flows
// first cross them, each marked whether the flow sends data through it. Pair counts are intersections of these
// sets, so partitions of one shape have the same edges: every instance of a collective step in every group
// and micro-batch (MoE 8x13B under DCQCN: 18 shapes among ~13,000 partitions counted, and the counting was 2.4 %
// of its skip-on run).
struct ConflictEdges {
    struct Known {
        std::vector<uint32_t> shape;
        std::shared_ptr<const std::vector<FlowConflictGraph::Edge>> edges;  // shared with the partitions that have this shape
    };
    std::unordered_multimap<uint64_t, Known> by_shape;  // by a hash of the shape; each compared whole
    size_t held = 0;                                    // edges and shape members over all shapes held
    // Past this many (about 50 MB), the cache starts over: a run of ever new shapes keeps it bounded.
    static constexpr size_t kMaxHeld = size_t(1) << 22;
    uint64_t hits = 0, misses = 0;
    // Scratch, by local port and by local flow.
    std::vector<uint32_t> port_name;
    std::vector<uint64_t> port_named_in;  // by local port: the shape (1, 2, ...) that named it
    uint64_t shapes_named = 0;
    std::vector<uint32_t> shape, vertex_of, data_on;
    std::vector<uint16_t> pair_ports, pair_data_ports;  // n x n
};

// The edges of partition `part` of `parts`, in (a, b) order, shared with every partition of its shape.
// flow_ports[f] and flow_data_ports[f]: local flow f's local ports, sorted: all it crosses (data and ACK paths)
// and those of its data path.
std::shared_ptr<const std::vector<FlowConflictGraph::Edge>> conflict_edges(ConflictEdges& cache, const Partitions& parts, const Partition& part,
                                                           const std::vector<std::vector<uint32_t>>& flow_ports,
                                                           const std::vector<std::vector<uint32_t>>& flow_data_ports);

}  // namespace orrery::wormhole
