#include "topology/generators.h"

#include <stdexcept>
#include <string>

namespace orrery {
namespace {

void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("generator parameters not validated: ") + what);
}

// Hosts first (server-major when there are servers), then one NVSwitch per server.
NodeId add_hosts(Fabric& f, int hosts, const NvlinkDomain& nv) {
    const int per_server = nv.gpus_per_server;
    for (int h = 0; h < hosts; ++h) add_node(f, NodeKind::host, 0, per_server > 0 ? h / per_server : -1);
    if (per_server > 0) {
        f.gpus_per_server = per_server;
        const int servers = hosts / per_server;
        NodeId first_nvswitch = static_cast<NodeId>(f.node_count());
        for (int s = 0; s < servers; ++s) add_node(f, NodeKind::nvswitch, 0, s);
        for (int h = 0; h < hosts; ++h) add_link(f, h, first_nvswitch + h / per_server, nv.link.rate, nv.link.delay);
    }
    return 0;
}

void link(Fabric& f, NodeId a, NodeId b, const LinkClass& c) { add_link(f, a, b, c.rate, c.delay); }

}  // namespace

ThreeTierParams fat_tree(int k, LinkClass host, LinkClass tier1, LinkClass tier2) {
    ThreeTierParams p;
    p.pods = k;
    p.tors_per_pod = p.aggs_per_pod = p.hosts_per_tor = k / 2;
    p.cores = (k / 2) * (k / 2);
    p.host = host;
    p.tier1 = tier1;
    p.tier2 = tier2;
    return p;
}

Fabric generate(const ThreeTierParams& p) {
    require(p.pods > 0 && p.tors_per_pod > 0 && p.aggs_per_pod > 0 && p.hosts_per_tor > 0, "three-tier sizes");
    require(p.cores > 0 && p.cores % p.aggs_per_pod == 0, "cores divisible by aggs_per_pod");
    Fabric f;
    const int hosts = p.pods * p.tors_per_pod * p.hosts_per_tor;
    add_hosts(f, hosts, p.nvlink);
    const NodeId tor0 = static_cast<NodeId>(f.node_count());
    for (int pod = 0; pod < p.pods; ++pod)
        for (int t = 0; t < p.tors_per_pod; ++t) add_node(f, NodeKind::network_switch, 1, -1, pod);
    const NodeId agg0 = static_cast<NodeId>(f.node_count());
    for (int pod = 0; pod < p.pods; ++pod)
        for (int a = 0; a < p.aggs_per_pod; ++a) add_node(f, NodeKind::network_switch, 2, -1, pod);
    const NodeId core0 = static_cast<NodeId>(f.node_count());
    for (int c = 0; c < p.cores; ++c) add_node(f, NodeKind::network_switch, 3);
    for (int h = 0; h < hosts; ++h) f.node_group[h] = h / (p.tors_per_pod * p.hosts_per_tor);
    const int cores_per_agg = p.cores / p.aggs_per_pod;
    for (int pod = 0; pod < p.pods; ++pod) {
        for (int t = 0; t < p.tors_per_pod; ++t) {
            const NodeId tor = tor0 + pod * p.tors_per_pod + t;
            for (int j = 0; j < p.hosts_per_tor; ++j)
                link(f, (pod * p.tors_per_pod + t) * p.hosts_per_tor + j, tor, p.host);
            for (int a = 0; a < p.aggs_per_pod; ++a) link(f, tor, agg0 + pod * p.aggs_per_pod + a, p.tier1);
        }
        for (int a = 0; a < p.aggs_per_pod; ++a)
            for (int c = 0; c < cores_per_agg; ++c)
                link(f, agg0 + pod * p.aggs_per_pod + a, core0 + a * cores_per_agg + c, p.tier2);
    }
    finalize_ports(f);
    return f;
}

