#include "wormhole/memo.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "common/diagnostics.h"
#include "net/ns3_arith.h"
#include "wormhole/graph_match.h"

namespace orrery::wormhole {
namespace {

using net::mix64;

uint64_t hash_string(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return mix64(h);
}

std::string json_text(const nlohmann::json& j) { return j.dump(); }

// A quick, weak hash of `bytes` bytes: a multiply-add per 8-byte word (the last one zero-padded).
uint64_t words_hash(const void* data, size_t bytes, uint64_t h) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (; bytes >= 8; p += 8, bytes -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h + w) * 0x9e3779b97f4a7c15ull;
    }
    uint64_t w = 0;
    if (bytes) std::memcpy(&w, p, bytes);
    return (h + w + bytes) * 0x9e3779b97f4a7c15ull;
}

}  // namespace

uint64_t vertex_label(double rate_share_of_line, uint64_t remaining_bytes, uint64_t max_bdp_bytes, uint64_t base_rtt_ns, bool awaiting_first_feedback) {
    const uint64_t rate_q = uint64_t(std::llround(std::clamp(rate_share_of_line, 0.0, 1.0) * 16));
    if (max_bdp_bytes) remaining_bytes = std::min(remaining_bytes, kLabelledBdps * max_bdp_bytes);
    const uint64_t size_q = remaining_bytes == 0 ? 0 : uint64_t(std::floor(4 * std::log2(double(remaining_bytes))));
    const uint64_t rtt_q = base_rtt_ns / 100;
    return (awaiting_first_feedback ? kAwaitingFirstFeedbackBit : 0) | (rate_q << 56) | (size_q << 40) | (rtt_q & 0xffffffffffull);
}

namespace {

// Edges in (a, b) order, which the hash and the isomorphism checks take them in. The skipper builds them in that
// order already (conflict_edges); sorting them again anyway was 2 % of a MoE 8x13B skip-on run.
void sort_edges(FlowConflictGraph& g) {
    const auto by_ends = [](const auto& x, const auto& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; };
    if (!std::is_sorted(g.edges.begin(), g.edges.end(), by_ends)) std::sort(g.edges.begin(), g.edges.end(), by_ends);
}

// The hash of a graph whose edges are sorted.
uint64_t sorted_graph_hash(const FlowConflictGraph& g) {
    std::vector<uint64_t> color = vertex_classes(g);
    std::sort(color.begin(), color.end());
    uint64_t h = hash_string(g.context) ^ mix64(g.labels.size()) ^ mix64(g.edges.size() << 20);
    for (uint64_t c : color) h = mix64(h ^ c);
    return h;
}

}  // namespace

void finish_graph(FlowConflictGraph& g) {
    sort_edges(g);
    g.hash = sorted_graph_hash(g);
}

void finish_graph(FlowConflictGraph& g, GraphHashCache& cache) {
    sort_edges(g);
    // A multiply-add per 8 bytes, not a mix per member: this only picks candidates, each compared whole below
    // (a mix64 per edge and an FNV step per byte of the context made the lookup a third of what it saved).
    static_assert(sizeof(FlowConflictGraph::Edge) == 12, "edges are compared as bytes");
    uint64_t content = words_hash(g.context.data(), g.context.size(), g.labels.size());
    content = words_hash(g.labels.data(), g.labels.size() * sizeof(uint64_t), content);
    content = words_hash(g.edges.data(), g.edges.size() * sizeof(FlowConflictGraph::Edge), content);
    content = mix64(content);
    auto [lo, hi] = cache.graphs.equal_range(content);
    for (auto it = lo; it != hi; ++it) {
        const FlowConflictGraph& known = it->second;
        if (known.labels == g.labels && known.edges.size() == g.edges.size() && known.context == g.context &&
            std::memcmp(known.edges.data(), g.edges.data(), g.edges.size() * sizeof(FlowConflictGraph::Edge)) == 0) {
            g.hash = known.hash;
            ++cache.hits;
            return;
        }
    }
    g.hash = sorted_graph_hash(g);
    ++cache.misses;
    const size_t size = g.edges.size() + g.labels.size() + g.context.size() / 8 + 8;  // a graph's words, its node's included
    if (cache.held + size > GraphHashCache::kMaxHeld) {
        cache.graphs.clear();
        cache.held = 0;
    }
    cache.held += size;
    cache.graphs.emplace(content, g);
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
    "end_cc_state TEXT, key_acked TEXT, key_inflight TEXT)";
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
    // Files written before the CC states or the bytes in flight at the key were kept lack those columns: their
    // rows read NULL there and are outdated.
    bool prepared = false;
    for (const char* later : {", end_cc_state, key_acked, key_inflight", ", end_cc_state, NULL, NULL", ", NULL, NULL, NULL"}) {
        if (sqlite3_prepare_v2(d.db, (std::string("SELECT ") + kColumns + later + " FROM wormhole_memo ORDER BY rowid").c_str(), -1, &st, nullptr) == SQLITE_OK) {
            prepared = true;
            break;
        }
        sqlite3_finalize(st);
        st = nullptr;
    }
    if (!prepared) throw InputError(file.string(), "not an Orrery memo file (no wormhole_memo table): " + std::string(sqlite3_errmsg(d.db)));
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
            if (sqlite3_column_type(st, 8) == SQLITE_NULL || sqlite3_column_type(st, 9) == SQLITE_NULL || sqlite3_column_type(st, 10) == SQLITE_NULL) {
                ++table.outdated;
                continue;
            }
            e.end_cc = cc_states_from_json(text(8));
            e.key_acked = nlohmann::json::parse(text(9)).get<std::vector<uint64_t>>();
            e.key_inflight = nlohmann::json::parse(text(10)).get<std::vector<uint64_t>>();
            const size_t n = e.key.labels.size();
            if (e.end_cc.size() != n) throw std::runtime_error("end_cc_state does not match the graph's " + std::to_string(n) + " flows");
            if (e.bytes.size() != n || e.end_rate.size() != n || e.end_inflight.size() != n || e.key_acked.size() != n || e.key_inflight.size() != n) throw std::runtime_error("per-flow lists do not match the graph's " + std::to_string(n) + " flows");
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
    // A file from before the CC states or the bytes in flight at the key were kept gains their columns; its
    // rows keep NULL there.
    sqlite3_exec(d.db, "ALTER TABLE wormhole_memo ADD COLUMN end_cc_state TEXT", nullptr, nullptr, nullptr);
    sqlite3_exec(d.db, "ALTER TABLE wormhole_memo ADD COLUMN key_acked TEXT", nullptr, nullptr, nullptr);
    sqlite3_exec(d.db, "ALTER TABLE wormhole_memo ADD COLUMN key_inflight TEXT", nullptr, nullptr, nullptr);
    exec(d.db, "BEGIN", file);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(d.db, "INSERT INTO wormhole_memo(hash, context, labels, edges, transient_ps, bytes, end_rate_bytes_per_ps, end_inflight, ends, end_cc_state, key_acked, key_inflight) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, nullptr);
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
        const std::string key_acked = json_text(e.key_acked), key_inflight = json_text(e.key_inflight);
        sqlite3_bind_text(st, 11, key_acked.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 12, key_inflight.c_str(), -1, SQLITE_TRANSIENT);
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
