#include "workload/build.h"

#include <algorithm>
#include <array>
#include <map>
#include <sstream>

#include "common/diagnostics.h"
#include "workload/memory.h"
#include "workload/placement.h"

namespace orrery {

namespace {

// The dimension at each position of the order string, fastest first.
std::array<char, 3> order_dims(const std::string& order) {
    std::array<char, 3> dims{};
    std::stringstream ss(order);
    std::string part;
    int i = 0;
    while (std::getline(ss, part, '-') && i < 3) dims[size_t(i++)] = part == "tp" ? 't' : part == "dp" ? 'd' : part == "pp" ? 'p' : '?';
    return dims;
}

int dim_size(const ParallelSpec& p, char d) { return d == 't' ? p.tp : d == 'd' ? p.dp : p.pp; }

}  // namespace

RankCoord rank_coord(const ParallelSpec& p, uint32_t rank) {
    RankCoord c;
    for (char d : order_dims(p.order)) {
        const int size = dim_size(p, d), v = int(rank % uint32_t(size));
        rank /= uint32_t(size);
        (d == 't' ? c.tp : d == 'd' ? c.dp : c.pp) = v;
    }
    return c;
}

uint32_t rank_of(const ParallelSpec& p, RankCoord c) {
    const std::array<char, 3> dims = order_dims(p.order);
    uint32_t rank = 0;
    for (size_t i = 3; i-- > 0;) rank = rank * uint32_t(dim_size(p, dims[i])) + uint32_t(dims[i] == 't' ? c.tp : dims[i] == 'd' ? c.dp : c.pp);
    return rank;
}

std::vector<std::string> check_llm_workload(const LlmWorkload& w, const Fabric* fabric) {
    std::vector<std::string> e;
    const ModelSpec& m = w.model;
    const ParallelSpec& p = w.parallel;
    std::array<char, 3> dims = order_dims(p.order);
    std::array<char, 3> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::array<char, 3>{'d', 'p', 't'})
        e.push_back("workload.parallel.order: expected the three dimensions tp, dp, pp joined by '-' (fastest first, e.g. \"tp-dp-pp\"), found \"" + p.order + "\"");
    if (m.layers % (p.pp * p.virtual_stages) != 0)
        e.push_back("workload.parallel.pp: " + std::to_string(m.layers) + " layers do not split into " + std::to_string(p.pp) + " stages × " +
                    std::to_string(p.virtual_stages) + " virtual stages");
    if (m.heads % p.tp != 0) e.push_back("workload.parallel.tp: " + std::to_string(m.heads) + " attention heads do not split over TP " + std::to_string(p.tp));
    if (m.hidden % m.heads != 0) e.push_back("workload.model.hidden: " + std::to_string(m.hidden) + " is not a multiple of heads " + std::to_string(m.heads));
    if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) e.push_back("workload.model.kv_heads: must divide heads (" + std::to_string(m.heads) + ")");
    if (p.schedule == PipelineSchedule::interleaved && p.micro_batches % p.pp != 0)
        e.push_back("workload.parallel.micro_batches: the interleaved schedule needs a multiple of PP (" + std::to_string(p.pp) + "), found " +
                    std::to_string(p.micro_batches));
    if (p.schedule == PipelineSchedule::one_f_one_b && p.virtual_stages != 1)
        e.push_back("workload.parallel.virtual_stages: only the interleaved schedule has virtual stages; set schedule to \"interleaved\"");
    if (m.moe()) {
        if ((p.tp * p.dp) % p.ep != 0)
            e.push_back("workload.parallel.ep: EP " + std::to_string(p.ep) + " must divide TP × DP = " + std::to_string(p.tp * p.dp));
        if (m.experts % p.ep != 0) e.push_back("workload.parallel.ep: " + std::to_string(m.experts) + " experts do not split over EP " + std::to_string(p.ep));
        if (m.top_k < 1 || m.top_k > m.experts) e.push_back("workload.model.top_k: expected 1.." + std::to_string(m.experts));
    } else if (p.ep != 1) {
        e.push_back("workload.parallel.ep: a dense model has no experts; EP must be 1");
    }
    if (fabric) {
        const size_t hosts = fabric->count(NodeKind::host);
        if (size_t(p.world()) != hosts)
            e.push_back("workload.parallel: TP × PP × DP = " + std::to_string(p.tp) + " × " + std::to_string(p.pp) + " × " + std::to_string(p.dp) + " = " +
                        std::to_string(p.world()) + " ranks, but the fabric has " + std::to_string(hosts) + " GPUs (hosts)");
    }
    return e;
}

