#pragma once
// A flow spread over its equal-cost paths: what spraying, adaptive routing and flowlets look like to the flow
// level (workload/flow_mode.h), where packets are not followed one by one.
#include <utility>
#include <vector>

#include "topology/routing.h"

namespace orrery {

// The share of a flow's bytes each port carries (global port index, share) when every node splits what reaches
// it evenly over its equal-cost next hops, or by the routing's weights (routing.weights "capacity"). Every next
// hop is one nearer the destination, so the nodes are taken layer by layer and each port appears once. Empty
// when dst cannot be reached.
void path_split(const Fabric& f, const Routes& r, NodeId src, NodeId dst, std::vector<std::pair<uint32_t, double>>& out);

}  // namespace orrery
