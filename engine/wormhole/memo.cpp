#include "wormhole/memo.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/vf2_sub_graph_iso.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "common/diagnostics.h"
#include "net/ns3_arith.h"

namespace orrery::wormhole {
namespace {

using net::mix64;

uint64_t hash_string(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return mix64(h);
}

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

// Whether `stored` and `query` are the same labelled graph; fills mapping stored vertex → query vertex.
bool isomorphic(const FlowConflictGraph& stored, const FlowConflictGraph& query, std::vector<uint32_t>& mapping) {
    if (stored.context != query.context || stored.labels.size() != query.labels.size() || stored.edges.size() != query.edges.size()) return false;
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
        return true;
    }
    std::vector<uint64_t> a = stored.labels, b = query.labels;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return false;
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
        return false;
    }
    return found;
}

std::string json_text(const nlohmann::json& j) { return j.dump(); }

}  // namespace

uint64_t vertex_label(double rate_share_of_line, uint64_t remaining_bytes, uint64_t max_bdp_bytes, uint64_t base_rtt_ns, bool awaiting_first_feedback) {
    const uint64_t rate_q = uint64_t(std::llround(std::clamp(rate_share_of_line, 0.0, 1.0) * 16));
    if (max_bdp_bytes) remaining_bytes = std::min(remaining_bytes, kLabelledBdps * max_bdp_bytes);
    const uint64_t size_q = remaining_bytes == 0 ? 0 : uint64_t(std::floor(4 * std::log2(double(remaining_bytes))));
    const uint64_t rtt_q = base_rtt_ns / 100;
    return (awaiting_first_feedback ? kAwaitingFirstFeedbackBit : 0) | (rate_q << 56) | (size_q << 40) | (rtt_q & 0xffffffffffull);
}

uint32_t edge_weight(uint32_t shared_ports, uint32_t shared_data_ports) { return (std::min<uint32_t>(shared_data_ports, 0xffff) << 16) | std::min<uint32_t>(shared_ports, 0xffff); }

std::vector<uint64_t> vertex_classes(const FlowConflictGraph& g) {
    // Three rounds of Weisfeiler-Lehman refinement over the graph in compressed rows (one allocation, not one
    // per vertex). A vertex's neighbourhood is a multiset, hashed as the sum of its members' mixes: no sort of
    // each neighbourhood per round, which made this 14 % of a MoE 8x13B skip-on run (64-flow all-to-alls,
    // nearly complete graphs of 2,016 edges, hashed at every probe, tail and freeze).
    const size_t n = g.labels.size();
    std::vector<uint32_t> begin(n + 1, 0);
    for (const auto& e : g.edges) ++begin[e.a + 1], ++begin[e.b + 1];
    for (size_t v = 0; v < n; ++v) begin[v + 1] += begin[v];
    std::vector<std::pair<uint32_t, uint64_t>> around(begin[n]);  // neighbour, its edge's weight moved to the high word
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (const auto& e : g.edges) {
        around[fill[e.a]++] = {e.b, uint64_t(e.shared) << 32};
        around[fill[e.b]++] = {e.a, uint64_t(e.shared) << 32};
    }
    std::vector<uint64_t> color(n), next(n);
    for (size_t v = 0; v < n; ++v) color[v] = mix64(g.labels[v]);
    for (int round = 0; round < 3; ++round) {
        for (size_t v = 0; v < n; ++v) {
            uint64_t sum = 0;
            for (uint32_t i = begin[v]; i < begin[v + 1]; ++i) sum += mix64(color[around[i].first] ^ around[i].second);
            next[v] = mix64(mix64(color[v] + 0x9e3779b97f4a7c15ull) ^ sum);
        }
        color.swap(next);
    }
    return color;
}