Placement place_ranks(const ParallelSpec& p, const Fabric& f) {
    std::vector<NodeId> hosts;
    for (NodeId n = 0; n < f.node_count() && hosts.size() < size_t(std::max(0, p.world())); ++n)
        if (f.is_host(n)) hosts.push_back(n);
    return place_on_hosts(f, hosts);
}

std::vector<PipelineItem> pipeline_schedule(const ParallelSpec& p, int s) {
    const int v = p.virtual_stages, m = p.micro_batches, total = m * v;
    auto chunk_of = [&](int k, bool fwd) { const int c = (k / p.pp) % v; return fwd ? c : v - 1 - c; };
    auto mb_of = [&](int k) { return v == 1 ? k : (k / (p.pp * v)) * p.pp + k % p.pp; };
    const int warmup = v == 1 ? std::min(p.pp - s - 1, m) : std::min((p.pp - s - 1) * 2 + (v - 1) * p.pp, total);
    std::vector<PipelineItem> items;
    for (int k = 0; k < warmup; ++k) items.push_back({true, mb_of(k), chunk_of(k, true)});
    for (int i = 0; i < total - warmup; ++i) {
        items.push_back({true, mb_of(warmup + i), chunk_of(warmup + i, true)});
        items.push_back({false, mb_of(i), chunk_of(i, false)});
    }
    for (int k = total - warmup; k < total; ++k) items.push_back({false, mb_of(k), chunk_of(k, false)});
    return items;
}

namespace {

struct Builder {
    const LlmWorkload& w;
    const WorkloadTables& t;
    const Placement& place;
    TaskGraph g;
    CollectiveContext ctx;
    const GpuSpec& gpu;
    std::vector<uint32_t> last_compute;                 // per unit (a rank, or a lockstep lane)
    std::map<std::pair<uint32_t, Group>, uint32_t> last_comm;  // per unit and group: the end of its last collective

    // lockstep: one lane per pipeline stage (TaskGraph::lockstep), every rank of a stage in step.
    Builder(const LlmWorkload& work, const WorkloadTables& tables, const Placement& p, const GpuSpec& spec, bool lockstep)
        : w(work), t(tables), place(p), ctx{p, tables, work.gpu, work.collectives}, gpu(spec) {
        const ParallelSpec& par = w.parallel;
        g.world = uint32_t(par.world());
        if (lockstep) {
            std::vector<std::vector<uint32_t>> lanes(size_t(par.pp));
            for (uint32_t r = 0; r < uint32_t(par.world()); ++r) lanes[size_t(rank_coord(par, r).pp)].push_back(r);
            g.set_lanes(std::move(lanes), uint32_t(par.world()));
        }
        last_compute.assign(g.world, UINT32_MAX);
        g.limit_to_memory("workload.parallel");
    }

    // The groups of one kind in a stage as the calls that emit them: per rank, each group alone; lockstep,
    // all of them at once.
    std::vector<std::vector<std::vector<uint32_t>>> families(const std::vector<std::vector<uint32_t>>& groups) const {
        if (g.lockstep()) return {groups};
        std::vector<std::vector<std::vector<uint32_t>>> out;
        for (const std::vector<uint32_t>& grp : groups) out.push_back({grp});
        return out;
    }

    // The units a family runs on, in the order of its first group's members (per rank: those members).
    std::vector<uint32_t> units_of(const std::vector<std::vector<uint32_t>>& family) const {
        std::vector<uint32_t> units;
        for (const std::vector<uint32_t>& grp : family)
            for (uint32_t r : grp)
                if (!g.lockstep() || std::find(units.begin(), units.end(), g.lane(r)) == units.end()) units.push_back(g.lane(r));
        return units;
    }

