#include "io/fabric_json.h"

#include "common/quantity.h"
#include "io/graph_formats.h"

namespace orrery {

nlohmann::json fabric_to_topology_json(const Fabric& f) {
    nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array();
    for (NodeId n = 0; n < f.node_count(); ++n) {
        nlohmann::json node = {{"name", default_node_name(f, n)}, {"kind", node_kind_name(f.node_kind[n])}, {"tier", f.node_tier[n]}};
        if (f.node_server[n] >= 0) node["server"] = f.node_server[n];
        if (f.node_group[n] >= 0) node["group"] = f.node_group[n];
        nodes.push_back(node);
    }
    for (LinkId l = 0; l < f.link_count(); ++l) {
        nlohmann::json link = {{"a", default_node_name(f, f.link_a[l])}, {"b", default_node_name(f, f.link_b[l])},
                               {"rate", format_rate(f.link_rate[l])}, {"delay", format_time(f.link_delay[l])}};
        if (f.link_error_rate[l] != 0) link["error_rate"] = f.link_error_rate[l];
        links.push_back(link);
    }
    nlohmann::json out = {{"nodes", nodes}, {"links", links}};
    if (f.gpus_per_server > 0) out["gpus_per_server"] = f.gpus_per_server;
    if (!f.gpu_type.empty()) out["gpu_type"] = f.gpu_type;
    if (f.hosts_forward) out["hosts_forward"] = true;
    return out;
}

}  // namespace orrery
