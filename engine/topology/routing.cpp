#include "topology/routing.h"

#include "common/memory_budget.h"

#include <algorithm>
#include <exception>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "topology/ecmp_hash.h"

namespace orrery {
namespace {

bool forwards(const Fabric& f, NodeId n) {
    return f.node_kind[n] == NodeKind::network_switch || (f.hosts_forward && f.node_kind[n] == NodeKind::host);
}

bool network_peer(const Fabric& f, NodeId peer) { return f.node_kind[peer] != NodeKind::nvswitch; }

// Each forwarder's links to other forwarders, in port order: the searches below walk only these (half of a
// k = 60 edge switch's ports lead to hosts), by row rather than through node ids.
struct ForwarderLinks {
    std::vector<uint32_t> begin;   // row u's links: [begin[u], begin[u + 1])
    std::vector<uint32_t> row;     // the peer's row
    std::vector<uint16_t> port;    // u's local port
};

ForwarderLinks forwarder_links(const Fabric& f, const Routes& r, const std::vector<NodeId>& forwarders, const std::vector<uint8_t>* link_down) {
    ForwarderLinks links;
    links.begin.assign(size_t(r.forwarder_count) + 1, 0);
    for (uint32_t row = 0; row < r.forwarder_count; ++row) {
        const NodeId u = forwarders[row];
        for (uint32_t p = f.port_begin[u]; p < f.port_begin[u + 1]; ++p) {
            const uint32_t peer_row = r.forwarder_row[f.port_peer[p]];
            if (peer_row == kNone || (link_down && (*link_down)[f.port_link[p]])) continue;
            links.row.push_back(peer_row);
            links.port.push_back(static_cast<uint16_t>(p - f.port_begin[u]));
        }
        links.begin[row + 1] = static_cast<uint32_t>(links.row.size());
    }
    return links;
}

// Next-hop sets numbered in the order they are first met. A set of one port (every downward hop of a fat-tree)
// is found by its port; longer ones by their contents, looked up before anything is allocated.
struct SetTable {
    std::unordered_map<std::u16string, uint32_t> by_ports;
    std::vector<uint32_t> by_single_port;
    std::vector<uint32_t> begin{0};   // set s: ports[begin[s] .. begin[s + 1])
    std::vector<uint16_t> ports;