    int64_t time_of(const std::vector<Operator>& ops) const { return operators_ps(ops, t, gpu, w.compute.efficiency); }

    uint32_t compute(uint32_t rank, Phase phase, int64_t duration, uint32_t name, std::vector<uint32_t> after, bool optimizer = false) {
        Op op;
        op.kind = OpKind::compute;
        op.phase = phase;
        op.rank = rank;
        op.duration = duration + w.compute.launch_overhead.count;
        op.name = name;
        op.optimizer = optimizer;
        after.push_back(last_compute[rank]);
        return last_compute[rank] = g.add(op, after);
    }

    // A collective over a family (units_of), each unit entering after its `ready_of` op and its previous
    // collective of the group.
    template <class ReadyOf>
    uint32_t collective(CollectiveKind kind, Group group, const std::vector<std::vector<uint32_t>>& family, int64_t bytes, ReadyOf ready_of,
                        const std::string& name) {
        const std::vector<uint32_t> units = units_of(family);
        std::vector<uint32_t> entry;
        for (uint32_t u : units) {
            auto it = last_comm.find({u, group});
            entry.push_back(ready_of(u));
            if (it != last_comm.end()) entry.push_back(it->second);
        }
        const uint32_t c = emit_collective(g, ctx, kind, group, family, bytes, entry, name);
        const uint32_t end = g.collectives[c].end;
        for (uint32_t u : units) last_comm[{u, group}] = end;
        return end;
    }
};

// A transformer job's iterations as a task graph. Map: the constructor sizes what every iteration shares (its
// compute durations, each stage's ranks, TP and EP groups) → per iteration: each stage's pipeline program
// (stage → pipeline_item: the forward and backward of a chunk, TP and EP collectives inside, gradient buckets
// closing on the last micro-batch) → pipeline_sends between stages → gradient_sync (buckets, optimizer, ZeRO's
// parameter gathers). Ops are emitted in that order; the graph's ids depend on it.
struct TransformerGraph : Builder {
    const ModelSpec& m;
    const ParallelSpec& p;
    int64_t hidden_bytes = 0, pp_bytes = 0, a2a_bytes = 0;
    std::map<std::tuple<bool, int, bool, bool>, int64_t> dur;  // (attention, phase, moe, leading) → ps
    int64_t logits_ps[3] = {};
    int chunks = 1, layers_per_chunk = 0;
    // Per stage its ranks, and the units that run its program: its ranks, or its lockstep lane.
    std::vector<std::vector<uint32_t>> stage_ranks, stage_units;
    // Per stage: its TP groups (one per DP index, in TP order) and its EP groups (over index j = dp + DP·tp
    // inside the stage, ep consecutive j per group).
    std::vector<std::vector<std::vector<uint32_t>>> tp_groups_of, ep_groups_of;
    // The iteration being emitted: its name prefix, the first and last op of every (rank, micro-batch, chunk,
    // direction) for the pipeline sends, and the gradient buckets each rank closed (ready op, bytes, expert?).
    struct Span {
        uint32_t first = UINT32_MAX, last = UINT32_MAX;
    };
    std::string it;
    std::map<std::tuple<uint32_t, int, int, bool>, Span> spans;
    std::map<uint32_t, std::vector<std::tuple<uint32_t, int64_t, bool>>> buckets;
    std::vector<uint32_t> params_ready;  // the end of the previous iteration's parameter update

