#include "topology/fabric_events.h"

#include <algorithm>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "common/splitmix.h"

namespace orrery {
namespace {

std::string event_name(FabricEventKind k, BitsPerSecond rate) {
    switch (k) {
        case FabricEventKind::down: return "down";
        case FabricEventKind::up: return "up";
        case FabricEventKind::rate: return "at " + format_rate(rate);
    }
    return "";
}

// The node `text` names: a name of `names`, or (a fabric without names, or no name matching) a node id.
NodeId find_node(const std::string& text, const Fabric& f, const std::vector<std::string>& names, const std::string& where, const std::string& field) {
    for (NodeId n = 0; n < names.size(); ++n)
        if (names[n] == text) return n;
    const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && text.size() < 10 && std::stoul(text) < f.node_count()) return NodeId(std::stoul(text));
    throw InputError(where + "." + field, names.empty() ? "no node " + text + ": the fabric's nodes are numbered 0.." + std::to_string(f.node_count() - 1)
                                                        : "no node named \"" + text + "\" in the fabric");
}

bool is_host_link(const Fabric& f, LinkId l) { return f.is_host(f.link_a[l]) || f.is_host(f.link_b[l]); }

bool is_nvlink(const Fabric& f, LinkId l) { return f.node_kind[f.link_a[l]] == NodeKind::nvswitch || f.node_kind[f.link_b[l]] == NodeKind::nvswitch; }

// The links a tier selector names, in the fabric's link order: its index-th, or `random_count` drawn without
// repetition by a counter-based hash of the seed (the same on every platform, unlike std::shuffle).
std::vector<LinkId> links_between_tiers(const FabricEventSpec& s, const Fabric& f) {
    std::vector<LinkId> tier;
    for (LinkId l = 0; l < f.link_count(); ++l) {
        if (is_nvlink(f, l)) continue;
        const int a = f.node_tier[f.link_a[l]], b = f.node_tier[f.link_b[l]];
        if ((a == s.tier_a && b == s.tier_b) || (a == s.tier_b && b == s.tier_a)) tier.push_back(l);
    }
    const std::string which = "tiers " + std::to_string(s.tier_a) + " and " + std::to_string(s.tier_b);
    if (tier.empty()) throw InputError(s.where + ".link.tiers", "no network link joins " + which + " in this fabric (tier 0: hosts, 1: leaves/ToRs, …)");
    if (s.tier_index >= 0) {
        if (size_t(s.tier_index) >= tier.size())
            throw InputError(s.where + ".link.index", "the fabric has " + std::to_string(tier.size()) + " links between " + which + " (0.." +
                                                          std::to_string(tier.size() - 1) + "), found " + std::to_string(s.tier_index));
        return {tier[size_t(s.tier_index)]};
    }
    if (size_t(s.random_count) > tier.size())
        throw InputError(s.where + ".link.random", "the fabric has " + std::to_string(tier.size()) + " links between " + which + ", fewer than " +
                                                       std::to_string(s.random_count));
    draw_front(tier, size_t(s.random_count), s.random_seed);
    tier.resize(size_t(s.random_count));
    return tier;
}

}  // namespace

std::string node_label(NodeId n, const std::vector<std::string>& names) {
    return n < names.size() && !names[n].empty() ? names[n] : std::to_string(n);
}

std::vector<FabricEvent> resolve_fabric_events(const std::vector<FabricEventSpec>& specs, const Fabric& f, const std::vector<std::string>& names) {
    std::vector<FabricEvent> out;
    for (const FabricEventSpec& s : specs) {
        FabricEvent e;
        e.at_ps = s.at.count;
        e.kind = s.kind;
        e.rate = s.rate;
        if (s.names_switch) {
            const NodeId n = find_node(s.node, f, names, s.where, "switch");
            if (f.node_kind[n] != NodeKind::network_switch)
                throw InputError(s.where + ".switch", "node " + node_label(n, names) + " is a " + node_kind_name(f.node_kind[n]) + ", not a network switch");
            for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) e.links.push_back(f.port_link[p]);
            e.what = "switch " + node_label(n, names) + " " + event_name(s.kind, s.rate);
        } else if (s.tier_a >= 0) {
            e.links = links_between_tiers(s, f);
            for (LinkId l : e.links) {
                if (s.kind == FabricEventKind::rate && is_host_link(f, l))
                    throw InputError(s.where + ".rate", "tiers " + std::to_string(s.tier_a) + " and " + std::to_string(s.tier_b) +
                                                        " include a host: a host link's rate is its NIC's line rate, which congestion control starts from");
                if (!e.what.empty()) e.what.append(", ");
                e.what.append("link ").append(std::to_string(l)).append(" (").append(node_label(f.link_a[l], names)).append(" – ");
                e.what.append(node_label(f.link_b[l], names)).append(")");
            }
            e.what.append(" ").append(event_name(s.kind, s.rate));
        } else {
            LinkId l = kNone;
            if (s.link_index >= 0) {
                if (size_t(s.link_index) >= f.link_count())
                    throw InputError(s.where + ".link", "no link " + std::to_string(s.link_index) + ": the fabric's links are numbered 0.." +
                                                            std::to_string(f.link_count() - 1));
                l = LinkId(s.link_index);
            } else {
                const NodeId a = find_node(s.end_a, f, names, s.where, "link[0]"), b = find_node(s.end_b, f, names, s.where, "link[1]");
                for (uint32_t p = f.port_begin[a]; p < f.port_begin[a + 1] && l == kNone; ++p)
                    if (f.port_peer[p] == b) l = f.port_link[p];
                if (l == kNone)
                    throw InputError(s.where + ".link", "no link joins " + node_label(a, names) + " and " + node_label(b, names));
            }
            if (is_nvlink(f, l))
                throw InputError(s.where + ".link", "link " + std::to_string(l) + " is an NVLink inside a server: events change network links");
            if (s.kind == FabricEventKind::rate && is_host_link(f, l))
                throw InputError(s.where + ".rate", "link " + std::to_string(l) + " joins a host: its rate is the NIC's line rate, which congestion "
                                                    "control starts from; degrade a link between switches");
            e.links.push_back(l);
            e.what = "link " + std::to_string(l) + " (" + node_label(f.link_a[l], names) + " – " + node_label(f.link_b[l], names) + ") " +
                     event_name(s.kind, s.rate);
        }
        e.what += " at " + format_time(s.at);
        out.push_back(std::move(e));
    }
    std::stable_sort(out.begin(), out.end(), [](const FabricEvent& a, const FabricEvent& b) { return a.at_ps < b.at_ps; });
    return out;
}

std::vector<uint8_t> links_down_after(const std::vector<FabricEvent>& events, size_t link_count, int64_t t) {
    std::vector<uint8_t> down(link_count, 0);
    for (const FabricEvent& e : events) {
        if (e.at_ps > t) break;
        if (e.kind == FabricEventKind::rate) continue;
        for (LinkId l : e.links) down[l] = e.kind == FabricEventKind::down;
    }
    return down;
}

}  // namespace orrery
