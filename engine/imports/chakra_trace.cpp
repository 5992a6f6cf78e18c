#include "imports/chakra_trace.h"

#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/gzip.h"
#include "et_def.pb.h"  // generated from imports/et_def.proto

namespace orrery {
namespace {

using ChakraProtoMsg::AttributeProto;

constexpr int kComp = 4, kSend = 5, kRecv = 6, kColl = 7, kMemLoad = 2, kMemStore = 3;

// Attributes are read from whichever integer case the producer used.
std::optional<int64_t> integer_of(const AttributeProto& a) {
    switch (a.value_case()) {
        case AttributeProto::kInt32Val: return a.int32_val();
        case AttributeProto::kInt64Val: return a.int64_val();
        case AttributeProto::kUint32Val: return a.uint32_val();
        case AttributeProto::kUint64Val: return a.uint64_val() > uint64_t(INT64_MAX) ? std::optional<int64_t>{} : int64_t(a.uint64_val());
        case AttributeProto::kSint32Val: return a.sint32_val();
        case AttributeProto::kSint64Val: return a.sint64_val();
        case AttributeProto::kFixed32Val: return a.fixed32_val();
        case AttributeProto::kFixed64Val: return a.fixed64_val() > uint64_t(INT64_MAX) ? std::optional<int64_t>{} : int64_t(a.fixed64_val());
        case AttributeProto::kSfixed32Val: return a.sfixed32_val();
        case AttributeProto::kSfixed64Val: return a.sfixed64_val();
        case AttributeProto::kBoolVal: return a.bool_val() ? 1 : 0;
        default: return std::nullopt;
    }
}

std::string read_binary(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw InputError(p.string(), "cannot be read");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

const char* collective_type_name(int64_t t) {
    static const char* names[] = {"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
    return t >= 0 && t < 10 ? names[t] : "unknown";
}

}  // namespace

ChakraRank read_chakra_trace(const std::string& raw_bytes, const std::string& source, Diagnostics& warnings) {
    const std::string bytes = is_gzip(raw_bytes) ? gzip_decompress(raw_bytes, source) : raw_bytes;
    ChakraRank rank;
    rank.file = source;
    google::protobuf::io::ArrayInputStream stream(bytes.data(), int(bytes.size()));
    google::protobuf::io::CodedInputStream in(&stream);
    size_t message = 0;
    std::set<uint64_t> ids;
    bool mem_warned = false;
    while (true) {
        const int at = in.CurrentPosition();
        if (size_t(at) == bytes.size()) break;
        uint32_t length = 0;
        if (!in.ReadVarint32(&length))
            throw InputError(source, "message " + std::to_string(message + 1) + " at byte " + std::to_string(at) + ": the length prefix is cut short");
        if (size_t(in.CurrentPosition()) + length > bytes.size())
            throw InputError(source, "message " + std::to_string(message + 1) + " at byte " + std::to_string(at) + " announces " + std::to_string(length) +
                                         " bytes but only " + std::to_string(bytes.size() - size_t(in.CurrentPosition())) + " remain: the file is cut short");
        const auto limit = in.PushLimit(int(length));
        if (message == 0) {
            ChakraProtoMsg::GlobalMetadata meta;
            if (!meta.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
                throw InputError(source, "the first message is not a Chakra GlobalMetadata (is this an execution trace?)");
            rank.version = meta.version();
            for (const AttributeProto& a : meta.attr())
                if (a.name() == "schema" && a.value_case() == AttributeProto::kStringVal) rank.version = a.string_val();
        } else {
            ChakraProtoMsg::Node n;
            if (!n.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
                throw InputError(source, "message " + std::to_string(message + 1) + " at byte " + std::to_string(at) + " is not a valid Chakra Node");
            ChakraNode node;
            node.id = n.id();
            node.name = n.name();
            node.type = int(n.type());
            node.duration_us = n.duration_micros();
            node.deps.assign(n.data_deps().begin(), n.data_deps().end());
            node.deps.insert(node.deps.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
            const std::string where = source + ": node " + std::to_string(node.id) + " \"" + node.name + "\"";
            if (!ids.insert(node.id).second) throw InputError(where, "node id " + std::to_string(node.id) + " appears twice in the file");
            for (const AttributeProto& a : n.attr()) {
                const std::optional<int64_t> v = integer_of(a);
                if (a.name() == "pg_name") node.has_pg_name = true;
                if (!v) continue;
                // comm_type of SEND/RECV nodes holds the node type in real traces: read it on collectives only.
                if (a.name() == "comm_type" && node.type == kColl) node.comm_type = *v;
                else if (a.name() == "comm_size") node.comm_size = *v;
                else if (a.name() == "comm_src") node.comm_src = *v;
                else if (a.name() == "comm_dst") node.comm_dst = *v;
                else if (a.name() == "comm_tag") node.comm_tag = *v;
            }
            if (node.comm_size < 0) throw InputError(where, "comm_size " + std::to_string(node.comm_size) + " is negative");
            if (node.duration_us > uint64_t(INT64_MAX / 1'000'000))
                throw InputError(where, "duration_micros " + std::to_string(node.duration_us) + " is too large to time in picoseconds");
            if ((node.type == kMemLoad || node.type == kMemStore) && !mem_warned) {
                warnings.warning(where, "remote-memory load/store nodes are not modelled: they take no time");
                mem_warned = true;
            }
            if (node.type < 0 || node.type > kColl) warnings.warning(where, "unknown node type " + std::to_string(node.type) + ": skipped (takes no time)");
            rank.nodes.push_back(std::move(node));
        }
        in.PopLimit(limit);
        ++message;
    }
    if (message == 0) throw InputError(source, "is empty: expected a GlobalMetadata message and then the nodes");
    return rank;
}

std::vector<ChakraRank> read_chakra_traces(const std::filesystem::path& prefix, Diagnostics& warnings) {
    std::vector<ChakraRank> ranks;
    for (int r = 0;; ++r) {
        std::filesystem::path f = prefix.string() + "." + std::to_string(r) + ".et";
        if (!std::filesystem::exists(f)) f += ".gz";
        if (!std::filesystem::exists(f)) break;
        ranks.push_back(read_chakra_trace(read_binary(f), f.string(), warnings));
    }
    if (ranks.empty()) throw InputError(prefix.string() + ".0.et", "no such trace file (ASTRA-sim names them PREFIX.<rank>.et)");
    return ranks;
}

namespace {

// Chakra traces as a task graph. Map: the constructor orders each rank's nodes by their dependencies (Kahn's
// algorithm, ties by file position) → per iteration: every node an entry join and a body (compute ops in
// place; COLL, SEND and RECV nodes collected) → collectives (the k-th of every rank is one) → point to point
// (the k-th send of (from, to, tag) delivers to the k-th receive) → dependencies, once every node has its exit.
struct ChakraGraph {
    using PeerKey = std::tuple<uint32_t, uint32_t, int64_t>;  // (from, to, tag)

    const std::vector<ChakraRank>& ranks;
    const CollectiveContext& c;
    Diagnostics& warnings;
    const uint32_t world;
    std::vector<std::vector<std::vector<uint32_t>>> deps_of;  // per rank and node: its dependencies as positions in its file
    std::vector<std::vector<uint32_t>> order;                 // per rank: its nodes in dependency order
    TaskGraph g;
    std::vector<uint32_t> previous_iteration;
    // The iteration being built: per rank and node its entry join and what dependants wait on; its COLL nodes
    // in order; sends and receives by (from, to, tag) in order.
    std::string tag;
    std::vector<std::vector<uint32_t>> entry, exit, collectives;
    std::map<PeerKey, std::vector<uint32_t>> sends, recvs;

    ChakraGraph(const std::vector<ChakraRank>& traces, const CollectiveContext& context, Diagnostics& w)
        : ranks(traces), c(context), warnings(w), world(uint32_t(traces.size())), deps_of(world), order(world), previous_iteration(world, UINT32_MAX) {
        for (uint32_t r = 0; r < world; ++r) {
            const std::vector<ChakraNode>& nodes = ranks[r].nodes;
            std::map<uint64_t, uint32_t> index;
            for (uint32_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
            deps_of[r].resize(nodes.size());
            std::vector<uint32_t> waiting(nodes.size());
            std::vector<std::vector<uint32_t>> next(nodes.size());
            for (uint32_t i = 0; i < nodes.size(); ++i)
                for (uint64_t d : nodes[i].deps) {
                    auto it = index.find(d);
                    if (it == index.end())
                        throw InputError(ranks[r].file + ": node " + std::to_string(nodes[i].id),
                                         "depends on node " + std::to_string(d) + ", which is not in the trace");
                    deps_of[r][i].push_back(it->second);
                    ++waiting[i];
                    next[it->second].push_back(i);
                }
            std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready;
            for (uint32_t i = 0; i < nodes.size(); ++i)
                if (waiting[i] == 0) ready.push(i);
            while (!ready.empty()) {
                const uint32_t i = ready.top();
                ready.pop();
                order[r].push_back(i);
                for (uint32_t n : next[i])
                    if (--waiting[n] == 0) ready.push(n);
            }
            if (order[r].size() != nodes.size())
                throw InputError(ranks[r].file, std::to_string(nodes.size() - order[r].size()) + " nodes depend on each other in a cycle");
        }
        bool pg_warned = false;
        for (const ChakraRank& rk : ranks)
            for (const ChakraNode& n : rk.nodes)
                if (n.has_pg_name && n.type == kColl && !pg_warned) {
                    warnings.warning(rk.file, "collectives name process groups (pg_name); without ASTRA-sim's comm-group file they run over all " +
                                                  std::to_string(world) + " ranks");
                    pg_warned = true;
                }

        g.world = world;
        g.limit_to_memory("workload.import.path");
    }

    void iteration(int it, int iterations) {
        tag = iterations > 1 ? "it" + std::to_string(it) + " " : "";
        const size_t begin = g.size();
        entry.assign(world, {});
        exit.assign(world, {});
        collectives.assign(world, {});
        sends.clear();
        recvs.clear();
        // Every node: an entry join (its dependencies), then its body; `exit` is what dependants wait on.
        for (uint32_t r = 0; r < world; ++r) {
            entry[r].resize(ranks[r].nodes.size());
            exit[r].resize(ranks[r].nodes.size());
            for (uint32_t i = 0; i < ranks[r].nodes.size(); ++i) {
                Op j;
                j.rank = j.peer = r;
                entry[r][i] = exit[r][i] = g.add(j, {previous_iteration[r]});
            }
        }
        for (uint32_t r = 0; r < world; ++r) node_bodies(r);
        emit_collectives();
        emit_point_to_point();
        wire_dependencies();
        for (size_t op = begin; op < g.size(); ++op) g.ops[op].iteration = uint16_t(it);
    }

    // Rank r's compute nodes as ops in its stream; its COLL, SEND and RECV nodes collected for matching.
    void node_bodies(uint32_t r) {
        uint32_t last_compute = UINT32_MAX;
        for (uint32_t i : order[r]) {
            const ChakraNode& n = ranks[r].nodes[i];
            const std::string where = ranks[r].file + ": node " + std::to_string(n.id) + " \"" + n.name + "\"";
            auto peer = [&](int64_t v, const char* field) {
                if (v < 0 || v >= int64_t(world) || uint32_t(v) == r)
                    throw InputError(where, std::string(field) + " " + std::to_string(v) + " is not another rank of the " + std::to_string(world) + " traces");
                return uint32_t(v);
            };
            if (n.type == kComp) {
                Op op;
                op.kind = OpKind::compute;
                op.rank = r;
                op.duration = n.duration_us > 0 ? int64_t(n.duration_us) * 1'000'000 : 1000;  // ASTRA-sim: 1 ns when none is recorded
                op.name = g.name(tag + n.name);
                exit[r][i] = last_compute = g.add(op, {entry[r][i], last_compute});
            } else if (n.type == kColl) {
                collectives[r].push_back(i);
            } else if (n.type == kSend) {
                sends[{r, peer(n.comm_dst, "comm_dst"), n.comm_tag}].push_back(i);
            } else if (n.type == kRecv) {
                recvs[{peer(n.comm_src, "comm_src"), r, n.comm_tag}].push_back(i);
            }
        }
    }

    void emit_collectives() {
        // Collectives: the k-th of every rank is one collective.
        for (uint32_t r = 1; r < world; ++r)
            if (collectives[r].size() != collectives[0].size())
                throw InputError(ranks[r].file, "has " + std::to_string(collectives[r].size()) + " collective nodes but " + ranks[0].file + " has " +
                                                    std::to_string(collectives[0].size()) + ": every rank must take part in every collective");
        std::vector<uint32_t> all(world);
        for (uint32_t r = 0; r < world; ++r) all[r] = r;
        for (size_t k = 0; k < collectives[0].size(); ++k) {
            const ChakraNode& first = ranks[0].nodes[collectives[0][k]];
            std::vector<uint32_t> ready;
            for (uint32_t r = 0; r < world; ++r) {
                const ChakraNode& n = ranks[r].nodes[collectives[r][k]];
                if (n.comm_type != first.comm_type || n.comm_size != first.comm_size)
                    throw InputError(ranks[r].file + ": node " + std::to_string(n.id),
                                     "collective " + std::to_string(k + 1) + " is " + collective_type_name(n.comm_type) + " of " + std::to_string(n.comm_size) +
                                         " bytes, but in " + ranks[0].file + " it is " + collective_type_name(first.comm_type) + " of " +
                                         std::to_string(first.comm_size) + " bytes");
                ready.push_back(entry[r][collectives[r][k]]);
            }
            const std::string where = ranks[0].file + ": node " + std::to_string(first.id) + " \"" + first.name + "\"";
            uint32_t end = UINT32_MAX;
            if (first.comm_type == 9) {  // BARRIER: everyone waits for everyone
                end = g.add(Op{}, ready);
            } else {
                CollectiveKind kind;
                switch (first.comm_type) {
                    case 0: kind = CollectiveKind::all_reduce; break;
                    case 2: kind = CollectiveKind::all_gather; break;
                    case 5: kind = CollectiveKind::broadcast; break;
                    case 6: kind = CollectiveKind::all_to_all; break;
                    case 7:
                    case 8: kind = CollectiveKind::reduce_scatter; break;
                    default:
                        throw InputError(where, std::string("collective ") + collective_type_name(first.comm_type) +
                                                    " is not one Orrery (or ASTRA-sim) runs: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, BARRIER");
                }
                const uint32_t coll = emit_collective(g, c, kind, Group::dp, all, first.comm_size, ready, tag + (first.name.empty() ? "collective" : first.name));
                end = g.collectives[coll].end;
            }
            for (uint32_t r = 0; r < world; ++r) exit[r][collectives[r][k]] = end;
        }
    }

    void emit_point_to_point() {
        // Point to point: the k-th send of (from, to, tag) delivers to the k-th receive.
        for (const auto& [key, list] : sends) {
            const auto& [from, to, tg] = key;
            auto rv = recvs.find(key);
            const size_t matched = rv == recvs.end() ? 0 : rv->second.size();
            if (matched != list.size())
                throw InputError(ranks[from].file, std::to_string(list.size()) + " sends to rank " + std::to_string(to) + " with tag " + std::to_string(tg) + ", but " +
                                                       ranks[to].file + " has " + std::to_string(matched) + " receives from rank " + std::to_string(from) + " with that tag");
            for (size_t k = 0; k < list.size(); ++k) {
                const ChakraNode& s = ranks[from].nodes[list[k]];
                const ChakraNode& v = ranks[to].nodes[rv->second[k]];
                if (s.comm_size != v.comm_size)
                    warnings.warning(ranks[to].file + ": node " + std::to_string(v.id), "receives " + std::to_string(v.comm_size) + " bytes but the matching send (" +
                                                                                          ranks[from].file + ": node " + std::to_string(s.id) + ") sends " +
                                                                                          std::to_string(s.comm_size) + "; the send's size is used");
                const uint32_t last = emit_send(g, c, Group::pp, from, to, s.comm_size, entry[from][list[k]], tag + (s.name.empty() ? "send" : s.name));
                exit[from][list[k]] = last;
                exit[to][rv->second[k]] = g.add(Op{}, {entry[to][rv->second[k]], last});
            }
        }
        for (const auto& [key, list] : recvs)
            if (!sends.count(key))
                throw InputError(ranks[std::get<1>(key)].file, std::to_string(list.size()) + " receives from rank " + std::to_string(std::get<0>(key)) + " with tag " +
                                                                   std::to_string(std::get<2>(key)) + " that no send matches");
    }

    void wire_dependencies() {
        // Dependencies, now that every node has its exit.
        for (uint32_t r = 0; r < world; ++r) {
            for (uint32_t i = 0; i < deps_of[r].size(); ++i)
                for (uint32_t d : deps_of[r][i]) g.add_dep(entry[r][i], exit[r][d]);
            Op done;
            done.rank = done.peer = r;
            if (!exit[r].empty()) previous_iteration[r] = g.add(done, exit[r]);
        }
    }
};

}  // namespace

TaskGraph build_chakra_graph(const std::vector<ChakraRank>& ranks, const CollectiveContext& c, int iterations, Diagnostics& warnings) {
    ChakraGraph b(ranks, c, warnings);
    for (int it = 0; it < iterations; ++it) b.iteration(it, iterations);
    return std::move(b.g);
}

}  // namespace orrery