    TransformerGraph(const LlmWorkload& work, const WorkloadTables& tables, const Placement& pl, const GpuSpec& spec, bool lockstep)
        : Builder(work, tables, pl, spec, lockstep), m(work.model), p(work.parallel), params_ready(g.world, UINT32_MAX) {
        const int64_t tokens = int64_t(p.micro_batch_size) * m.seq;
        hidden_bytes = tokens * m.hidden * 2;  // one BF16 activation of a micro-batch
        pp_bytes = hidden_bytes / p.tp;        // sent scattered over the TP ranks
        a2a_bytes = tokens / (p.sequence_parallel ? p.tp : 1) * m.top_k * m.hidden * 2;
        const Phase phases[3] = {Phase::forward, Phase::backward_input, Phase::backward_weight};
        for (int ph = 0; ph < 3; ++ph)
            for (bool moe : {false, true})
                for (bool leading : {false, true}) {
                    dur[{true, ph, moe, leading}] = time_of(attention_ops(m, p, phases[ph]));
                    dur[{false, ph, moe, leading}] = time_of(mlp_ops(m, p, phases[ph], moe, leading));
                }
        for (int ph = 0; ph < 3; ++ph) logits_ps[ph] = time_of(logits_ops(m, p, phases[ph]));
        chunks = p.virtual_stages;
        layers_per_chunk = m.layers / (p.pp * chunks);
        stage_ranks.resize(size_t(p.pp));
        stage_units.resize(size_t(p.pp));
        for (uint32_t r = 0; r < uint32_t(p.world()); ++r) stage_ranks[size_t(rank_coord(p, r).pp)].push_back(r);
        for (int s = 0; s < p.pp; ++s) stage_units[size_t(s)] = g.lockstep() ? std::vector<uint32_t>{uint32_t(s)} : stage_ranks[size_t(s)];
        tp_groups_of.resize(size_t(p.pp));
        ep_groups_of.resize(size_t(p.pp));
        for (int s = 0; s < p.pp; ++s) {
            for (int dp = 0; dp < p.dp; ++dp) {
                std::vector<uint32_t> group;
                for (int tp = 0; tp < p.tp; ++tp) group.push_back(rank_of(p, {tp, dp, s}));
                tp_groups_of[size_t(s)].push_back(group);
            }
            ep_groups_of[size_t(s)].resize(size_t(p.tp * p.dp / p.ep));
            for (int tp = 0; tp < p.tp; ++tp)
                for (int dp = 0; dp < p.dp; ++dp) ep_groups_of[size_t(s)][size_t((dp + p.dp * tp) / p.ep)].push_back(rank_of(p, {tp, dp, s}));
        }
    }

    uint32_t nm(const std::string& s) { return g.name(s); }  // interned by the graph

    std::vector<uint32_t> dp_group(uint32_t r) const {
        const RankCoord c = rank_coord(p, r);
        std::vector<uint32_t> out;
        for (int d = 0; d < p.dp; ++d) out.push_back(rank_of(p, {c.tp, d, c.pp}));
        return out;
    }
    // The expert-data-parallel group: ranks of the stage at the same position inside their EP groups.
    std::vector<uint32_t> edp_group(uint32_t r) const {
        const RankCoord c = rank_coord(p, r);
        const int j = c.dp + p.dp * c.tp;
        std::vector<uint32_t> out;
        for (int k = j % p.ep; k < p.tp * p.dp; k += p.ep) out.push_back(rank_of(p, {k / p.dp, k % p.dp, c.pp}));
        return out;
    }
    // The DP (or expert-DP) groups of a stage, in the order of their first members.
    std::vector<std::vector<uint32_t>> dp_groups_of(int s, bool expert) const {
        std::vector<std::vector<uint32_t>> groups;
        for (uint32_t r : stage_ranks[size_t(s)]) {
            std::vector<uint32_t> group = expert ? edp_group(r) : dp_group(r);
            if (group.front() == r) groups.push_back(std::move(group));  // the group's first member emits it
        }
        return groups;
    }

