#include "imports/msccl.h"

#include "common/nesting.h"
#include "scenario/load.h"

#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>
#include <tinyxml2.h>

#include "common/dag.h"
#include "scenario/load.h"

namespace orrery {
namespace {

CollectiveKind collective_of(const std::string& name, const std::string& where) {
    static const std::map<std::string, CollectiveKind> kinds{
        {"allreduce", CollectiveKind::all_reduce},         {"all_reduce", CollectiveKind::all_reduce},   {"allgather", CollectiveKind::all_gather},
        {"all_gather", CollectiveKind::all_gather},        {"reducescatter", CollectiveKind::reduce_scatter},
        {"reduce_scatter", CollectiveKind::reduce_scatter}, {"alltoall", CollectiveKind::all_to_all},   {"all_to_all", CollectiveKind::all_to_all},
        {"broadcast", CollectiveKind::broadcast}};
    auto it = kinds.find(name);
    if (it == kinds.end())
        throw InputError(where, "collective \"" + name + "\" is not one Orrery issues; a custom algorithm can replace allreduce, allgather, "
                                "reduce_scatter, alltoall or broadcast");
    return it->second;
}

// Kahn's algorithm over `after`: an algorithm whose ops wait on each other in a circle would never finish.
CustomAlgorithm checked(CustomAlgorithm a) {
    std::vector<std::vector<uint32_t>> after;
    for (const CustomOp& op : a.ops) after.push_back(op.after);
    const size_t done = runnable_count(after);
    if (done != a.ops.size())
        throw InputError(a.source, std::to_string(a.ops.size() - done) + " of its " + std::to_string(a.ops.size()) +
                                       " operations wait on each other in a cycle (receives before the sends they need, or circular dependencies)");
    return a;
}

// ---- MSCCL XML ---------------------------------------------------------------------------------------------
int attr_int(const tinyxml2::XMLElement* e, const char* name, const std::string& source, std::optional<int> fallback = std::nullopt) {
    const char* v = e->Attribute(name);
    const std::string where = source + ":" + std::to_string(e->GetLineNum());
    if (!v) {
        if (fallback) return *fallback;
        throw InputError(where, "<" + std::string(e->Name()) + "> has no attribute \"" + name + "\"");
    }
    int out = 0;
    // The whole value: tinyxml2 reads "24xyz" as 24.
    const std::string text = v;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size())
        throw InputError(where, "attribute " + std::string(name) + "=\"" + v + "\" of <" + e->Name() + "> is not an integer");
    return out;
}

struct XmlStep {
    int gpu, tb, s, line;
    std::string type;
    int cnt, depid, deps;
    uint32_t index;
};

}  // namespace

