#include "wormhole/graph_match.h"

#include <algorithm>
#include <numeric>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/vf2_sub_graph_iso.hpp>

#include "net/ns3_arith.h"

namespace orrery::wormhole {
namespace {

using net::mix64;

// A graph in compressed rows: vertex v's neighbours are slot[begin[v] .. begin[v + 1]), each as neighbour x
// weights.size() + the index of its edge's weight in `weights` (the distinct weights, each moved to the high word,
// ready to be mixed with the neighbour's colour): its place in refine_once's table.
struct Rows {
    std::vector<uint32_t> begin;
    std::vector<uint32_t> slot;
    std::vector<uint64_t> weights;
    std::vector<uint64_t> mixed;  // refine_once's scratch: mix64(colour ^ weight) per vertex and weight
};

Rows compressed_rows(const FlowConflictGraph& g) {
    const size_t n = g.labels.size();
    Rows r;
    r.begin.assign(n + 1, 0);
    std::vector<uint32_t> weight_of(g.edges.size());
    uint32_t k = 0;
    for (size_t i = 0; i < g.edges.size(); ++i) {
        const auto& e = g.edges[i];
        ++r.begin[e.a + 1], ++r.begin[e.b + 1];
        const uint64_t w = uint64_t(e.shared) << 32;
        if (k >= r.weights.size() || r.weights[k] != w) {  // runs of edges share a weight
            k = 0;
            while (k < r.weights.size() && r.weights[k] != w) ++k;
            if (k == r.weights.size()) r.weights.push_back(w);
        }
        weight_of[i] = k;
    }
    for (size_t v = 0; v < n; ++v) r.begin[v + 1] += r.begin[v];
    r.slot.resize(r.begin[n]);
    const uint32_t nw = uint32_t(r.weights.size());
    std::vector<uint32_t> fill(r.begin.begin(), r.begin.end() - 1);
    for (size_t i = 0; i < g.edges.size(); ++i) {
        const auto& e = g.edges[i];
        r.slot[fill[e.a]++] = e.b * nw + weight_of[i];
        r.slot[fill[e.b]++] = e.a * nw + weight_of[i];
    }
    return r;
}

// One Weisfeiler-Lehman round. A vertex's neighbourhood is a multiset, hashed as the sum of its members' mixes:
// no sort of each neighbourhood per round, which made the sorted form 14 % of a MoE 8x13B skip-on run (64-flow
// all-to-alls, nearly complete graphs of 2,016 edges, hashed at every probe, tail and freeze). A conflict graph
// has a handful of distinct edge weights, so each neighbour's mix is taken from a table made once per round
// (vertices x weights) instead of being computed at each of the 2 x edges visits: the same sums, the mixing
// done 2,016 x 2 / (64 x a few) times less often on such a graph (docs/history/wormhole-skipping.md, "...colour refinement by table").
void refine_once(Rows& r, const std::vector<uint64_t>& color, std::vector<uint64_t>& next) {
    const size_t n = color.size(), nw = r.weights.size();
    const bool tabled = n * nw < r.slot.size();  // a sparse graph, or one of many weights, mixes at each visit
    if (tabled) {
        r.mixed.resize(n * nw);
        for (size_t u = 0; u < n; ++u)
            for (size_t k = 0; k < nw; ++k) r.mixed[u * nw + k] = mix64(color[u] ^ r.weights[k]);
    }
    const uint64_t* mixed = r.mixed.data();
    for (size_t v = 0; v < n; ++v) {
        uint64_t sum = 0;
        if (tabled)
            for (uint32_t i = r.begin[v]; i < r.begin[v + 1]; ++i) sum += mixed[r.slot[i]];
        else
            for (uint32_t i = r.begin[v]; i < r.begin[v + 1]; ++i) sum += mix64(color[r.slot[i] / nw] ^ r.weights[r.slot[i] % nw]);
        next[v] = mix64(mix64(color[v] + 0x9e3779b97f4a7c15ull) ^ sum);
    }
}

size_t class_count(std::vector<uint64_t> color) {
    std::sort(color.begin(), color.end());
    return size_t(std::unique(color.begin(), color.end()) - color.begin());
}

bool same_multiset(std::vector<uint64_t> a, std::vector<uint64_t> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

// Individualization and refinement (the method of canonical-labelling tools such as nauty): refine both graphs'
// colours together until their classes stop splitting; if every class is one vertex the colours give the map,
// checked edge by edge; otherwise fix the lowest-numbered stored vertex of the smallest class to each query
// vertex of its class in turn (query order, so a query whose flows sit in the key's places within their classes
// maps them there) and recurse. Refinement commutes with isomorphism, so exhausting the branches proves there is
// none. The conflict graphs of MoE's all-to-all partitions (48 flows, 936 edges, every vertex of degree 39, seven
// classes of 4 and 8) took VF2 past 200,000 comparisons without an answer; this maps them in a few levels.
struct Refinement {
    const FlowConflictGraph& stored;
    const FlowConflictGraph& query;
    Rows stored_rows, query_rows;
    std::vector<uint32_t>& mapping;
    uint64_t work = 0;  // edge visits, against kRefinementBudget
    static constexpr uint64_t kRefinementBudget = 4'000'000;
    struct Spent {};

    // Refines both colourings in step; false when they stop matching (no isomorphism respects them).
    bool refine(std::vector<uint64_t>& cs, std::vector<uint64_t>& cq) {
        std::vector<uint64_t> ns(cs.size()), nq(cq.size());
        size_t classes = class_count(cs);
        for (;;) {
            work += 2 * stored_rows.slot.size() + 2 * cs.size();
            if (work > kRefinementBudget) throw Spent{};
            refine_once(stored_rows, cs, ns);
            refine_once(query_rows, cq, nq);
            if (!same_multiset(ns, nq)) return false;
            cs.swap(ns);
            cq.swap(nq);
            const size_t now = class_count(cs);
            if (now == classes) return true;
            classes = now;
        }
    }

    bool colours_map(const std::vector<uint64_t>& cs, const std::vector<uint64_t>& cq) {
        const size_t n = cs.size();
        std::vector<uint32_t> by_colour(n);
        std::iota(by_colour.begin(), by_colour.end(), 0u);
        std::sort(by_colour.begin(), by_colour.end(), [&](uint32_t x, uint32_t y) { return cq[x] < cq[y]; });
        std::vector<uint32_t> map(n);
        for (size_t v = 0; v < n; ++v) {
            auto it = std::lower_bound(by_colour.begin(), by_colour.end(), cs[v], [&](uint32_t q, uint64_t c) { return cq[q] < c; });
            if (it == by_colour.end() || cq[*it] != cs[v] || stored.labels[v] != query.labels[*it]) return false;
            map[v] = *it;
        }
        for (const auto& e : stored.edges) {
            const uint32_t x = std::min(map[e.a], map[e.b]), y = std::max(map[e.a], map[e.b]);
            auto it = std::lower_bound(query.edges.begin(), query.edges.end(), std::pair{x, y},
                                       [](const auto& edge, const auto& key) { return edge.a != key.first ? edge.a < key.first : edge.b < key.second; });
            if (it == query.edges.end() || it->a != x || it->b != y || it->shared != e.shared) return false;
        }
        mapping = std::move(map);
        return true;
    }

    bool search(std::vector<uint64_t> cs, std::vector<uint64_t> cq) {
        if (!refine(cs, cq)) return false;
        // The smallest class of more than one vertex (ties: the smallest colour), and its lowest stored vertex.
        std::vector<uint64_t> sorted = cs;
        std::sort(sorted.begin(), sorted.end());
        uint64_t cell = 0;
        size_t cell_size = 0;
        for (size_t i = 0; i < sorted.size();) {
            size_t j = i;
            while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
            if (j - i > 1 && (cell_size == 0 || j - i < cell_size)) cell = sorted[i], cell_size = j - i;
            i = j;
        }
        if (cell_size == 0) return colours_map(cs, cq);
        const uint32_t s = uint32_t(std::find(cs.begin(), cs.end(), cell) - cs.begin());
        const uint64_t fixed = mix64(cell ^ 0x5bd1e9955bd1e995ull);
        for (uint32_t q = 0; q < cq.size(); ++q) {
            if (cq[q] != cell) continue;
            std::vector<uint64_t> ts = cs, tq = cq;
            ts[s] = fixed;
            tq[q] = fixed;
            if (search(std::move(ts), std::move(tq))) return true;
        }
        return false;
    }
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::property<boost::vertex_name_t, uint64_t>,
                                    boost::property<boost::edge_weight_t, uint32_t>>;

Graph to_boost(const FlowConflictGraph& g) {
    Graph out(g.labels.size());
    for (size_t v = 0; v < g.labels.size(); ++v) boost::put(boost::vertex_name, out, v, g.labels[v]);
    for (const auto& e : g.edges) boost::add_edge(e.a, e.b, e.shared, out);
    return out;
}

// VF2 is exponential in the worst case, and highly symmetric conflict graphs (a ring of 1,000 identical flows)
// come close to it, above all when the Weisfeiler-Lehman hashes of two different graphs agree. A search that
// compares more than this many vertex or edge pairs gives up and counts as "not the same" (a memo miss): a
// deterministic bound, so every thread count and backend gives the same answer.
constexpr uint64_t kVf2Budget = 200'000;
struct Vf2BudgetSpent {};

enum class Vf2 { found, none, gave_up };

Vf2 vf2_match(const FlowConflictGraph& stored, const FlowConflictGraph& query, std::vector<uint32_t>& mapping) {
    const Graph g1 = to_boost(stored), g2 = to_boost(query);
    bool found = false;
    auto callback = [&](const auto& f, const auto&) {
        mapping.assign(stored.labels.size(), 0);
        for (size_t v = 0; v < stored.labels.size(); ++v) mapping[v] = uint32_t(boost::get(f, v));
        found = true;
        return false;  // the first isomorphism is enough
    };
    const auto name1 = boost::get(boost::vertex_name, g1), name2 = boost::get(boost::vertex_name, g2);
    const auto weight1 = boost::get(boost::edge_weight, g1), weight2 = boost::get(boost::edge_weight, g2);
    uint64_t compared = 0;
    auto spend = [&] {
        if (++compared > kVf2Budget) throw Vf2BudgetSpent{};
    };
    auto same_vertex = [&](auto v1, auto v2) {
        spend();
        return name1[v1] == name2[v2];
    };
    auto same_edge = [&](auto e1, auto e2) {
        spend();
        return weight1[e1] == weight2[e2];
    };
    try {
        boost::vf2_graph_iso(g1, g2, callback, boost::get(boost::vertex_index, g1), boost::get(boost::vertex_index, g2),
                             boost::vertex_order_by_mult(g1), same_edge, same_vertex);
    } catch (const Vf2BudgetSpent&) {
        return Vf2::gave_up;
    }
    return found ? Vf2::found : Vf2::none;
}

}  // namespace

std::vector<uint64_t> vertex_classes(const FlowConflictGraph& g) {
    Rows rows = compressed_rows(g);
    std::vector<uint64_t> color(g.labels.size()), next(g.labels.size());
    for (size_t v = 0; v < color.size(); ++v) color[v] = mix64(g.labels[v]);
    for (int round = 0; round < 3; ++round) {
        refine_once(rows, color, next);
        color.swap(next);
    }
    return color;
}

bool isomorphic(const FlowConflictGraph& stored, const FlowConflictGraph& query, std::vector<uint32_t>& mapping, MatchCounts* counts) {
    MatchCounts ignored;
    MatchCounts& count = counts ? *counts : ignored;
    auto different = [&] {
        ++count.different;
        return false;
    };
    if (stored.context != query.context || stored.labels.size() != query.labels.size() || stored.edges.size() != query.edges.size()) return different();
    // A query that lists its flows as the stored key does maps each flow to itself. Partitions of one
    // collective step in different groups (a leader and its followers, or the same step in a later
    // micro-batch) are translations of each other and list their flows in the same order, so this is the
    // translation, and it keeps what the graph does not encode: each flow's path and hop count, and which
    // rank waits on it. VF2's first isomorphism of a 128-flow all-to-all moved 104 of its 128 flows even on
    // the stored graph itself (test_wormhole: a_key_in_its_stored_order_maps_each_flow_to_itself), so
    // followers copied flows onto other ranks' flows: MoE 32x22B's 20 ms prefix had start times moved by
    // 291 us at p90 (4.6 us with this), and its 60 ms prefix 1.141 % mean per-flow FCT error (0.892 %).
    if (stored.labels == query.labels && std::equal(stored.edges.begin(), stored.edges.end(), query.edges.begin(), [](const auto& l, const auto& r) {
            return l.a == r.a && l.b == r.b && l.shared == r.shared;
        })) {
        mapping.resize(stored.labels.size());
        std::iota(mapping.begin(), mapping.end(), 0u);
        ++count.same_order;
        return true;
    }
    if (!same_multiset(stored.labels, query.labels)) return different();
    Refinement r{stored, query, compressed_rows(stored), compressed_rows(query), mapping};
    std::vector<uint64_t> cs(stored.labels.size()), cq(query.labels.size());
    for (size_t v = 0; v < cs.size(); ++v) cs[v] = mix64(stored.labels[v]), cq[v] = mix64(query.labels[v]);
    try {
        if (r.search(std::move(cs), std::move(cq))) {
            ++count.refined;
            return true;
        }
        return different();
    } catch (const Refinement::Spent&) {
    }
    switch (vf2_match(stored, query, mapping)) {
    case Vf2::found: ++count.vf2; return true;
    case Vf2::none: return different();
    case Vf2::gave_up: break;
    }
    ++count.gave_up;
    return false;
}

}  // namespace orrery::wormhole