    // TP collectives of a family after each unit's op in `cur`, which they then advance.
    void tp_sync(const std::vector<std::vector<uint32_t>>& family, std::map<uint32_t, uint32_t>& cur, const std::string& what) {
        if (family.front().size() <= 1) return;
        uint32_t end;
        auto ready = [&](uint32_t u) { return cur[u]; };
        if (p.sequence_parallel) {
            end = collective(CollectiveKind::reduce_scatter, Group::tp, family, hidden_bytes, ready, what + " reduce-scatter");
            end = collective(CollectiveKind::all_gather, Group::tp, family, hidden_bytes, [&](uint32_t) { return end; }, what + " all-gather");
        } else {
            end = collective(CollectiveKind::all_reduce, Group::tp, family, hidden_bytes, ready, what + " all-reduce");
        }
        for (uint32_t u : units_of(family)) cur[u] = end;
    }
    void ep_exchange(int s, std::map<uint32_t, uint32_t>& cur, const std::string& what) {
        std::map<uint32_t, uint32_t> done;
        for (const auto& family : families(ep_groups_of[size_t(s)])) {
            const uint32_t end = collective(CollectiveKind::all_to_all, Group::ep, family, a2a_bytes, [&](uint32_t u) { return cur.at(u); }, what);
            for (uint32_t u : units_of(family)) done[u] = end;
        }
        for (auto& [u, op] : done) cur[u] = op;
    }

    void iteration(int iter) {
        it = w.iterations > 1 ? "it" + std::to_string(iter) + " " : "";
        const size_t iteration_begin = g.size();
        spans.clear();
        buckets.clear();
        for (int s = 0; s < p.pp; ++s) stage(s, iter);
        pipeline_sends();
        gradient_sync();
        for (size_t op = iteration_begin; op < g.size(); ++op) g.ops[op].iteration = uint16_t(iter);
    }

    using Gathered = std::map<std::pair<int, bool>, std::map<uint32_t, uint32_t>>;  // (chunk, forward) → unit → op

    // Stage s's pipeline program for one iteration.
    void stage(int s, int iter) {
        const std::vector<int> layers = stage_layers(m, p, s);
        // ZeRO-3: gather each chunk's parameters before its first forward and first backward.
        Gathered gathered;
        if (p.zero_stage >= 3 && p.dp > 1)
            for (int c = 0; c < chunks; ++c) {
                int64_t params = 0;
                for (int l = 0; l < layers_per_chunk; ++l) {
                    const int layer = layers[size_t(c * layers_per_chunk + l)];
                    params += attention_params(m) + mlp_params(m, is_moe_layer(m, layer), layer < m.dense_layers);
                }
                for (bool fwd : {true, false}) {
                    for (const auto& family : families(dp_groups_of(s, false))) {
                        const uint32_t end = collective(CollectiveKind::all_gather, Group::dp, family, params / p.tp * 2,
                                                        [&](uint32_t u) { return params_ready[u]; }, it + "zero3 params chunk " + std::to_string(c));
                        for (uint32_t u : units_of(family)) gathered[{c, fwd}][u] = end;
                    }
                }
            }
        std::map<uint32_t, int64_t> pending_bytes, pending_expert;  // gradient bytes not yet in a closed bucket
        for (const PipelineItem& item : pipeline_schedule(p, s)) pipeline_item(s, iter, item, layers, gathered, pending_bytes, pending_expert);
    }