CustomAlgorithm read_msccl_xml(const std::string& text, const std::string& source, Diagnostics& warnings) {
    if (const auto deep = xml_too_deep(text)) throw InputError(source + ":" + std::to_string(deep->line), too_deep_message("XML"));
    tinyxml2::XMLDocument doc;
    if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS)
        throw InputError(source + ":" + std::to_string(doc.ErrorLineNum()), std::string("not valid XML (") + doc.ErrorName() + ")");
    const tinyxml2::XMLElement* algo = doc.FirstChildElement("algo");
    if (!algo) throw InputError(source, "expected an MSCCL algorithm: a root element <algo>");
    const std::string at = source + ":" + std::to_string(algo->GetLineNum());
    CustomAlgorithm a;
    a.source = source;
    a.name = algo->Attribute("name") ? algo->Attribute("name") : "unnamed";
    a.kind = collective_of(algo->Attribute("coll") ? algo->Attribute("coll") : "", at + ": coll");
    a.gpus = attr_int(algo, "ngpus", source);
    a.chunks_per_loop = attr_int(algo, "nchunksperloop", source);
    if (a.gpus < 2) throw InputError(at, "ngpus must be at least 2, found " + std::to_string(a.gpus));
    if (a.chunks_per_loop < 1) throw InputError(at, "nchunksperloop must be at least 1, found " + std::to_string(a.chunks_per_loop));

    std::vector<XmlStep> steps;
    std::map<std::tuple<int, int>, std::pair<int, int>> tb_peers;  // (gpu, tb) → (send, recv)
    std::map<std::tuple<int, int>, int> tb_chan;
    std::set<int> gpus_seen;
    for (const tinyxml2::XMLElement* gpu = algo->FirstChildElement("gpu"); gpu; gpu = gpu->NextSiblingElement("gpu")) {
        const int g = attr_int(gpu, "id", source);
        const std::string gwhere = source + ":" + std::to_string(gpu->GetLineNum());
        if (g < 0 || g >= a.gpus) throw InputError(gwhere, "gpu id " + std::to_string(g) + " is outside 0.." + std::to_string(a.gpus - 1) + " (ngpus)");
        if (!gpus_seen.insert(g).second) throw InputError(gwhere, "gpu " + std::to_string(g) + " is listed twice");
        for (const tinyxml2::XMLElement* tb = gpu->FirstChildElement("tb"); tb; tb = tb->NextSiblingElement("tb")) {
            const int t = attr_int(tb, "id", source);
            const int send = attr_int(tb, "send", source, -1), recv = attr_int(tb, "recv", source, -1);
            const std::string twhere = source + ":" + std::to_string(tb->GetLineNum());
            for (int peer : {send, recv})
                if (peer < -1 || peer >= a.gpus || peer == g)
                    throw InputError(twhere, "thread block " + std::to_string(t) + " of gpu " + std::to_string(g) + " names peer " + std::to_string(peer) +
                                                 "; expected another GPU in 0.." + std::to_string(a.gpus - 1) + " or -1");
            tb_peers[{g, t}] = {send, recv};
            tb_chan[{g, t}] = attr_int(tb, "chan", source, 0);
            int expect = 0;
            for (const tinyxml2::XMLElement* st = tb->FirstChildElement(); st; st = st->NextSiblingElement()) {
                const std::string tag = st->Name();
                if (tag != "step" && tag != "op") continue;
                XmlStep x;
                x.gpu = g, x.tb = t, x.line = st->GetLineNum();
                x.s = attr_int(st, tag == "step" ? "s" : "step", source, expect);
                x.type = st->Attribute("type") ? st->Attribute("type") : "";
                x.cnt = attr_int(st, "cnt", source, 1);
                x.depid = attr_int(st, "depid", source, -1);
                x.deps = attr_int(st, "deps", source, -1);
                if (x.s != expect)
                    throw InputError(source + ":" + std::to_string(x.line), "step " + std::to_string(x.s) + " of gpu " + std::to_string(g) + " tb " +
                                                                                std::to_string(t) + " is out of order; expected step " + std::to_string(expect));
                if (x.cnt < 1) throw InputError(source + ":" + std::to_string(x.line), "cnt must be at least 1, found " + std::to_string(x.cnt));
                ++expect;
                x.index = uint32_t(steps.size());
                steps.push_back(x);
            }
        }
    }
    if (int(gpus_seen.size()) != a.gpus)
        throw InputError(at, "ngpus=\"" + std::to_string(a.gpus) + "\" but the file describes " + std::to_string(gpus_seen.size()) + " GPUs");

    static const std::set<std::string> sends{"s", "rcs", "rrs", "rrcs"}, recvs{"r", "rcs", "rrs", "rrc", "rrcs"}, locals{"cpy", "re", "nop"};
    std::map<std::tuple<int, int, int>, uint32_t> index_of;                 // (gpu, tb, step) → op
    std::map<std::tuple<int, int, int>, std::vector<uint32_t>> send_q, recv_q;  // (from, to, chan) → ops in order
    a.ops.resize(steps.size());
    for (const XmlStep& x : steps) {
        const std::string where = source + ":" + std::to_string(x.line);
        const bool is_send = sends.count(x.type) > 0, is_recv = recvs.count(x.type) > 0;
        if (!is_send && !is_recv && !locals.count(x.type))
            throw InputError(where, "step type \"" + x.type + "\" is not an MSCCL step (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop)");
        const auto [send, recv] = tb_peers[{x.gpu, x.tb}];
        const int chan = tb_chan[{x.gpu, x.tb}];
        CustomOp& op = a.ops[x.index];
        op.gpu = x.gpu;
        op.chunks = x.cnt;
        if (is_send) {
            if (send < 0) throw InputError(where, "step type \"" + x.type + "\" sends, but its thread block has send=\"-1\"");
            op.send_to = send;
            send_q[{x.gpu, send, chan}].push_back(x.index);
        }
        if (is_recv) {
            if (recv < 0) throw InputError(where, "step type \"" + x.type + "\" receives, but its thread block has recv=\"-1\"");
            recv_q[{recv, x.gpu, chan}].push_back(x.index);
        }
        if (x.s > 0) op.after.push_back(x.index - 1);
        index_of[{x.gpu, x.tb, x.s}] = x.index;
    }
    for (const XmlStep& x : steps)
        if (x.depid >= 0) {
            auto it = index_of.find({x.gpu, x.depid, x.deps});
            if (it == index_of.end())
                throw InputError(source + ":" + std::to_string(x.line), "depends on step " + std::to_string(x.deps) + " of thread block " + std::to_string(x.depid) +
                                                                            " of gpu " + std::to_string(x.gpu) + ", which does not exist");
            a.ops[x.index].after.push_back(it->second);
        }
    for (const auto& [key, rq] : recv_q) {
        const auto& [from, to, chan] = key;
        const std::vector<uint32_t>& sq = send_q[key];
        if (sq.size() != rq.size())
            throw InputError(source, "gpu " + std::to_string(to) + " receives " + std::to_string(rq.size()) + " times from gpu " + std::to_string(from) +
                                         " on channel " + std::to_string(chan) + ", but gpu " + std::to_string(from) + " sends to it " +
                                         std::to_string(sq.size()) + " times");
        for (size_t k = 0; k < rq.size(); ++k) a.ops[rq[k]].after.push_back(sq[k]);
    }
    for (const auto& [key, sq] : send_q)
        if (!recv_q.count(key))
            throw InputError(source, "gpu " + std::to_string(std::get<0>(key)) + " sends " + std::to_string(sq.size()) + " times to gpu " +
                                         std::to_string(std::get<1>(key)) + " on channel " + std::to_string(std::get<2>(key)) + ", which never receives");
    (void)warnings;
    return checked(std::move(a));
}

