#include "imports/simai_workload.h"

#include "workload/build.h"

#include <charconv>
#include <map>

namespace orrery {
namespace {

struct Token {
    std::string text;
    int line;
};

std::vector<Token> tokens_from(const std::string& text, size_t from, int first_line) {
    std::vector<Token> out;
    int line = first_line;
    size_t i = from;
    while (i < text.size()) {
        const char ch = text[i];
        if (ch == '\n') ++line;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        out.push_back({text.substr(i, j - i), line});
        i = j;
    }
    return out;
}

int64_t parse_count(const Token& t, const std::string& source, const char* field, int64_t max) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > max))
        throw InputError(source + ":" + std::to_string(t.line), std::string(field) + " \"" + t.text + "\" is too large (at most " + std::to_string(max) + ")");
    if (ec != std::errc() || end != t.text.data() + t.text.size() || v < 0)
        throw InputError(source + ":" + std::to_string(t.line), std::string("expected ") + field + " as a non-negative integer, found \"" + t.text + "\"");
    return v;
}

// Collective strings as SimAI matches them: by prefix, ALLREDUCE first (so ALLREDUCEALLTOALL is an all-reduce),
// then the suffix picks the group.
SimaiComm comm_of(const std::string& s, int64_t bytes, bool weight_column, const std::string& where, Diagnostics& warnings) {
    SimaiComm c;
    c.bytes = bytes;
    if (s == "NONE") return c;
    static const std::pair<const char*, CollectiveKind> prefixes[] = {{"ALLREDUCE", CollectiveKind::all_reduce},
                                                                      {"ALLTOALL", CollectiveKind::all_to_all},
                                                                      {"ALLGATHER", CollectiveKind::all_gather},
                                                                      {"REDUCESCATTER", CollectiveKind::reduce_scatter}};
    for (const auto& [prefix, kind] : prefixes) {
        const std::string p = prefix;
        if (s.compare(0, p.size(), p) != 0) continue;
        const std::string suffix = s.substr(p.size());
        c.kind = kind;
        if (suffix.empty()) c.group = weight_column ? SimaiGroup::dp : SimaiGroup::tp;
        else if (suffix == "_EP") c.group = SimaiGroup::ep;
        else if (suffix == "_DP_EP") c.group = SimaiGroup::dp_ep;
        else
            warnings.warning(where, "\"" + s + "\" has the suffix \"" + suffix + "\", which names no group (SimAI: group NONE); it is not communicated");
        return c;
    }
    warnings.warning(where, "\"" + s + "\" is not a collective SimAI issues (it starts with none of ALLREDUCE, ALLTOALL, ALLGATHER, REDUCESCATTER); "
                            "like SimAI, Orrery does not communicate it");
    return c;
}

}  // namespace