void finish_graph(FlowConflictGraph& g) {
    std::sort(g.edges.begin(), g.edges.end(), [](const auto& x, const auto& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    const size_t n = g.labels.size();
    std::vector<uint64_t> color = vertex_classes(g);
    std::sort(color.begin(), color.end());
    uint64_t h = hash_string(g.context) ^ mix64(n) ^ mix64(g.edges.size() << 20);
    for (uint64_t c : color) h = mix64(h ^ c);
    g.hash = h;
}

const MemoEntry* MemoTable::find(const FlowConflictGraph& g, std::vector<uint32_t>& mapping) const {
    auto [lo, hi] = entries.equal_range(g.hash);
    for (auto it = lo; it != hi; ++it)
        if (isomorphic(it->second.key, g, mapping)) return &it->second;
    return nullptr;
}

bool MemoTable::add(MemoEntry entry) {
    std::vector<uint32_t> mapping;
    if (find(entry.key, mapping)) return false;
    const uint64_t h = entry.key.hash;
    entries.emplace(h, std::move(entry));
    return true;
}

namespace {

struct Db {
    sqlite3* db = nullptr;
    ~Db() {
        if (db) sqlite3_close(db);
    }
};

void exec(sqlite3* db, const std::string& sql, const std::filesystem::path& file) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string text = message ? message : "unknown error";
        sqlite3_free(message);
        throw InputError(file.string(), "memo file: " + text);
    }
}

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS wormhole_memo(hash INTEGER NOT NULL, context TEXT NOT NULL, labels TEXT NOT NULL, edges TEXT NOT NULL, "
    "transient_ps INTEGER NOT NULL, bytes TEXT NOT NULL, end_rate_bytes_per_ps TEXT NOT NULL, end_inflight TEXT NOT NULL, ends TEXT NOT NULL, "
    "end_cc_state TEXT)";
constexpr const char* kColumns = "context, labels, edges, transient_ps, bytes, end_rate_bytes_per_ps, end_inflight, ends";

std::vector<CcSnapshot> cc_states_from_json(const std::string& text) {
    std::vector<CcSnapshot> out;
    for (const auto& flow : nlohmann::json::parse(text)) out.push_back(cc_snapshot_from_json(flow));
    return out;
}

std::string cc_states_json(const std::vector<CcSnapshot>& states) {
    nlohmann::json out = nlohmann::json::array();
    for (const CcSnapshot& s : states) out.push_back(cc_snapshot_json(s));
    return out.dump();
}

}  // namespace

MemoTable load_memo(const std::filesystem::path& file) {
    MemoTable table;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return table;
    Db d;
    if (sqlite3_open_v2(file.string().c_str(), &d.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        throw InputError(file.string(), std::string("cannot open the memo file: ") + sqlite3_errmsg(d.db));
    sqlite3_stmt* st = nullptr;
    // Files written before the CC states were kept lack their column: every row is outdated.
    const bool with_cc_states = sqlite3_prepare_v2(d.db, (std::string("SELECT ") + kColumns + ", end_cc_state FROM wormhole_memo ORDER BY rowid").c_str(), -1, &st, nullptr) == SQLITE_OK;
    if (!with_cc_states && sqlite3_prepare_v2(d.db, (std::string("SELECT ") + kColumns + " FROM wormhole_memo ORDER BY rowid").c_str(), -1, &st, nullptr) != SQLITE_OK)
        throw InputError(file.string(), "not an Orrery memo file (no wormhole_memo table): " + std::string(sqlite3_errmsg(d.db)));
    int row = 0;
    try {
        while (sqlite3_step(st) == SQLITE_ROW) {
            ++row;
            MemoEntry e;
            auto text = [&](int col) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, col))); };
            e.key.context = text(0);
            e.key.labels = nlohmann::json::parse(text(1)).get<std::vector<uint64_t>>();
            for (const auto& edge : nlohmann::json::parse(text(2))) e.key.edges.push_back({edge.at(0).get<uint32_t>(), edge.at(1).get<uint32_t>(), edge.at(2).get<uint32_t>()});
            e.transient_ps = sqlite3_column_int64(st, 3);
            e.bytes = nlohmann::json::parse(text(4)).get<std::vector<uint64_t>>();
            e.end_rate = nlohmann::json::parse(text(5)).get<std::vector<double>>();
            e.end_inflight = nlohmann::json::parse(text(6)).get<std::vector<uint64_t>>();
            const std::string ends = text(7);
            if (ends != "steady" && ends != "completion") throw std::runtime_error("column ends is \"" + ends + "\", expected \"steady\" or \"completion\"");
            e.ends_steady = ends == "steady";
            if (!with_cc_states || sqlite3_column_type(st, 8) == SQLITE_NULL) {
                ++table.outdated;
                continue;
            }
            e.end_cc = cc_states_from_json(text(8));
            const size_t n = e.key.labels.size();
            if (e.end_cc.size() != n) throw std::runtime_error("end_cc_state does not match the graph's " + std::to_string(n) + " flows");
            if (e.bytes.size() != n || e.end_rate.size() != n || e.end_inflight.size() != n) throw std::runtime_error("per-flow lists do not match the graph's " + std::to_string(n) + " flows");
            for (const auto& edge : e.key.edges)
                if (edge.a >= n || edge.b >= n) throw std::runtime_error("an edge names a flow beyond the graph's " + std::to_string(n));
            finish_graph(e.key);
            table.add(std::move(e));
        }
    } catch (const std::exception& ex) {
        sqlite3_finalize(st);
        throw InputError(file.string() + ": wormhole_memo row " + std::to_string(row), std::string("malformed memo entry: ") + ex.what());
    }
    sqlite3_finalize(st);
    return table;
}

