// Weighted ECMP (network.routing.weights "capacity"): each next hop weighted by the capacity it leads to.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "topology/routing.h"

namespace orrery {
namespace {
constexpr int64_t kWeightLevels = 1024;  // a weight's resolution: 1024ths of its set's largest
}  // namespace

const uint32_t* next_hop_weights(const Routes& r, NodeId node, NodeId dst) {
    const uint32_t row = r.forwarder_row[node];
    if (r.set_weights.empty() || row == kNone) return nullptr;
    const uint32_t s = r.hop_set[size_t(row) * r.group_count + r.host_group[dst]];
    return s == kNone || s == Routes::kDeliver ? nullptr : &r.set_weights[r.set_begin[s]];
}

void weight_by_capacity(const Fabric& f, Routes& r) {
    const size_t G = r.group_count;
    std::vector<NodeId> node_of(r.forwarder_count);
    for (NodeId n = 0; n < f.node_count(); ++n)
        if (r.forwarder_row[n] != kNone) node_of[r.forwarder_row[n]] = n;
    auto rate_of = [&](uint32_t row, uint16_t port) { return double(f.link_rate[f.port_link[f.port_begin[node_of[row]] + port]].count); };
    auto peer_row = [&](uint32_t row, uint16_t port) { return r.forwarder_row[f.port_peer[f.port_begin[node_of[row]] + port]]; };

    std::vector<uint32_t> hop_set(r.hop_set.size());
    std::vector<uint32_t> begin{0}, weights;
    std::vector<uint16_t> ports;
    std::map<std::pair<std::vector<uint16_t>, std::vector<uint32_t>>, uint32_t> interned;
    std::vector<double> cap(r.forwarder_count), in_rate(r.forwarder_count);
    std::vector<std::vector<uint32_t>> by_hops;
    std::vector<double> w;
    std::vector<uint16_t> set_ports;
    std::vector<uint32_t> set_weights;
    for (size_t g = 0; g < G; ++g) {
        by_hops.assign(1, {});
        std::fill(in_rate.begin(), in_rate.end(), 0.0);
        for (uint32_t row = 0; row < r.forwarder_count; ++row) {
            const size_t cell = size_t(row) * G + g;
            hop_set[cell] = r.hop_set[cell];
            const uint8_t h = r.hops[cell];
            if (h == Routes::kUnreachable) continue;
            if (by_hops.size() <= h) by_hops.resize(size_t(h) + 1);
            by_hops[h].push_back(row);
            const uint32_t s = r.hop_set[cell];
            if (s == Routes::kDeliver || s == kNone) continue;
            for (uint32_t i = r.set_begin[s]; i < r.set_begin[s + 1]; ++i) in_rate[peer_row(row, r.set_ports[i])] += rate_of(row, r.set_ports[i]);
        }
        // Nearest first: a next hop's capacity is known before the hops that lead to it.
        for (const std::vector<uint32_t>& rows : by_hops)
            for (uint32_t row : rows) {
                const size_t cell = size_t(row) * G + g;
                const uint32_t s = r.hop_set[cell];
                if (s == Routes::kDeliver || s == kNone) {
                    cap[row] = std::numeric_limits<double>::infinity();
                    continue;
                }
                w.clear();
                set_ports.assign(r.set_ports.begin() + r.set_begin[s], r.set_ports.begin() + r.set_begin[s + 1]);
                double total = 0;
                for (uint16_t p : set_ports) {
                    const uint32_t v = peer_row(row, p);
                    // The port's rate, scaled by the share of what leads into v that v can carry on toward the group.
                    const double share = std::isinf(cap[v]) || in_rate[v] <= 0 ? 1.0 : std::min(1.0, cap[v] / in_rate[v]);
                    w.push_back(rate_of(row, p) * share);
                    total += w.back();
                }
                cap[row] = total;
                // Integers in 1024ths of the largest, divided by their greatest common divisor: equal weights become
                // 1 each, so a symmetric fabric picks exactly as unweighted ECMP does, and 1:2 stays 1:2.
                set_weights.clear();
                const double largest = *std::max_element(w.begin(), w.end());
                uint32_t divisor = 0;
                for (double x : w) {
                    set_weights.push_back(uint32_t(std::max<int64_t>(1, largest > 0 ? std::llround(x / largest * kWeightLevels) : kWeightLevels)));
                    divisor = std::gcd(divisor, set_weights.back());
                }
                for (uint32_t& x : set_weights) x /= divisor;
                auto [it, fresh] = interned.try_emplace({set_ports, set_weights}, uint32_t(begin.size() - 1));
                if (fresh) {
                    ports.insert(ports.end(), set_ports.begin(), set_ports.end());
                    weights.insert(weights.end(), set_weights.begin(), set_weights.end());
                    begin.push_back(uint32_t(ports.size()));
                }
                hop_set[cell] = it->second;
            }
    }
    r.hop_set = std::move(hop_set);
    r.set_begin = std::move(begin);
    r.set_ports = std::move(ports);
    r.set_weights = std::move(weights);
}

Routes routes_around(const Fabric& f, const std::vector<uint8_t>* down, bool capacity_weights, const Routes* healthy) {
    const bool any_down = down && std::any_of(down->begin(), down->end(), [](uint8_t d) { return d != 0; });
    Routes r = any_down || !healthy ? build_routes(f, 0, any_down ? down : nullptr) : *healthy;
    if (capacity_weights) weight_by_capacity(f, r);
    return r;
}

}  // namespace orrery