// ---- MSCCL++ execution plan ----------------------------------------------------------------------------------
namespace {
CustomAlgorithm read_mscclpp_plan(const std::string& text, const std::string& source, Diagnostics& warnings);
}

CustomAlgorithm read_mscclpp_json(const std::string& text, const std::string& source, Diagnostics& warnings) {
    try {
        return read_mscclpp_plan(text, source, warnings);
    } catch (const nlohmann::json::exception& e) {
        // A field of another type than the plan format gives it (a null where a number goes, say).
        const std::string what = e.what();
        const size_t tail = what.find("] ");
        throw InputError(source, "not a usable MSCCL++ execution plan: a field has the wrong type (" +
                                     (tail == std::string::npos ? what : what.substr(tail + 2)) + ")");
    }
}

namespace {

// An MSCCL++ execution plan as a custom algorithm. Map: the header (name, collective, GPUs, chunks) → per GPU its
// channels and remote buffers → per thread block its ops in order (each an entry, its sends to the peers whose
// buffers it writes, an exit) → matching: a read waits for every peer's write into its chunks, a wait for the
// peer's matching signal.
struct MscclppPlan {
    // Per op of the plan: its wait-only entry, its sends, its exit; writes and signals for the matching pass.
    struct PlanOp {
        int gpu;
        std::string path, name;
        uint32_t entry, exit;
        std::vector<std::tuple<std::string, int64_t, int64_t>> reads;  // local (buffer type, first chunk, count)
        std::vector<int> signal_to, wait_from;
    };
    // A GPU's channels per type, flattened (a thread block's channel id indexes this list), and its remote buffers.
    struct GpuChannels {
        std::map<std::string, std::vector<int>> peers_by_type;
        std::vector<int> remote_rank;
        std::vector<std::string> remote_type;
    };

    const std::string& source;
    Diagnostics& warnings;
    CustomAlgorithm a;
    std::vector<PlanOp> plan;
    std::map<std::tuple<int, std::string>, std::vector<std::tuple<int64_t, int64_t, uint32_t>>> writes;  // (rank, type) → (first, count, op)

    const nlohmann::json& need(const nlohmann::json& j, const char* key, const std::string& path) const {
        if (!j.is_object() || !j.contains(key)) throw InputError(source + ": " + path, std::string("missing \"") + key + "\"");
        return j[key];
    }
    int64_t integer(const nlohmann::json& j, const char* key, const std::string& path) const {
        const nlohmann::json& v = need(j, key, path);
        if (!v.is_number_integer()) throw InputError(source + ": " + path + "." + key, "expected an integer, found " + v.dump());
        return v.get<int64_t>();
    }
    uint32_t add_op(int gpu, int send_to, double chunks, std::vector<uint32_t> after) {
        CustomOp op;
        op.gpu = gpu, op.send_to = send_to, op.chunks = chunks, op.after = std::move(after);
        a.ops.push_back(op);
        return uint32_t(a.ops.size() - 1);
    }

