#include "io/graph_formats.h"

#include "common/nesting.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/dynamic_property_map.hpp>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "scenario/load.h"

namespace orrery {
namespace {

struct VertexData {
    std::string name, kind;
    int tier = 0, server = -1, group = -1;
    int index = -1;  // node id: the readers number vertices in their own order
};
struct EdgeData {
    std::string rate, delay;
    double error_rate = 0;
    int link = -1;
};
struct GraphData {
    int gpus_per_server = 0;
    std::string gpu_type;
    int hosts_forward = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexData, EdgeData, GraphData>;

void register_properties(Graph& g, boost::dynamic_properties& dp, bool with_name) {
    if (with_name) dp.property("node_id", boost::get(&VertexData::name, g));
    dp.property("name", boost::get(&VertexData::name, g));
    dp.property("kind", boost::get(&VertexData::kind, g));
    dp.property("tier", boost::get(&VertexData::tier, g));
    dp.property("server", boost::get(&VertexData::server, g));
    dp.property("group", boost::get(&VertexData::group, g));
    dp.property("index", boost::get(&VertexData::index, g));
    dp.property("rate", boost::get(&EdgeData::rate, g));
    dp.property("delay", boost::get(&EdgeData::delay, g));
    dp.property("error_rate", boost::get(&EdgeData::error_rate, g));
    dp.property("link", boost::get(&EdgeData::link, g));
    dp.property("gpus_per_server", boost::ref_property_map<Graph*, int>(g[boost::graph_bundle].gpus_per_server));
    dp.property("gpu_type", boost::ref_property_map<Graph*, std::string>(g[boost::graph_bundle].gpu_type));
    dp.property("hosts_forward", boost::ref_property_map<Graph*, int>(g[boost::graph_bundle].hosts_forward));
}

Graph to_graph(const Fabric& f) {
    Graph g(f.node_count());
    for (NodeId n = 0; n < f.node_count(); ++n)
        g[n] = {default_node_name(f, n), node_kind_name(f.node_kind[n]), f.node_tier[n], f.node_server[n], f.node_group[n], int(n)};
    for (LinkId l = 0; l < f.link_count(); ++l)
        boost::add_edge(f.link_a[l], f.link_b[l],
                        EdgeData{format_rate(f.link_rate[l]), format_time(f.link_delay[l]), f.link_error_rate[l], int(l)}, g);
    g[boost::graph_bundle] = {f.gpus_per_server, f.gpu_type, f.hosts_forward ? 1 : 0};
    return g;
}

Fabric from_graph(const Graph& g, const std::string& source) {
    Fabric f;
    f.name = source;
    const GraphData& gd = g[boost::graph_bundle];
    f.gpus_per_server = gd.gpus_per_server;
    f.gpu_type = gd.gpu_type;
    f.hosts_forward = gd.hosts_forward != 0;
    // Node ids: the recorded index when every node has a distinct one, else the reader's order.
    const size_t count = boost::num_vertices(g);
    std::vector<size_t> id_of(count), vertex_of(count);
    bool indexed = true;
    std::vector<bool> taken(count, false);
    for (size_t v = 0; v < count; ++v) {
        const int i = g[v].index;
        if (i < 0 || size_t(i) >= count || taken[i]) indexed = false;
        else taken[i] = true;
    }
    for (size_t v = 0; v < count; ++v) {
        id_of[v] = indexed ? size_t(g[v].index) : v;
        vertex_of[id_of[v]] = v;
    }
    for (size_t id = 0; id < count; ++id) {
        const size_t v = vertex_of[id];
        const VertexData& d = g[v];
        NodeKind kind;
        if (d.kind == "host") kind = NodeKind::host;
        else if (d.kind == "switch") kind = NodeKind::network_switch;
        else if (d.kind == "nvswitch") kind = NodeKind::nvswitch;
        else throw InputError(source + ": node " + (d.name.empty() ? std::to_string(v) : "\"" + d.name + "\""),
                              "attribute kind must be host, switch or nvswitch, found \"" + d.kind + "\"");
        if (d.tier < 0 || d.tier > 7) throw InputError(source + ": node \"" + d.name + "\"", "tier must be 0..7, found " + std::to_string(d.tier));
        add_node(f, kind, uint8_t(d.tier), d.server, d.group);
    }
    struct Edge {
        int link;
        size_t order;
        NodeId a, b;
        EdgeData data;
    };
    std::vector<Edge> edges;
    for (auto [it, end] = boost::edges(g); it != end; ++it)
        edges.push_back({g[*it].link, edges.size(), NodeId(id_of[boost::source(*it, g)]), NodeId(id_of[boost::target(*it, g)]), g[*it]});
    // Links keep their recorded order (it numbers the ports); links without an index follow in file order.
    std::stable_sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        if ((x.link < 0) != (y.link < 0)) return x.link >= 0;
        return x.link < y.link;
    });
    for (const Edge& e : edges) {
        const std::string where = source + ": link " + std::to_string(e.link >= 0 ? e.link : int(e.order)) + " (" + g[vertex_of[e.a]].name + " - " + g[vertex_of[e.b]].name + ")";
        std::string why;
        auto rate = parse_rate(e.data.rate, &why);
        if (!rate || rate->count <= 0) throw InputError(where, "attribute rate must be a rate like \"100Gbps\", found \"" + e.data.rate + "\"" + (why.empty() ? "" : ": " + why));
        auto delay = parse_time(e.data.delay, false, &why);
        if (!delay) throw InputError(where, "attribute delay must be a time like \"1us\", found \"" + e.data.delay + "\": " + why);
        add_link(f, e.a, e.b, *rate, *delay, e.data.error_rate);
    }
    finalize_ports(f);
    for (const std::string& problem : check_fabric(f)) throw InputError(source, problem);
    return f;
}

}  // namespace