    // One chunk's forward or backward of one micro-batch on stage s's units.
    void pipeline_item(int s, int iter, const PipelineItem& item, const std::vector<int>& layers, Gathered& gathered,
                       std::map<uint32_t, int64_t>& pending_bytes, std::map<uint32_t, int64_t>& pending_expert) {
        const std::vector<uint32_t>& ranks = stage_units[size_t(s)];  // ranks, or the stage's lane
        const int c = item.chunk, mb = item.micro_batch;
        const bool last_chunk = s == p.pp - 1 && c == chunks - 1;
        const std::string tag = it + "mb" + std::to_string(mb);
        std::map<uint32_t, uint32_t> cur;  // per rank: the op the next step waits on (UINT32_MAX: stream order)
        std::map<uint32_t, uint32_t> first;
        for (uint32_t r : ranks) cur[r] = UINT32_MAX;
        auto step = [&](Phase ph, int64_t duration, const std::string& what) {
            for (uint32_t r : ranks) {
                std::vector<uint32_t> after{cur[r]};
                if (p.zero_stage >= 3 && p.dp > 1) after.push_back(gathered[{c, item.forward}][r]);
                if (iter > 0) after.push_back(params_ready[r]);
                const uint32_t op = compute(r, ph, duration, nm(what), after);
                if (!first.count(r)) first[r] = op;
                cur[r] = op;
            }
        };
        auto sync_tp = [&](const std::string& what) {
            for (const auto& family : families(tp_groups_of[size_t(s)])) tp_sync(family, cur, what);
        };
        auto sync_ep = [&](const std::string& what) {
            if (p.ep <= 1) return;
            ep_exchange(s, cur, what);
        };
        auto forward_layer = [&](int layer, const std::string& prefix) {
            const bool moe = is_moe_layer(m, layer), leading = layer < m.dense_layers;
            const std::string L = prefix + "L" + std::to_string(layer);
            step(Phase::forward, dur[{true, 0, moe, leading}], L + " attention fwd " + tag);
            sync_tp(L + " attention fwd " + tag + " TP");
            if (moe) {
                sync_ep(L + " dispatch fwd " + tag);
                step(Phase::forward, dur[{false, 0, moe, leading}], L + " experts fwd " + tag);
                sync_ep(L + " combine fwd " + tag);
            } else {
                step(Phase::forward, dur[{false, 0, moe, leading}], L + " mlp fwd " + tag);
            }
            sync_tp(L + " mlp fwd " + tag + " TP");
        };
        if (item.forward) {
            for (int l = 0; l < layers_per_chunk; ++l) forward_layer(layers[size_t(c * layers_per_chunk + l)], "");
            if (last_chunk) step(Phase::forward, logits_ps[0], "logits+loss fwd " + tag);
        } else {
            if (last_chunk) {
                step(Phase::backward_input, logits_ps[1], "logits bwd-input " + tag);
                step(Phase::backward_weight, logits_ps[2], "logits bwd-weight " + tag);
            }
            for (int l = layers_per_chunk; l-- > 0;) {
                const int layer = layers[size_t(c * layers_per_chunk + l)];
                const bool moe = is_moe_layer(m, layer), leading = layer < m.dense_layers;
                const std::string L = std::string("L") + std::to_string(layer);
                if (p.recompute) forward_layer(layer, "recompute ");
                if (moe) sync_ep(L + " combine bwd " + tag);
                step(Phase::backward_input, dur[{false, 1, moe, leading}], L + (moe ? " experts" : " mlp") + " bwd-input " + tag);
                if (moe) sync_ep(L + " dispatch bwd " + tag);
                // The weight gradient runs while the TP collective of the input gradient is in flight.
                std::map<uint32_t, uint32_t> before = cur;
                sync_tp(L + " mlp bwd " + tag + " TP");
                std::map<uint32_t, uint32_t> after_tp = cur;
                cur = before;
                step(Phase::backward_weight, dur[{false, 2, moe, leading}], L + (moe ? " experts" : " mlp") + " bwd-weight " + tag);
                cur = after_tp;
                step(Phase::backward_input, dur[{true, 1, moe, leading}], L + " attention bwd-input " + tag);
                before = cur;
                sync_tp(L + " attention bwd " + tag + " TP");
                after_tp = cur;
                cur = before;
                step(Phase::backward_weight, dur[{true, 2, moe, leading}], L + " attention bwd-weight " + tag);
                if (mb == p.micro_batches - 1) close_buckets(ranks, cur, moe, leading, l == 0 && c == 0, pending_bytes, pending_expert);
                cur = after_tp;  // the next layer's input gradient waits for this layer's TP collective
            }
        }
        // A backward chunk hands its input gradient on after its whole backward (weight gradients
        // included, as one autograd pass does) and after the input gradient's TP collective.
        for (uint32_t r : ranks) {
            const uint32_t last = cur[r] == UINT32_MAX ? last_compute[r] : cur[r];
            if (item.forward) spans[{r, mb, c, true}] = {first[r], last};
            else spans[{r, mb, c, false}] = {first[r], last == last_compute[r] ? last : g.add(Op{}, {last, last_compute[r]})};
        }
    }