    uint32_t count() const { return uint32_t(begin.size() - 1); }
    uint32_t intern(const std::u16string& set) {
        uint32_t* single = nullptr;
        if (set.size() == 1) {
            if (by_single_port.size() <= set[0]) by_single_port.resize(size_t(set[0]) + 1, kNone);
            single = &by_single_port[set[0]];
            if (*single != kNone) return *single;
        } else if (auto it = by_ports.find(set); it != by_ports.end()) {
            return it->second;
        }
        const uint32_t id = count();
        for (char16_t c : set) ports.push_back(static_cast<uint16_t>(c));
        begin.push_back(static_cast<uint32_t>(ports.size()));
        if (single) *single = id;
        else by_ports.emplace(set, id);
        return id;
    }
};

// Groups per worker thread when the count is chosen (a k = 60 fat-tree's 1,800 make 7, at most the cores).
constexpr size_t kGroupsPerWorker = 256;

// The columns of groups [g0, g1) of r.hops and r.hop_set, the latter holding ids of `sets`.
void route_groups(const Fabric& f, Routes& r, const std::vector<std::vector<NodeId>>& anchors, const ForwarderLinks& links,
                  uint32_t g0, uint32_t g1, SetTable& sets) {
    const size_t G = r.group_count;
    std::vector<uint8_t> dist(r.forwarder_count);
    std::vector<uint32_t> frontier, next;
    std::u16string candidates;
    for (uint32_t g = g0; g < g1; ++g) {
        // Multi-source BFS over forwarders from the group's attachment switches (or the forwarding host).
        std::fill(dist.begin(), dist.end(), Routes::kUnreachable);
        frontier.clear();
        for (NodeId a : anchors[g]) {
            dist[r.forwarder_row[a]] = 0;
            frontier.push_back(r.forwarder_row[a]);
        }
        for (uint8_t d = 1; !frontier.empty(); ++d) {
            next.clear();
            for (uint32_t u : frontier)
                for (uint32_t l = links.begin[u]; l < links.begin[u + 1]; ++l) {
                    const uint32_t row = links.row[l];
                    if (dist[row] != Routes::kUnreachable) continue;
                    dist[row] = d;
                    next.push_back(row);
                }
            frontier.swap(next);
            if (d == Routes::kUnreachable - 1) break;
        }
        for (uint32_t row = 0; row < r.forwarder_count; ++row) {
            const size_t cell = size_t(row) * G + g;
            r.hops[cell] = dist[row];
            if (dist[row] == Routes::kUnreachable) continue;
            if (dist[row] == 0 && !f.hosts_forward) {
                r.hop_set[cell] = Routes::kDeliver;
                continue;
            }
            if (dist[row] == 0) continue;  // a forwarding host that is the destination itself
            candidates.clear();
            for (uint32_t l = links.begin[row]; l < links.begin[row + 1]; ++l)
                if (dist[links.row[l]] + 1 == dist[row]) candidates.push_back(static_cast<char16_t>(links.port[l]));
            r.hop_set[cell] = sets.intern(candidates);
        }
    }
}

}  // namespace

Routes build_routes(const Fabric& f, unsigned worker_count, const std::vector<uint8_t>* link_down) {
    Routes r;
    const size_t n = f.node_count();
    r.forwarder_row.assign(n, kNone);
    std::vector<NodeId> forwarders;
    for (NodeId i = 0; i < n; ++i)
        if (forwards(f, i)) {
            r.forwarder_row[i] = static_cast<uint32_t>(forwarders.size());
            forwarders.push_back(i);
        }
    r.forwarder_count = static_cast<uint32_t>(forwarders.size());

    // Destination groups: hosts with the same attachment set. Forwarding hosts are their own group.
    r.host_group.assign(n, kNone);
    std::map<std::vector<NodeId>, uint32_t> group_of_anchors;
    std::vector<std::vector<NodeId>> anchors;
    for (NodeId h = 0; h < n; ++h) {
        if (f.node_kind[h] != NodeKind::host) continue;
        std::vector<NodeId> key;
        if (f.hosts_forward) {
            key.push_back(h);
        } else {
            for (uint32_t p = f.port_begin[h]; p < f.port_begin[h + 1]; ++p)
                if (forwards(f, f.port_peer[p])) key.push_back(f.port_peer[p]);
            std::sort(key.begin(), key.end());
            key.erase(std::unique(key.begin(), key.end()), key.end());
        }
        auto [it, inserted] = group_of_anchors.emplace(key, static_cast<uint32_t>(anchors.size()));
        if (inserted) anchors.push_back(key);
        r.host_group[h] = it->second;
    }
    // The tables hold a hop count and a next-hop set per (forwarder, destination group).
    refuse_beyond_memory("fabric " + f.name, "routing tables for " + std::to_string(forwarders.size()) + " forwarding nodes × " +
                                                 std::to_string(anchors.size()) + " destination groups",
                         uint64_t(forwarders.size()) * uint64_t(anchors.size()) * (sizeof(uint8_t) + sizeof(uint32_t)));
    r.group_count = static_cast<uint32_t>(anchors.size());
    const size_t G = r.group_count;
    r.hops.assign(size_t(r.forwarder_count) * G, Routes::kUnreachable);
    r.hop_set.assign(size_t(r.forwarder_count) * G, kNone);

    const ForwarderLinks links = forwarder_links(f, r, forwarders, link_down);

    // The groups' searches are independent: workers take contiguous ranges of groups, each numbering the sets
    // it meets; one pass in the order a single search would go (group by group, row by row) then numbers them
    // for the table, in the order they are first met, so the tables do not depend on the worker count.
    const size_t wanted = worker_count ? worker_count : std::min<size_t>(G / kGroupsPerWorker, std::max(1u, std::thread::hardware_concurrency()));
    const uint32_t workers = uint32_t(std::clamp<size_t>(wanted, 1, std::max<size_t>(G, 1)));
    std::vector<SetTable> sets(workers);
    std::vector<uint32_t> first_group(workers + 1);
    for (uint32_t w = 0; w <= workers; ++w) first_group[w] = uint32_t(G * w / workers);
    std::vector<std::exception_ptr> failed(workers);
    auto run = [&](uint32_t w) {
        try {
            route_groups(f, r, anchors, links, first_group[w], first_group[w + 1], sets[w]);
        } catch (...) {
            failed[w] = std::current_exception();
        }
    };
    // Range 0 on this thread; a range whose thread could not be started runs here too.
    std::vector<std::thread> threads;
    uint32_t started = 1;
    try {
        for (; started < workers; ++started) threads.emplace_back(run, started);
    } catch (const std::system_error&) {
    }
    run(0);
    for (uint32_t w = started; w < workers; ++w) run(w);
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    SetTable table;  // a set two workers both met gets one id
    std::u16string set;
    for (uint32_t w = 0; w < workers; ++w) {
        std::vector<uint32_t> table_id(sets[w].count(), kNone);
        for (uint32_t g = first_group[w]; g < first_group[w + 1]; ++g)
            for (uint32_t row = 0; row < r.forwarder_count; ++row) {
                uint32_t& id = r.hop_set[size_t(row) * G + g];
                if (id == kNone || id == Routes::kDeliver) continue;
                if (table_id[id] == kNone) {
                    set.assign(sets[w].ports.begin() + sets[w].begin[id], sets[w].ports.begin() + sets[w].begin[id + 1]);
                    table_id[id] = table.intern(set);
                }
                id = table_id[id];
            }
    }
    r.set_begin = std::move(table.begin);
    r.set_ports = std::move(table.ports);
    return r;
}

size_t memory_bytes(const Routes& r) {
    return r.host_group.size() * 4 + r.forwarder_row.size() * 4 + r.hops.size() + r.hop_set.size() * 4 +
           r.set_begin.size() * 4 + r.set_ports.size() * 2 + r.set_weights.size() * 4;
}

void next_hops(const Fabric& f, const Routes& r, NodeId node, NodeId dst, std::vector<uint32_t>& out) {
    out.clear();
    if (node == dst || r.host_group[dst] == kNone) return;
    const uint32_t g = r.host_group[dst];
    const uint32_t first = f.port_begin[node];
    const uint32_t row = r.forwarder_row[node];
    if (row == kNone) {
        // A host that does not forward: a direct link to dst, else the uplinks nearest to dst's group.
        uint8_t best = Routes::kUnreachable;
        for (uint32_t p = first; p < f.port_begin[node + 1]; ++p)
            if (f.port_peer[p] == dst) {
                out.push_back(p - first);
                return;
            }
        for (uint32_t p = first; p < f.port_begin[node + 1]; ++p) {
            uint32_t peer_row = r.forwarder_row[f.port_peer[p]];
            if (peer_row == kNone || !network_peer(f, f.port_peer[p])) continue;
            uint8_t h = r.hops[size_t(peer_row) * r.group_count + g];
            if (h < best) {
                best = h;
                out.clear();
            }
            if (h == best && h != Routes::kUnreachable) out.push_back(p - first);
        }
        return;
    }
    const size_t cell = size_t(row) * r.group_count + g;
    if (r.hops[cell] == Routes::kUnreachable) return;
    if (r.hop_set[cell] == Routes::kDeliver) {
        for (uint32_t p = first; p < f.port_begin[node + 1]; ++p)
            if (f.port_peer[p] == dst) out.push_back(p - first);
        return;
    }
    const uint32_t s = r.hop_set[cell];
    for (uint32_t i = r.set_begin[s]; i < r.set_begin[s + 1]; ++i) out.push_back(r.set_ports[i]);
}

std::vector<uint32_t> next_hops(const Fabric& f, const Routes& r, NodeId node, NodeId dst) {
    std::vector<uint32_t> out;
    next_hops(f, r, node, dst, out);
    return out;
}

bool flow_path(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint16_t sport, uint16_t dport, std::vector<Hop>& path,
               std::vector<uint32_t>& candidates) {
    path.clear();
    const uint32_t sip = node_ip(src), dip = node_ip(dst);
    NodeId at = src;
    while (at != dst) {
        next_hops(f, r, at, dst, candidates);
        if (candidates.empty() || path.size() > f.node_count()) {
            path.clear();
            return false;
        }
        const std::vector<uint32_t>& c = candidates;
        uint32_t port = c[0];
        if (c.size() > 1) {
            const uint32_t hash = ecmp_hash(sip, dip, sport, dport, at);
            const uint32_t* weights = next_hop_weights(r, at, dst);
            port = weights ? c[weighted_index(weights, uint32_t(c.size()), hash)] : c[hash % c.size()];
        }
        path.push_back({at, port});
        at = f.port_peer[f.port_begin[at] + port];
    }
    return true;
}

std::vector<Hop> flow_path(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint16_t sport, uint16_t dport) {
    std::vector<Hop> path;
    std::vector<uint32_t> candidates;
    flow_path(f, r, src, dst, sport, dport, path, candidates);
    return path;
}

int path_length(const Fabric& f, const Routes& r, NodeId src, NodeId dst) {
    if (src == dst) return 0;
    int length = 0;
    std::vector<uint32_t> c;
    for (NodeId at = src; at != dst; ++length) {
        next_hops(f, r, at, dst, c);
        if (c.empty() || length > static_cast<int>(f.node_count())) return -1;
        at = f.port_peer[f.port_begin[at] + c[0]];
    }
    return length;
}

namespace {

// One link's share of path_metrics: its propagation delay, an mtu's serialization, its rate.
void add_link(const Fabric& f, uint32_t port, uint32_t mtu, PathMetrics& m) {
    const LinkId l = f.port_link[port];
    const uint64_t bw = uint64_t(f.link_rate[l].count);
    m.delay_ns += uint64_t(f.link_delay[l].count / 1000);
    m.tx_delay_ns += uint64_t(mtu) * 1000000000ull * 8 / bw;
    m.min_bw = std::min(m.min_bw, bw);
    ++m.hops;
}

constexpr PathMetrics kUnreachablePath{0, 0, 0, -1};

}  // namespace

PathMetrics path_metrics(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint32_t mtu) {
    PathMetrics m;
    NodeId at = src;
    std::vector<uint32_t> c;
    while (at != dst) {
        next_hops(f, r, at, dst, c);
        if (c.empty() || m.hops > int(f.node_count())) return kUnreachablePath;
        const uint32_t port = f.port_begin[at] + c[0];
        add_link(f, port, mtu, m);
        at = f.port_peer[port];
    }
    return m;
}

PathMetrics path_metrics(const Fabric& f, const Routes& r, NodeId src, NodeId dst, uint32_t mtu, PathMemo& memo) {
    if (memo.routes != &r || memo.dst != dst || memo.mtu != mtu || memo.stamp.size() != r.forwarder_count) {
        memo.routes = &r;
        memo.dst = dst;
        memo.mtu = mtu;
        if (memo.stamp.size() != r.forwarder_count || ++memo.generation == 0) {
            memo.stamp.assign(r.forwarder_count, 0);
            memo.known.resize(r.forwarder_count);
            memo.generation = 1;
        }
    }
    // Forward to dst or to a forwarder whose remainder is known, as the walk above goes; then back, each hop's
    // link added to what lies beyond it, and each forwarder passed kept.
    memo.walk.clear();
    PathMetrics rest;
    for (NodeId at = src;;) {
        if (at == dst) break;
        const uint32_t row = r.forwarder_row[at];
        if (row != kNone && memo.stamp[row] == memo.generation) {
            rest = memo.known[row];
            break;
        }
        next_hops(f, r, at, dst, memo.candidates);
        if (memo.candidates.empty() || memo.walk.size() > f.node_count()) {
            rest = kUnreachablePath;
            break;
        }
        const uint32_t port = f.port_begin[at] + memo.candidates[0];
        memo.walk.emplace_back(at, port);
        at = f.port_peer[port];
    }
    for (size_t i = memo.walk.size(); i-- > 0;) {
        const auto [node, port] = memo.walk[i];
        if (rest.hops >= 0) add_link(f, port, mtu, rest);
        if (const uint32_t row = r.forwarder_row[node]; row != kNone) {
            memo.known[row] = rest;
            memo.stamp[row] = memo.generation;
        }
    }
    return rest;
}

}  // namespace orrery