Fabric generate(const RailOptimizedParams& p) {
    require(p.gpus > 0 && p.gpus_per_server > 0 && p.gpus % p.gpus_per_server == 0, "gpus per server");
    const int servers = p.gpus / p.gpus_per_server;
    const int servers_per_pod = p.tiers == 3 ? p.servers_per_pod : servers;
    require(p.hosts_per_leaf > 0 && servers_per_pod % p.hosts_per_leaf == 0, "hosts per leaf");
    require(servers % servers_per_pod == 0 && p.spines_per_pod > 0, "pods");
    const int pods = servers / servers_per_pod;
    const int rails = p.gpus_per_server;
    const int leaves_per_rail = servers_per_pod / p.hosts_per_leaf;
    const int leaves_per_pod = rails * leaves_per_rail;
    Fabric f;
    NvlinkDomain nv = p.nvlink;
    add_hosts(f, p.gpus, nv);
    const NodeId leaf0 = static_cast<NodeId>(f.node_count());
    for (int pod = 0; pod < pods; ++pod)
        for (int l = 0; l < leaves_per_pod; ++l) add_node(f, NodeKind::network_switch, 1, -1, pod);
    const NodeId spine0 = static_cast<NodeId>(f.node_count());
    for (int pod = 0; pod < pods; ++pod)
        for (int s = 0; s < p.spines_per_pod; ++s) add_node(f, NodeKind::network_switch, 2, -1, pod);
    const NodeId core0 = static_cast<NodeId>(f.node_count());
    if (p.tiers == 3)
        for (int c = 0; c < p.spines_per_pod * leaves_per_pod; ++c) add_node(f, NodeKind::network_switch, 3);
    for (int h = 0; h < p.gpus; ++h) f.node_group[h] = (h / p.gpus_per_server) / servers_per_pod;
    for (int pod = 0; pod < pods; ++pod) {
        for (int rail = 0; rail < rails; ++rail)
            for (int l = 0; l < leaves_per_rail; ++l) {
                const NodeId leaf = leaf0 + pod * leaves_per_pod + rail * leaves_per_rail + l;
                for (int j = 0; j < p.hosts_per_leaf; ++j) {
                    const int server = pod * servers_per_pod + l * p.hosts_per_leaf + j;
                    link(f, server * p.gpus_per_server + rail, leaf, p.host);
                }
                for (int s = 0; s < p.spines_per_pod; ++s) link(f, leaf, spine0 + pod * p.spines_per_pod + s, p.tier1);
            }
        if (p.tiers == 3)
            for (int s = 0; s < p.spines_per_pod; ++s)
                for (int c = 0; c < leaves_per_pod; ++c)
                    link(f, spine0 + pod * p.spines_per_pod + s, core0 + s * leaves_per_pod + c, p.tier2);
    }
    finalize_ports(f);
    return f;
}

Fabric generate(const LeafSpineParams& p) {
    require(p.leaves > 0 && p.spines > 0 && p.hosts_per_leaf > 0 && p.links_per_spine > 0, "leaf-spine sizes");
    Fabric f;
    add_hosts(f, p.leaves * p.hosts_per_leaf, p.nvlink);
    const NodeId leaf0 = static_cast<NodeId>(f.node_count());
    for (int l = 0; l < p.leaves; ++l) add_node(f, NodeKind::network_switch, 1);
    const NodeId spine0 = static_cast<NodeId>(f.node_count());
    for (int s = 0; s < p.spines; ++s) add_node(f, NodeKind::network_switch, 2);
    for (int l = 0; l < p.leaves; ++l) {
        for (int j = 0; j < p.hosts_per_leaf; ++j) link(f, l * p.hosts_per_leaf + j, leaf0 + l, p.host);
        for (int s = 0; s < p.spines; ++s)
            for (int r = 0; r < p.links_per_spine; ++r) link(f, leaf0 + l, spine0 + s, p.tier1);
    }
    finalize_ports(f);
    return f;
}

Fabric generate(const SingleSwitchParams& p) {
    require(p.hosts > 0, "hosts");
    Fabric f;
    add_hosts(f, p.hosts, p.nvlink);
    const NodeId sw = add_node(f, NodeKind::network_switch, 1);
    for (int h = 0; h < p.hosts; ++h) link(f, h, sw, p.host);
    finalize_ports(f);
    return f;
}

}  // namespace orrery