    // On the last micro-batch a layer's gradients are complete: they join each rank's open bucket, which
    // closes at the bucket size or at the stage's last layer.
    void close_buckets(const std::vector<uint32_t>& ranks, std::map<uint32_t, uint32_t>& cur, bool moe, bool leading, bool last_layer,
                       std::map<uint32_t, int64_t>& pending_bytes, std::map<uint32_t, int64_t>& pending_expert) {
        for (uint32_t r : ranks) {
            pending_bytes[r] += (attention_params(m) + (moe ? 0 : mlp_params(m, false, leading))) / p.tp * 2;
            if (moe) pending_expert[r] += mlp_params(m, true, false) / (int64_t(p.tp) * p.ep) * 2;
            const bool close = pending_bytes[r] >= w.parallel.bucket.count || last_layer;
            if (close && pending_bytes[r] > 0) buckets[r].emplace_back(cur[r], pending_bytes[r], false), pending_bytes[r] = 0;
            const bool close_e = pending_expert[r] >= w.parallel.bucket.count || last_layer;
            if (close_e && pending_expert[r] > 0) buckets[r].emplace_back(cur[r], pending_expert[r], true), pending_expert[r] = 0;
        }
    }

    // Pipeline sends: each forward chunk waits for the previous chunk's activations, each backward chunk
    // for the next chunk's gradients.
    void pipeline_sends() {
        if (g.lockstep())  // per stage and micro-batch chunk, one send over all the stage's ranks
            for (int st = 0; st < p.pp; ++st)
                for (int mb = 0; mb < p.micro_batches; ++mb)
                    for (int c = 0; c < chunks; ++c)
                        for (bool fwd : {true, false}) {
                            int from_stage = fwd ? st - 1 : st + 1, from_chunk = c;
                            if (fwd && st == 0) from_stage = p.pp - 1, from_chunk = c - 1;
                            if (!fwd && st == p.pp - 1) from_stage = 0, from_chunk = c + 1;
                            if (from_chunk < 0 || from_chunk >= chunks) continue;
                            std::vector<RankPair> pairs;
                            for (uint32_t r : stage_ranks[size_t(st)]) {
                                const RankCoord rc = rank_coord(p, r);
                                pairs.emplace_back(rank_of(p, {rc.tp, rc.dp, from_stage}), r);
                            }
                            const Span& src = spans[{uint32_t(from_stage), mb, from_chunk, fwd}];
                            const uint32_t recv = emit_sends(g, ctx, Group::pp, pairs, pp_bytes, src.last,
                                                             it + (fwd ? "pp activation mb" : "pp gradient mb") + std::to_string(mb));
                            g.add_dep(spans[{uint32_t(st), mb, c, fwd}].first, recv);
                        }
        for (uint32_t r = 0; r < g.world && !g.lockstep(); ++r) {
            const RankCoord rc = rank_coord(p, r);
            for (int mb = 0; mb < p.micro_batches; ++mb)
                for (int c = 0; c < chunks; ++c) {
                    // forward: from (s-1, c) or (p-1, c-1)
                    int fs = rc.pp - 1, fc = c;
                    if (rc.pp == 0) fs = p.pp - 1, fc = c - 1;
                    if (fc >= 0) {
                        const uint32_t from = rank_of(p, {rc.tp, rc.dp, fs});
                        const Span& src = spans[{from, mb, fc, true}];
                        const uint32_t recv = emit_send(g, ctx, Group::pp, from, r, pp_bytes, src.last, it + "pp activation mb" + std::to_string(mb));
                        g.add_dep(spans[{r, mb, c, true}].first, recv);
                    }
                    // backward: from (s+1, c) or (0, c+1)
                    int bs = rc.pp + 1, bc = c;
                    if (rc.pp == p.pp - 1) bs = 0, bc = c + 1;
                    if (bc < chunks) {
                        const uint32_t from = rank_of(p, {rc.tp, rc.dp, bs});
                        const Span& src = spans[{from, mb, bc, false}];
                        const uint32_t recv = emit_send(g, ctx, Group::pp, from, r, pp_bytes, src.last, it + "pp gradient mb" + std::to_string(mb));
                        g.add_dep(spans[{r, mb, c, false}].first, recv);
                    }
                }
        }
    }