SimaiWorkload read_simai_workload(const std::string& text, const std::string& source, Diagnostics& warnings) {
    SimaiWorkload w;
    w.source = source;
    const size_t eol1 = text.find('\n');
    if (eol1 == std::string::npos) throw InputError(source + ":1", "expected the header line and then the record count on line 2");
    const std::vector<Token> header = tokens_from(text.substr(0, eol1), 0, 1);
    if (header.empty()) throw InputError(source + ":1", "empty header: expected a parallelism policy such as HYBRID_TRANSFORMER_FWD_IN_BCKWD");
    w.policy = header[0].text;
    static const char* policies[] = {"DATA", "HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED", "MODEL",
                                     "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", "MICRO", "DISTRIBUTED_INFERENCE"};
    bool known = false;
    for (const char* p : policies) known = known || w.policy == p;
    if (!known) throw InputError(source + ":1", "unknown parallelism policy \"" + w.policy + "\" (SimAI cannot decode it either)");
    if (w.policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" && w.policy != "HYBRID_TRANSFORMER" && w.policy != "MICRO")
        throw InputError(source + ":1", "policy \"" + w.policy + "\" is a SimAI policy Orrery does not run; it runs HYBRID_TRANSFORMER(_FWD_IN_BCKWD) and MICRO");
    std::map<std::string, int64_t> keys;
    for (size_t i = 1; i < header.size(); ++i) {
        std::string k = header[i].text;
        if (k == "pp_comm") k = "pp_comm:";  // written without the colon in SimAI's own example
        if (k.back() != ':' || i + 1 >= header.size()) continue;
        const std::string name = k.substr(0, k.size() - 1);
        if (name == "checkpoints" || name == "checkpoint_initiates") {
            const int64_t n = parse_count(header[i + 1], source, k.c_str(), 1 << 20);
            i += 1 + size_t(n);  // N, then N layer indices
            continue;
        }
        keys[name] = parse_count(header[i + 1], source, k.c_str(), name == "pp_comm" ? INT64_MAX : (1 << 24));
        ++i;
    }
    w.header_keys = keys;
    auto key = [&](const char* k, int64_t fallback) { return keys.count(k) ? keys[k] : fallback; };
    w.tp = int(std::max<int64_t>(1, key("model_parallel_NPU_group", 1)));
    w.ep = int(std::max<int64_t>(1, key("ep", 1)));
    w.pp = int(std::max<int64_t>(1, key("pp", 1)));
    w.vpp = int(key("vpp", 0));
    w.ga = int(std::max<int64_t>(1, key("ga", 1)));
    w.all_gpus = int(key("all_gpus", 0));
    w.pp_comm = key("pp_comm", 0);
    if (w.policy != "MICRO") {
        std::string missing;
        for (const char* k : {"ep", "pp", "vpp", "ga", "all_gpus"})
            if (!keys.count(k)) missing += std::string(missing.empty() ? "" : ", ") + k;
        if (!missing.empty())
            warnings.warning(source + ":1", "legacy AICB header without " + missing + ": taking EP = PP = GA = 1 and the world size from the fabric "
                                            "(SimAI warns about a format mismatch and stops with SIGFPE on such files)");
        if (w.pp > 1 && w.pp_comm == 0)
            warnings.warning(source + ":1", "pp: " + std::to_string(w.pp) + " but no pp_comm: the pipeline stages pass no activations over the network");
        if (w.pp == 1 && w.pp_comm != 0) warnings.warning(source + ":1", "pp_comm " + std::to_string(w.pp_comm) + " with pp: 1 has no pipeline to cross; ignored");
    }

    const size_t eol2 = text.find('\n', eol1 + 1);
    const std::vector<Token> count_line = tokens_from(text.substr(eol1 + 1, (eol2 == std::string::npos ? text.size() : eol2) - eol1 - 1), 0, 2);
    if (count_line.size() != 1) throw InputError(source + ":2", "expected the number of records alone on line 2");
    const int64_t declared = parse_count(count_line[0], source, "the record count", 100'000'000);
    const std::vector<Token> t = eol2 == std::string::npos ? std::vector<Token>{} : tokens_from(text, eol2 + 1, 3);
    constexpr size_t kFields = 12;
    if (t.size() % kFields != 0) {
        const size_t last = t.size() / kFields;
        throw InputError(source + ":" + std::to_string(t[last * kFields].line),
                         "record " + std::to_string(last + 1) + " is cut short: " + std::to_string(t.size() % kFields) + " of its 12 fields");
    }
    const size_t found = t.size() / kFields;
    if (int64_t(found) != declared)
        warnings.warning(source + ":2", "declares " + std::to_string(declared) + " records but the file has " + std::to_string(found) + "; using the " +
                                            std::to_string(found) + (int64_t(found) < declared ? " (SimAI would invent the missing ones as empty layers)" : ""));
    constexpr int64_t kMaxNs = INT64_MAX / 1000;  // times become picoseconds
    for (size_t r = 0; r < found; ++r) {
        const Token* f = &t[r * kFields];
        const std::string where = source + ":" + std::to_string(f[0].line);
        SimaiRecord rec;
        rec.name = f[0].text;
        rec.line = f[0].line;
        rec.forward_ns = parse_count(f[2], source, "the forward compute time (ns)", kMaxNs);
        const int64_t fwd_bytes = parse_count(f[4], source, "the forward collective size (bytes)", INT64_MAX);
        rec.input_grad_ns = parse_count(f[5], source, "the input-gradient compute time (ns)", kMaxNs);
        const int64_t ig_bytes = parse_count(f[7], source, "the input-gradient collective size (bytes)", INT64_MAX);
        rec.weight_grad_ns = parse_count(f[8], source, "the weight-gradient compute time (ns)", kMaxNs);
        const int64_t wg_bytes = parse_count(f[10], source, "the weight-gradient collective size (bytes)", INT64_MAX);
        rec.delay_ns = parse_count(f[11], source, "the delay after each collective (ns)", kMaxNs);
        rec.forward = comm_of(f[3].text, fwd_bytes, false, where, warnings);
        rec.input_grad = comm_of(f[6].text, ig_bytes, false, where, warnings);
        rec.weight_grad = comm_of(f[9].text, wg_bytes, true, where, warnings);
        // SimAI rounds a forward collective of 1–4095 bytes up to 4096 before issuing it.
        if (rec.forward.bytes > 0 && rec.forward.bytes < 4096) rec.forward.bytes = 4096;
        w.records.push_back(std::move(rec));
    }
    if (w.records.empty()) throw InputError(source, "has no records");
    return w;
}

namespace {

// A SimAI/AICB workload's iterations as a task graph. Map: the constructor checks the header against the
// fabric and finds the micro-batch boundaries → per iteration: MICRO runs its records' collectives in order;
// otherwise stages (each stage's Megatron schedule over the records: the iteration's own forward records,
// then forward and backward items, then its own backward records) → pipeline_sends between stages.
struct SimaiGraph {
    using Spans = std::map<std::tuple<int, int, int, bool, uint32_t>, std::pair<uint32_t, uint32_t>>;

    const SimaiWorkload& w;
    const CollectiveContext& c;
    const bool micro;
    const int tp, pp;
    int dp = 1, ep = 1, chunks = 1;
    TaskGraph g;
    uint32_t units = 0;  // what op.rank indexes: ranks, or stages
    // Per unit (a rank, or a lockstep lane).
    std::vector<uint32_t> cur;                           // what its next step waits on (its compute stream runs through it)
    std::vector<std::vector<uint32_t>> pending;          // weight-gradient collectives in flight
    std::map<std::pair<uint32_t, Group>, uint32_t> last_comm;  // (unit, group) → its last collective's end
    std::vector<uint32_t> item_first;                    // the first op of the pipeline item being built
    // Micro-batch boundaries: blocks[k] is the first record of micro-batch k; the records before blocks[0]
    // are the iteration's own.
    std::vector<size_t> blocks;

    SimaiGraph(const SimaiWorkload& work, const CollectiveContext& context, uint32_t world, bool lockstep)
        : w(work), c(context), micro(work.policy == "MICRO"), tp(micro ? 1 : work.tp), pp(micro ? 1 : work.pp) {
        if (w.all_gpus > 0 && uint32_t(w.all_gpus) != world)
            throw InputError(w.source + ":1", "all_gpus: " + std::to_string(w.all_gpus) + " but the fabric has " + std::to_string(world) + " GPUs (hosts)");
        if (world % uint32_t(tp * pp) != 0)
            throw InputError(w.source + ":1", "TP " + std::to_string(tp) + " × PP " + std::to_string(pp) + " does not divide the " + std::to_string(world) + " GPUs");
        dp = int(world) / (tp * pp);
        ep = micro ? 1 : w.ep;
        if (dp % ep != 0) throw InputError(w.source + ":1", "ep: " + std::to_string(ep) + " does not divide DP = " + std::to_string(dp));
        g.world = world;
        g.limit_to_memory(w.source);
        if (lockstep) {  // one lane per pipeline stage: every rank of a stage runs the file's records in step
            std::vector<std::vector<uint32_t>> lanes(static_cast<size_t>(pp));
            for (uint32_t r = 0; r < world; ++r) lanes[r / uint32_t(tp * dp)].push_back(r);
            g.set_lanes(std::move(lanes), world);
        }
        units = g.world;
        cur.assign(units, UINT32_MAX);
        pending.resize(units);
        item_first.assign(units, UINT32_MAX);
        for (size_t i = 0; i < w.records.size(); ++i)
            if (w.records[i].name == "embedding_layer") blocks.push_back(i);
        if (blocks.empty()) blocks.push_back(0);
        chunks = pp > 1 && w.vpp > 1 && int(blocks.size()) % pp == 0 ? w.vpp : 1;
    }

    uint32_t rank(int t, int d, int s) const { return uint32_t(t + tp * (d + dp * s)); }

    // The groups of one kind in stage s, each listed once: TP varies t; DP varies d; EP a block of `ep`
    // consecutive d's; DP_EP the d's equal modulo `ep`. MICRO: one group of every rank.
    std::vector<std::vector<uint32_t>> groups_of(SimaiGroup grp, int s) const {
        std::vector<std::vector<uint32_t>> groups;
        if (micro) {
            groups.emplace_back();
            for (uint32_t r = 0; r < g.world; ++r) groups.back().push_back(r);
            return groups;
        }
        switch (grp) {
            case SimaiGroup::tp:
                for (int d = 0; d < dp; ++d) {
                    groups.emplace_back();
                    for (int t = 0; t < tp; ++t) groups.back().push_back(rank(t, d, s));
                }
                break;
            case SimaiGroup::dp:
                for (int t = 0; t < tp; ++t) {
                    groups.emplace_back();
                    for (int d = 0; d < dp; ++d) groups.back().push_back(rank(t, d, s));
                }
                break;
            case SimaiGroup::ep:
                for (int block = 0; block < dp; block += ep)
                    for (int t = 0; t < tp; ++t) {
                        groups.emplace_back();
                        for (int d = block; d < block + ep; ++d) groups.back().push_back(rank(t, d, s));
                    }
                break;
            case SimaiGroup::dp_ep:
                for (int residue = 0; residue < ep; ++residue)
                    for (int t = 0; t < tp; ++t) {
                        groups.emplace_back();
                        for (int d = residue; d < dp; d += ep) groups.back().push_back(rank(t, d, s));
                    }
                break;
            case SimaiGroup::none: break;
        }
        return groups;
    }
    static Group group_tag(SimaiGroup grp) { return grp == SimaiGroup::tp ? Group::tp : grp == SimaiGroup::ep ? Group::ep : Group::dp; }

    void compute(uint32_t r, Phase ph, int64_t ns, const std::string& what) {
        if (ns <= 0) return;
        Op op;
        op.kind = OpKind::compute;
        op.phase = ph;
        op.rank = r;
        op.duration = ns * 1000;
        op.name = g.name(what);
        cur[r] = g.add(op, {cur[r]});
        if (item_first[r] == UINT32_MAX) item_first[r] = cur[r];
    }

    // One collective per group over the ranks of a stage (lockstep: one over all the stage's groups);
    // blocking: the members' next step waits for it.
    void communicate(const SimaiComm& cm, int64_t delay_ns, int s, bool blocking, const std::string& what) {
        if (cm.group == SimaiGroup::none || cm.bytes <= 0) return;
        const Group tag = micro ? Group::dp : group_tag(cm.group);
        std::vector<std::vector<std::vector<uint32_t>>> families;
        if (g.lockstep()) families.push_back(groups_of(cm.group, s));
        else
            for (std::vector<uint32_t>& members : groups_of(cm.group, s)) families.push_back({std::move(members)});
        for (const std::vector<std::vector<uint32_t>>& family : families) {
            std::vector<uint32_t> members;  // the units it runs on
            for (const std::vector<uint32_t>& grp : family)
                for (uint32_t r : grp) members.push_back(g.lane(r));
            std::sort(members.begin(), members.end());
            members.erase(std::unique(members.begin(), members.end()), members.end());
            // NCCL runs a communicator's collectives one after another: each waits for the group's previous one too.
            std::vector<uint32_t> ready;
            for (uint32_t r : members) {
                ready.push_back(cur[r]);
                auto it = last_comm.find({r, tag});
                if (it != last_comm.end()) ready.push_back(it->second);
            }
            const CollectiveRecord& made = g.collectives[emit_collective(g, c, cm.kind, tag, family, cm.bytes, ready, what)];
            const uint32_t end = made.end;
            for (uint32_t r : members)
                if (item_first[r] == UINT32_MAX) item_first[r] = made.start;
            for (uint32_t r : members) {
                last_comm[{r, tag}] = end;
                uint32_t after = end;
                if (delay_ns > 0) {
                    Op op;
                    op.kind = OpKind::local;
                    op.group = tag;
                    op.rank = op.peer = r;
                    op.duration = delay_ns * 1000;
                    op.name = g.name(what + " delay");
                    after = g.add(op, {end});
                }
                if (blocking) cur[r] = after;
                else pending[r].push_back(after);
            }
        }
    }

    template <class Fn>
    void each_rank(int st, Fn fn) {  // each unit of stage st
        if (g.lockstep()) return fn(uint32_t(st));
        for (int d = 0; d < dp; ++d)
            for (int t = 0; t < tp; ++t) fn(rank(t, d, st));
    }
    void forward(const SimaiRecord& rec, int st, const std::string& prefix) {
        each_rank(st, [&](uint32_t r) { compute(r, Phase::forward, rec.forward_ns, prefix + rec.name + " fwd"); });
        communicate(rec.forward, rec.delay_ns, st, true, prefix + rec.name + " fwd " + collective_kind_name(rec.forward.kind));
    }
    // A record's backward: input-gradient compute and its blocking collective, then the weight-gradient
    // compute and its collective in the background.
    void backward(const SimaiRecord& rec, int st, const std::string& prefix) {
        each_rank(st, [&](uint32_t r) { compute(r, Phase::backward_input, rec.input_grad_ns, prefix + rec.name + " bwd-input"); });
        communicate(rec.input_grad, rec.delay_ns, st, true, prefix + rec.name + " bwd-input " + collective_kind_name(rec.input_grad.kind));
        each_rank(st, [&](uint32_t r) { compute(r, Phase::backward_weight, rec.weight_grad_ns, prefix + rec.name + " bwd-weight"); });
        communicate(rec.weight_grad, rec.delay_ns, st, false, prefix + rec.name + " grads " + collective_kind_name(rec.weight_grad.kind));
    }
    // Chunk ch of micro-batch m: an equal share of its records (vpp chunks).
    std::pair<size_t, size_t> chunk_records(int m, int ch) const {
        const size_t begin = blocks[size_t(m)], end = size_t(m) + 1 < blocks.size() ? blocks[size_t(m) + 1] : w.records.size();
        const size_t n = end - begin;
        return std::make_pair(begin + n * size_t(ch) / size_t(chunks), begin + n * size_t(ch + 1) / size_t(chunks));
    }

    void iteration(int it, int iterations) {
        const std::string tag = iterations > 1 ? "it" + std::to_string(it) + " " : "";
        const size_t begin = g.size();
        // The next iteration starts when the previous one's weight-gradient collectives are done.
        for (uint32_t r = 0; r < units; ++r)
            if (!pending[r].empty()) {
                std::vector<uint32_t> all = pending[r];
                all.push_back(cur[r]);
                cur[r] = g.add(Op{}, all);
                pending[r].clear();
            }
        if (micro) {
            for (const SimaiRecord& rec : w.records) communicate(rec.weight_grad, rec.delay_ns, 0, true, tag + rec.name + " " + collective_kind_name(rec.weight_grad.kind));
        } else {
            Spans spans;
            for (int st = 0; st < pp; ++st) stage(st, tag, spans);
            pipeline_sends(tag, spans);
        }
        for (size_t op = begin; op < g.size(); ++op) g.ops[op].iteration = uint16_t(it);
    }

    // Micro-batches: AICB unrolls gradient accumulation, each micro-batch's records starting at an
    // "embedding_layer"; the records before the first are the iteration's own (gradient and optimizer
    // collectives). Each stage runs Megatron's schedule over them (1F1B, interleaved when the header's vpp
    // splits every micro-batch into chunks). `spans`: per (stage, micro-batch, chunk, forward) and rank, the
    // item's first and last op.
    void stage(int st, const std::string& tag, Spans& spans) {
        ParallelSpec sched;
        sched.pp = pp;
        sched.micro_batches = int(blocks.size());
        sched.virtual_stages = chunks;
        for (size_t i = 0; i < blocks.front(); ++i) forward(w.records[i], st, tag);  // the iteration's own records, forward, first
        for (const PipelineItem& item : pipeline_schedule(sched, st)) {
            const auto [from, to] = chunk_records(item.micro_batch, item.chunk);
            each_rank(st, [&](uint32_t r) { item_first[r] = UINT32_MAX; });
            const std::string mb = tag + "mb" + std::to_string(item.micro_batch) + " ";
            if (item.forward) {
                for (size_t i = from; i < to; ++i) forward(w.records[i], st, mb);
            } else {
                for (size_t i = to; i-- > from;) backward(w.records[i], st, mb);
            }
            // The item's first op on a rank (a compute, or its first collective's start) waits for the
            // pipeline; its last is what the rank's stream waits on now.
            each_rank(st, [&](uint32_t r) { spans[{st, item.micro_batch, item.chunk, item.forward, r}] = {item_first[r], cur[r]}; });
        }
        // The iteration's own records, backward, once the stage's last micro-batch is done.
        for (size_t i = blocks.front(); i-- > 0;) backward(w.records[i], st, tag);
    }

    // Pipeline sends of pp_comm bytes: a forward item waits for the previous chunk's activations (stage s−1,
    // or the last stage's previous chunk), a backward item for the next chunk's gradients.
    void pipeline_sends(const std::string& tag, Spans& spans) {
        for (int st = 0; st < pp; ++st)
            for (int m = 0; m < int(blocks.size()); ++m)
                for (int ch = 0; ch < chunks; ++ch)
                    for (bool fwd : {true, false}) {
                        int src_stage = fwd ? st - 1 : st + 1, src_chunk = ch;
                        if (fwd && st == 0) src_stage = pp - 1, src_chunk = ch - 1;
                        if (!fwd && st == pp - 1) src_stage = 0, src_chunk = ch + 1;
                        if (src_chunk < 0 || src_chunk >= chunks) continue;  // pp_comm 0: the order holds, no bytes move
                        const std::string what = tag + "mb" + std::to_string(m) + (fwd ? " pp activation" : " pp gradient");
                        if (g.lockstep()) {
                            const auto& src = spans[{src_stage, m, src_chunk, fwd, uint32_t(src_stage)}];
                            const auto& dst = spans[{st, m, ch, fwd, uint32_t(st)}];
                            if (dst.first == UINT32_MAX) continue;
                            std::vector<RankPair> pairs;
                            for (int d = 0; d < dp; ++d)
                                for (int t = 0; t < tp; ++t) pairs.emplace_back(rank(t, d, src_stage), rank(t, d, st));
                            g.add_dep(dst.first, emit_sends(g, c, Group::pp, pairs, std::max<int64_t>(0, w.pp_comm), src.second, what));
                            continue;
                        }
                        for (int d = 0; d < dp; ++d)
                            for (int t = 0; t < tp; ++t) {
                                const uint32_t r = rank(t, d, st), sender = rank(t, d, src_stage);
                                const auto& src = spans[{src_stage, m, src_chunk, fwd, sender}];
                                const auto& dst = spans[{st, m, ch, fwd, r}];
                                if (dst.first == UINT32_MAX) continue;
                                const uint32_t got = emit_send(g, c, Group::pp, sender, r, std::max<int64_t>(0, w.pp_comm), src.second, what);
                                g.add_dep(dst.first, got);
                            }
                    }
    }
};

}  // namespace

TaskGraph build_simai_graph(const SimaiWorkload& w, const CollectiveContext& c, uint32_t world, int iterations, bool lockstep) {
    SimaiGraph b(w, c, world, lockstep);
    for (int it = 0; it < iterations; ++it) b.iteration(it, iterations);
    return std::move(b.g);
}

}  // namespace orrery