std::string default_node_name(const Fabric& f, NodeId n) {
    switch (f.node_kind[n]) {
        case NodeKind::host: return "h" + std::to_string(n);
        case NodeKind::network_switch: return "s" + std::to_string(n);
        case NodeKind::nvswitch: return "nv" + std::to_string(n);
    }
    return std::to_string(n);
}

std::string write_graphml(const Fabric& f) {
    Graph g = to_graph(f);
    boost::dynamic_properties dp;
    register_properties(g, dp, false);
    std::ostringstream out;
    boost::write_graphml(out, g, dp, true);
    return out.str();
}

std::string write_dot(const Fabric& f) {
    Graph g = to_graph(f);
    boost::dynamic_properties dp;
    register_properties(g, dp, true);
    std::ostringstream out;
    boost::write_graphviz_dp(out, g, dp, "node_id");
    return out.str();
}

Fabric read_graphml(const std::string& text, const std::string& source) {
    Graph g;
    boost::dynamic_properties dp(boost::ignore_other_properties);
    register_properties(g, dp, false);
    if (const auto deep = xml_too_deep(text)) throw InputError(source + ":" + std::to_string(deep->line), too_deep_message("GraphML"));
    std::istringstream in(text);
    try {
        boost::read_graphml(in, g, dp);
    } catch (const std::exception& e) {
        throw InputError(source, std::string("not a readable GraphML fabric: ") + e.what());
    }
    return from_graph(g, source);
}

Fabric read_dot(const std::string& text, const std::string& source) {
    Graph g;
    boost::dynamic_properties dp(boost::ignore_other_properties);
    register_properties(g, dp, true);
    if (const auto deep = braces_too_deep(text)) throw InputError(source + ":" + std::to_string(deep->line), too_deep_message("DOT file"));
    try {
        if (!boost::read_graphviz(text, g, dp, "node_id")) throw std::runtime_error("the reader gave up");
    } catch (const std::exception& e) {
        throw InputError(source, std::string("not a readable DOT fabric: ") + e.what());
    }
    return from_graph(g, source);
}

Fabric read_graphml_file(const std::filesystem::path& file) { return read_graphml(read_text_file(file), file.string()); }
Fabric read_dot_file(const std::filesystem::path& file) { return read_dot(read_text_file(file), file.string()); }

}  // namespace orrery