size_t save_memo(const std::filesystem::path& file, const std::vector<MemoEntry>& added) {
    MemoTable existing = load_memo(file);
    Db d;
    if (sqlite3_open_v2(file.string().c_str(), &d.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
        throw InputError(file.string(), std::string("cannot write the memo file: ") + sqlite3_errmsg(d.db));
    sqlite3_busy_timeout(d.db, 5000);
    exec(d.db, kSchema, file);
    // A file from before the CC states were kept gains their column; its rows keep NULL there.
    sqlite3_exec(d.db, "ALTER TABLE wormhole_memo ADD COLUMN end_cc_state TEXT", nullptr, nullptr, nullptr);
    exec(d.db, "BEGIN", file);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(d.db, "INSERT INTO wormhole_memo(hash, context, labels, edges, transient_ps, bytes, end_rate_bytes_per_ps, end_inflight, ends, end_cc_state) VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &st, nullptr);
    size_t count = 0;
    for (const MemoEntry& e : added) {
        if (!existing.add(e)) continue;
        nlohmann::json edges = nlohmann::json::array();
        for (const auto& edge : e.key.edges) edges.push_back({edge.a, edge.b, edge.shared});
        const std::string labels = json_text(e.key.labels), edge_text = json_text(edges), bytes = json_text(e.bytes), rates = json_text(e.end_rate);
        sqlite3_bind_int64(st, 1, int64_t(e.key.hash));
        sqlite3_bind_text(st, 2, e.key.context.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, labels.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, edge_text.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 5, e.transient_ps);
        sqlite3_bind_text(st, 6, bytes.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 7, rates.c_str(), -1, SQLITE_TRANSIENT);
        const std::string inflight = json_text(e.end_inflight);
        sqlite3_bind_text(st, 8, inflight.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 9, e.ends_steady ? "steady" : "completion", -1, SQLITE_STATIC);
        const std::string cc_states = cc_states_json(e.end_cc);
        sqlite3_bind_text(st, 10, cc_states.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            throw InputError(file.string(), std::string("cannot write the memo file: ") + sqlite3_errmsg(d.db));
        }
        sqlite3_reset(st);
        ++count;
    }
    sqlite3_finalize(st);
    exec(d.db, "COMMIT", file);
    return count;
}

}  // namespace orrery::wormhole
