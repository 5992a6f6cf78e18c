#include "io/hpcc_topology.h"

#include <set>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "io/token_stream.h"
#include "scenario/load.h"

namespace orrery {

Fabric read_hpcc_topology(const std::string& text, const std::string& source) {
    const std::string first_line = text.substr(0, text.find('\n'));
    const size_t header_fields = count_tokens(first_line);
    if (header_fields != 3 && header_fields != 6)
        throw InputError(source + ":1", "expected the header \"nodes switches links\" (HPCC) or \"nodes gpus_per_server nvswitches "
                                        "switches links gpu_type\" (SimAI), found " + std::to_string(header_fields) + " fields");
    const bool simai = header_fields == 6;
    TokenStream in(text, source);
    Fabric f;
    f.name = source;
    const uint64_t nodes = in.unsigned_integer("the node count", 1 << 24);
    uint64_t nvswitches = 0;
    if (simai) f.gpus_per_server = int(in.unsigned_integer("gpus_per_server", 4096));
    if (simai) nvswitches = in.unsigned_integer("the NVSwitch count", nodes);
    const uint64_t switches = in.unsigned_integer("the switch count", nodes);
    const uint64_t links = in.unsigned_integer("the link count", 1 << 26);
    if (simai) f.gpu_type = in.word("the GPU type");
    f.nvlink_rate_is_bus_bandwidth = simai;
    if (nodes == 0) in.fail("a topology needs at least one node, found 0");
    if (nvswitches + switches > nodes)
        in.fail(std::to_string(nvswitches + switches) + " switches listed for only " + std::to_string(nodes) + " nodes");
    std::vector<NodeKind> kind(nodes, NodeKind::host);
    std::set<uint64_t> seen;
    for (uint64_t i = 0; i < nvswitches + switches; ++i) {
        const bool nv = i < nvswitches;
        uint64_t id = in.unsigned_integer(nv ? "an NVSwitch node id" : "a switch node id", UINT32_MAX);
        if (id >= nodes) in.fail("switch id " + std::to_string(id) + " is not below the node count " + std::to_string(nodes));
        if (!seen.insert(id).second) in.fail("switch id " + std::to_string(id) + " is listed twice");
        kind[id] = nv ? NodeKind::nvswitch : NodeKind::network_switch;
    }
    for (uint64_t i = 0; i < nodes; ++i) add_node(f, kind[i], 0);
    for (uint64_t l = 0; l < links; ++l) {
        const std::string ordinal = "link " + std::to_string(l + 1) + " of " + std::to_string(links);
        uint64_t a = in.unsigned_integer("the first node of " + ordinal, UINT32_MAX);
        uint64_t b = in.unsigned_integer("the second node of " + ordinal, UINT32_MAX);
        if (a >= nodes || b >= nodes)
            in.fail("node " + std::to_string(std::max(a, b)) + " of " + ordinal + " is not below the node count " + std::to_string(nodes));
        if (a == b) in.fail(ordinal + " joins node " + std::to_string(a) + " to itself");
        std::string rate_text = in.word("the rate of " + ordinal);
        std::string why;
        auto rate = parse_rate(rate_text, &why);
        if (!rate || rate->count <= 0) in.fail("bad rate \"" + rate_text + "\" in " + ordinal + (why.empty() ? ": must be positive" : ": " + why));
        std::string delay_text = in.word("the delay of " + ordinal);
        auto delay = parse_time(delay_text, true, &why);
        if (!delay) in.fail("bad delay \"" + delay_text + "\" in " + ordinal + ": " + why);
        double err = in.number("the error rate of " + ordinal);
        if (err < 0 || err > 1) in.fail("error rate " + std::to_string(err) + " of " + ordinal + " is not a probability in [0, 1]");
        add_link(f, NodeId(a), NodeId(b), *rate, *delay, err);
    }
    if (!in.at_end())
        in.fail("unexpected content after the " + std::to_string(links) + " links the header announces: \"" + in.word("") + "\"");
    finalize_ports(f);
    infer_tiers(f);
    if (simai && f.gpus_per_server > 0) {
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.node_kind[n] == NodeKind::nvswitch)
                for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) {
                    NodeId gpu = f.port_peer[p];
                    if (f.node_kind[gpu] != NodeKind::host) continue;
                    if (f.node_server[n] < 0) f.node_server[n] = int32_t(gpu / f.gpus_per_server);
                    f.node_server[gpu] = f.node_server[n];
                }
    }
    for (const std::string& problem : check_fabric(f)) throw InputError(source, problem);
    return f;
}

Fabric read_hpcc_topology_file(const std::filesystem::path& file) {
    return read_hpcc_topology(read_text_file(file), file.string());
}

namespace {
std::string hpcc_delay(Picoseconds d) {
    return d.count % 1000 == 0 ? std::to_string(d.count / 1000) + "ns" : std::to_string(d.count) + "ps";
}
std::string hpcc_error_rate(double e) {
    if (e == 0) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", e);
    return buf;
}
}  // namespace

std::string write_hpcc_topology(const Fabric& f) {
    const size_t nv = f.count(NodeKind::nvswitch), sw = f.count(NodeKind::network_switch);
    std::string out;
    if (nv > 0) {
        out += std::to_string(f.node_count()) + " " + std::to_string(f.gpus_per_server) + " " + std::to_string(nv) + " " +
               std::to_string(sw) + " " + std::to_string(f.link_count()) + " " + (f.gpu_type.empty() ? "none" : f.gpu_type) + "\n";
    } else {
        out += std::to_string(f.node_count()) + " " + std::to_string(sw) + " " + std::to_string(f.link_count()) + "\n";
    }
    std::string ids;
    for (NodeKind k : {NodeKind::nvswitch, NodeKind::network_switch})
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.node_kind[n] == k) {
                if (!ids.empty()) ids += ' ';
                ids += std::to_string(n);
            }
    out += ids + "\n";
    for (LinkId l = 0; l < f.link_count(); ++l)
        out += std::to_string(f.link_a[l]) + " " + std::to_string(f.link_b[l]) + " " + format_rate(f.link_rate[l]) + " " +
               hpcc_delay(f.link_delay[l]) + " " + hpcc_error_rate(f.link_error_rate[l]) + "\n";
    return out;
}

}  // namespace orrery