    // The plan's name, collective and chunking; returns its GPUs.
    const nlohmann::json& read_header(const nlohmann::json& doc) {
        a.source = source;
        a.name = need(doc, "name", "plan").is_string() ? doc["name"].get<std::string>() : "unnamed";
        const nlohmann::json& coll = need(doc, "collective", "plan");
        a.kind = collective_of(coll.is_string() ? coll.get<std::string>() : coll.dump(), source + ": collective");
        for (const char* key : {"min_message_size", "max_message_size"})
            if (doc.contains(key) && doc[key].is_number_float())
                warnings.warning(source + ": " + key, "value " + doc[key].dump() + " is beyond 64-bit integers; it only limits where the plan applies and is not used");
        const nlohmann::json& gpus = need(doc, "gpus", "plan");
        if (!gpus.is_array() || gpus.size() < 2) throw InputError(source + ": gpus", "expected an array of at least 2 GPUs");
        a.gpus = int(gpus.size());
        const char* chunk_field = a.kind == CollectiveKind::all_gather ? "output_chunks" : "input_chunks";
        a.chunks_per_loop = int(integer(gpus[0], chunk_field, "gpus[0]"));
        if (a.chunks_per_loop < 1) throw InputError(source + ": gpus[0]." + chunk_field, "expected at least 1 chunk");

        return gpus;
    }

    void read_gpu(const nlohmann::json& gpu, size_t g) {
        const std::string gp = "gpus[" + std::to_string(g) + "]";
        if (integer(gpu, "id", gp) != int64_t(g)) throw InputError(source + ": " + gp + ".id", "expected " + std::to_string(g) + " (GPUs in rank order)");
        GpuChannels ch;
        if (gpu.contains("channels"))
            for (const auto& c : gpu["channels"]) {
                const std::string type = c.value("channel_type", std::string("none"));
                if (c.contains("connected_to"))
                    for (const auto& peer : c["connected_to"]) ch.peers_by_type[type].push_back(peer.get<int>());
            }
        if (gpu.contains("remote_buffers"))
            for (const auto& rb : gpu["remote_buffers"]) {
                ch.remote_rank.push_back(int(rb.value("rank", -1)));
                ch.remote_type.push_back(rb.value("type", std::string("i")));
            }
        const nlohmann::json& tbs = need(gpu, "threadblocks", gp);
        for (size_t t = 0; t < tbs.size(); ++t) {
            const std::string tp = gp + ".threadblocks[" + std::to_string(t) + "]";
            std::map<std::string, std::vector<int>> tb_channels;
            if (tbs[t].contains("channels"))
                for (const auto& c : tbs[t]["channels"])
                    for (const auto& id : c["channel_ids"]) tb_channels[c.value("channel_type", std::string("none"))].push_back(id.get<int>());
            uint32_t prev = UINT32_MAX;
            const nlohmann::json& ops = need(tbs[t], "ops", tp);
            for (size_t o = 0; o < ops.size(); ++o) read_op(ops[o], g, gp, tp + ".ops[" + std::to_string(o) + "]", ch, tb_channels, prev);
        }
    }