    // Gradient sync per bucket, then the optimizer, then (ZeRO-1/2) the parameter all-gather.
    void gradient_sync() {
        std::map<uint32_t, std::vector<uint32_t>> synced;
        // Tied embeddings split over the first and last stage: their gradients are summed between the two
        // (Megatron's embedding group) after the backward, before either optimizer step.
        if (m.tied_embeddings && p.pp > 1) {
            std::vector<std::vector<uint32_t>> pairs;
            for (uint32_t r : stage_ranks[0]) {
                const RankCoord rc = rank_coord(p, r);
                pairs.push_back({r, rank_of(p, {rc.tp, rc.dp, p.pp - 1})});
            }
            for (const auto& family : families(pairs)) {
                const uint32_t end = collective(CollectiveKind::all_reduce, Group::embedding, family, m.vocab * m.hidden / p.tp * w.bytes_per_param,
                                                [&](uint32_t u) { return last_compute[u]; }, it + "tied embedding grads");
                for (uint32_t u : units_of(family)) synced[u].push_back(end);
            }
        }
        for (int s = 0; s < p.pp; ++s) {
            const std::vector<uint32_t>& ranks = stage_units[size_t(s)];
            const size_t count = buckets[ranks[0]].size();
            for (size_t k = 0; k < count; ++k) {
                // Every unit of a stage closes the same buckets (bytes, expert or not).
                const int64_t bytes = std::get<1>(buckets[ranks[0]][k]);
                const bool expert = std::get<2>(buckets[ranks[0]][k]);
                auto ready = [&](uint32_t u) { return std::get<0>(buckets[u][k]); };
                for (const auto& family : families(dp_groups_of(s, expert))) {
                    const std::vector<uint32_t> units = units_of(family);
                    uint32_t end;
                    if (family.front().size() <= 1) {
                        std::vector<uint32_t> after;
                        for (uint32_t u : units) after.push_back(ready(u));
                        end = g.add(Op{}, after);
                    } else {
                        const CollectiveKind kind = p.zero_stage >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
                        end = collective(kind, Group::dp, family, bytes, ready, it + (expert ? "expert grads bucket " : "grads bucket ") + std::to_string(k));
                    }
                    for (uint32_t u : units) synced[u].push_back(end);
                }
            }
            for (uint32_t r : ranks) {
                int64_t local = 0;
                for (auto& [op, bytes, expert] : buckets[r]) local += bytes / 2;
                const int64_t shard = p.zero_stage >= 1 ? local / p.dp : local;
                params_ready[r] = compute(r, Phase::optimizer, time_of({optimizer_op(shard)}), nm(it + "optimizer"), synced[r], true);
            }
            if (p.zero_stage >= 1 && p.zero_stage <= 2 && p.dp > 1) {
                int64_t bytes = 0;  // the same on every unit of the stage
                for (auto& [op, b2, expert] : buckets[ranks[0]])
                    if (!expert) bytes += b2;
                for (const auto& family : families(dp_groups_of(s, false))) {
                    const uint32_t end = collective(CollectiveKind::all_gather, Group::dp, family, bytes, [&](uint32_t u) { return params_ready[u]; },
                                                    it + "params all-gather");
                    for (uint32_t u : units_of(family)) params_ready[u] = end;
                }
            }
        }
    }
};

}  // namespace

TaskGraph build_task_graph(const LlmWorkload& w, const WorkloadTables& t, const Placement& place, bool lockstep) {
    auto gpu_it = t.gpus.find(w.gpu);
    if (gpu_it == t.gpus.end()) throw InputError("workload.gpu", "unknown GPU \"" + w.gpu + "\" (data/gpus.json)");
    TransformerGraph b(w, t, place, gpu_it->second, lockstep);
    for (int iter = 0; iter < w.iterations; ++iter) b.iteration(iter);
    return std::move(b.g);
}

}  // namespace orrery
