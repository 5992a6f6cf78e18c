#include "topology/fabric.h"

#include <algorithm>
#include <map>

namespace orrery {

const char* node_kind_name(NodeKind kind) {
    switch (kind) {
        case NodeKind::host: return "host";
        case NodeKind::network_switch: return "switch";
        case NodeKind::nvswitch: return "nvswitch";
    }
    return "?";
}

size_t Fabric::count(NodeKind kind) const { return std::count(node_kind.begin(), node_kind.end(), kind); }

NodeId add_node(Fabric& f, NodeKind kind, uint8_t tier, int32_t server, int32_t group) {
    f.node_kind.push_back(kind);
    f.node_tier.push_back(tier);
    f.node_server.push_back(server);
    f.node_group.push_back(group);
    return static_cast<NodeId>(f.node_kind.size() - 1);
}

LinkId add_link(Fabric& f, NodeId a, NodeId b, BitsPerSecond rate, Picoseconds delay, double error_rate) {
    f.link_a.push_back(a);
    f.link_b.push_back(b);
    f.link_rate.push_back(rate);
    f.link_delay.push_back(delay);
    f.link_error_rate.push_back(error_rate);
    return static_cast<LinkId>(f.link_a.size() - 1);
}

void finalize_ports(Fabric& f) {
    const size_t n = f.node_count();
    f.port_begin.assign(n + 1, 0);
    for (size_t l = 0; l < f.link_count(); ++l) {
        ++f.port_begin[f.link_a[l] + 1];
        ++f.port_begin[f.link_b[l] + 1];
    }
    for (size_t i = 0; i < n; ++i) f.port_begin[i + 1] += f.port_begin[i];
    f.port_link.assign(f.port_begin[n], kNone);
    f.port_peer.assign(f.port_begin[n], kNone);
    std::vector<uint32_t> next(f.port_begin.begin(), f.port_begin.end() - 1);
    // Walking links in order gives every node its ports in link order, as the reference numbers them.
    for (size_t l = 0; l < f.link_count(); ++l) {
        NodeId a = f.link_a[l], b = f.link_b[l];
        f.port_link[next[a]] = static_cast<LinkId>(l);
        f.port_peer[next[a]++] = b;
        f.port_link[next[b]] = static_cast<LinkId>(l);
        f.port_peer[next[b]++] = a;
    }
}

void infer_tiers(Fabric& f) {
    std::vector<uint32_t> frontier, next;
    std::vector<uint8_t> distance(f.node_count(), 0xff);
    for (NodeId n = 0; n < f.node_count(); ++n)
        if (f.node_kind[n] == NodeKind::host) {
            distance[n] = 0;
            frontier.push_back(n);
        }
    for (uint8_t d = 1; !frontier.empty() && d < 0xff; ++d) {
        next.clear();
        for (NodeId n : frontier)
            for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) {
                NodeId peer = f.port_peer[p];
                if (distance[peer] != 0xff || f.node_kind[peer] != NodeKind::network_switch) continue;
                distance[peer] = d;
                next.push_back(peer);
            }
        frontier.swap(next);
    }
    for (NodeId n = 0; n < f.node_count(); ++n)
        if (f.node_kind[n] == NodeKind::network_switch) f.node_tier[n] = distance[n] == 0xff ? 0 : distance[n];
}

std::vector<std::string> check_fabric(const Fabric& f) {
    std::vector<std::string> problems;
    const size_t n = f.node_count();
    for (size_t l = 0; l < f.link_count(); ++l) {
        std::string name = "link " + std::to_string(l) + " (" + std::to_string(f.link_a[l]) + "-" + std::to_string(f.link_b[l]) + ")";
        if (f.link_a[l] >= n || f.link_b[l] >= n) {
            problems.push_back(name + ": names a node that does not exist (the fabric has " + std::to_string(n) + " nodes)");
            continue;
        }
        if (f.link_a[l] == f.link_b[l]) problems.push_back(name + ": connects a node to itself");
        if (f.link_rate[l].count <= 0) problems.push_back(name + ": rate must be positive");
        if (f.link_delay[l].count < 0) problems.push_back(name + ": delay must not be negative");
        if (!(f.link_error_rate[l] >= 0.0 && f.link_error_rate[l] <= 1.0))
            problems.push_back(name + ": error rate must be a probability in [0, 1]");
    }
    if (!problems.empty() || f.port_begin.size() != n + 1) return problems;
    for (NodeId i = 0; i < n; ++i)
        if (f.node_kind[i] == NodeKind::host && f.port_count(i) == 0)
            problems.push_back("node " + std::to_string(i) + " is a host without any link");
    // A server whose GPUs are linked to the network only in part: the others reach nothing but NVLink, and
    // the first flow of theirs would stop the run. (A server with no network link at all is a job of one
    // server, which is fine.)
    std::map<int32_t, std::pair<std::vector<NodeId>, std::vector<NodeId>>> servers;  // server -> (linked, unlinked) GPUs
    for (NodeId i = 0; i < n; ++i) {
        if (f.node_kind[i] != NodeKind::host || f.node_server.size() != n || f.node_server[i] < 0) continue;
        bool network = false;
        for (uint32_t p = f.port_begin[i]; p < f.port_begin[i + 1]; ++p) network |= f.node_kind[f.port_peer[p]] != NodeKind::nvswitch;
        auto& [linked, unlinked] = servers[f.node_server[i]];
        (network ? linked : unlinked).push_back(i);
    }
    for (const auto& [server, gpus] : servers) {
        const auto& [linked, unlinked] = gpus;
        if (linked.empty() || unlinked.empty()) continue;
        std::string list;
        for (size_t k = 0; k < unlinked.size(); ++k) list += (k ? ", " : "") + std::to_string(unlinked[k]);
        problems.push_back("server " + std::to_string(server) + ": " + std::to_string(unlinked.size()) + " of its " +
                           std::to_string(linked.size() + unlinked.size()) + " GPUs have no network link (nodes " + list +
                           "): link every NIC of the server to a switch (a GPU reaches the network through its own NIC)");
    }
    return problems;
}

}  // namespace orrery