    // One op of a thread block, after `prev` (its predecessor's exit, which it then becomes).
    void read_op(const nlohmann::json& op, size_t g, const std::string& gp, const std::string& op_path, GpuChannels& ch,
                 std::map<std::string, std::vector<int>>& tb_channels, uint32_t& prev) {
        std::map<std::string, std::vector<int>>& peers_by_type = ch.peers_by_type;
        const std::vector<int>& remote_rank = ch.remote_rank;
        const std::vector<std::string>& remote_type = ch.remote_type;
        PlanOp p;
        p.gpu = int(g), p.path = op_path, p.name = op.value("name", std::string("?"));
        p.entry = add_op(int(g), -1, 0, prev == UINT32_MAX ? std::vector<uint32_t>{} : std::vector<uint32_t>{prev});
        std::map<int, double> to_peer;                                           // peer → chunks
        std::vector<std::tuple<int, std::string, int64_t, int64_t>> remote_writes;  // (peer, type, first, count)
        if (op.contains("dst_buff"))
            for (const auto& d : op["dst_buff"]) {
                if (!d.contains("buffer_id")) continue;
                const int64_t id = d["buffer_id"].get<int64_t>();
                if (id < 0 || size_t(id) >= remote_rank.size())
                    throw InputError(source + ": " + op_path + ".dst_buff", "buffer_id " + std::to_string(id) + " is not one of " + gp + "'s " +
                                                                               std::to_string(remote_rank.size()) + " remote_buffers");
                const int peer = remote_rank[size_t(id)];
                if (peer < 0 || peer >= a.gpus || peer == int(g))
                    throw InputError(source + ": " + gp + ".remote_buffers[" + std::to_string(id) + "].rank", "expected another GPU of the plan");
                to_peer[peer] += double(d.value("size", int64_t(1)));
                remote_writes.emplace_back(peer, remote_type[size_t(id)], d.value("index", int64_t(0)), d.value("size", int64_t(1)));
            }
        std::map<int, uint32_t> send_of;
        for (auto [peer, chunks] : to_peer) send_of[peer] = add_op(int(g), peer, chunks, {p.entry});
        for (const auto& [peer, type, first, count] : remote_writes) writes[{peer, type}].emplace_back(first, count, send_of[peer]);
        if (op.contains("src_buff"))
            for (const auto& s : op["src_buff"])
                if (s.contains("type")) p.reads.emplace_back(s["type"].get<std::string>(), s.value("index", int64_t(0)), s.value("size", int64_t(1)));
        const std::string ct = op.value("channel_type", std::string("none"));
        if ((p.name == "signal" || p.name == "wait" || p.name == "rlxsignal" || p.name == "rlxwait") && op.contains("channel_ids"))
            for (const auto& cid : op["channel_ids"]) {
                const int local = cid.get<int>();
                const std::vector<int>& ids = tb_channels[ct];
                if (local < 0 || size_t(local) >= ids.size() || ids[size_t(local)] < 0 || size_t(ids[size_t(local)]) >= peers_by_type[ct].size())
                    throw InputError(source + ": " + op_path + ".channel_ids", "channel " + std::to_string(local) + " of type \"" + ct +
                                                                                   "\" is not a channel of this thread block");
                const int peer = peers_by_type[ct][size_t(ids[size_t(local)])];
                (p.name.find("signal") != std::string::npos ? p.signal_to : p.wait_from).push_back(peer);
            }
        std::vector<uint32_t> all{p.entry};
        for (auto [peer, op_index] : send_of) all.push_back(op_index);
        p.exit = add_op(int(g), -1, 0, all);
        prev = p.exit;
        plan.push_back(std::move(p));
    }

    void match() {
        // Reads of a buffer wait for every peer's write into those chunks; waits for the peer's matching signal.
        std::map<std::pair<int, int>, std::vector<uint32_t>> signals;  // (from, to) → exits in plan order
        std::map<std::pair<int, int>, size_t> waits_seen;
        for (const PlanOp& p : plan)
            for (int to : p.signal_to) signals[{p.gpu, to}].push_back(p.exit);
        for (const PlanOp& p : plan) {
            for (const auto& [type, first, count] : p.reads) {
                auto it = writes.find({p.gpu, type});
                if (it == writes.end()) continue;
                for (const auto& [wfirst, wcount, op] : it->second)
                    if (wfirst < first + count && first < wfirst + wcount) a.ops[p.entry].after.push_back(op);
            }
            for (int from : p.wait_from) {
                const size_t k = waits_seen[{from, p.gpu}]++;
                const std::vector<uint32_t>& s = signals[{from, p.gpu}];
                if (k >= s.size())
                    throw InputError(source + ": " + p.path, "waits for signal " + std::to_string(k + 1) + " from gpu " + std::to_string(from) + ", which signals gpu " +
                                                                 std::to_string(p.gpu) + " only " + std::to_string(s.size()) + " times");
                a.ops[p.entry].after.push_back(s[k]);
            }
        }
    }
};

CustomAlgorithm read_mscclpp_plan(const std::string& text, const std::string& source, Diagnostics& warnings) {
    Diagnostics parse_errors;
    const nlohmann::json doc = parse_json_text(text, source, parse_errors);
    if (parse_errors.has_errors()) throw InputError(parse_errors);
    MscclppPlan m{source, warnings, {}, {}, {}};
    const nlohmann::json& gpus = m.read_header(doc);
    for (size_t g = 0; g < gpus.size(); ++g) m.read_gpu(gpus[g], g);
    m.match();
    return checked(std::move(m.a));
}

}  // namespace

CustomAlgorithm read_custom_algorithm(const std::filesystem::path& file, Diagnostics& warnings) {
    const std::string text = read_text_file(file);
    const std::string ext = file.extension().string();
    if (ext == ".xml") return read_msccl_xml(text, file.string(), warnings);
    if (ext == ".json") return read_mscclpp_json(text, file.string(), warnings);
    throw InputError(file.string(), "a custom collective algorithm is MSCCL XML (.xml) or an MSCCL++ execution plan (.json)");
}

}  // namespace orrery
