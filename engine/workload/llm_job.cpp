#include "workload/llm_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "common/diagnostics.h"
#include "common/memory_budget.h"
#include "net/state.h"
#include "workload/placement.h"

namespace orrery {

const GpuSpec& workload_gpu(const LlmWorkload& w, const WorkloadTables& t) {
    auto gpu = t.gpus.find(w.gpu);
    if (gpu == t.gpus.end()) throw InputError("workload.gpu", "unknown GPU \"" + w.gpu + "\" (data/gpus.json)");
    return gpu->second;
}

bool lockstep_lanes(const LlmWorkload& w, uint32_t ranks) {
    return w.granularity == Granularity::stage ||
           (w.granularity == Granularity::automatic && w.network_mode != NetworkMode::packet && !w.collectives.pxn && ranks >= kLockstepFrom);
}

std::string lockstep_warning(uint32_t ranks) {
    return std::to_string(ranks) + " ranks: each pipeline stage runs as one lane, its ranks in lockstep, each collective one task over all the "
                                   "stage's groups (\"granularity\": \"rank\" builds every rank)";
}

LlmJob prepare_llm_job(const LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t, const std::vector<NodeId>* hosts) {
    const std::vector<std::string> problems = check_llm_workload(w, hosts ? nullptr : &fabric);
    if (!problems.empty()) {
        Diagnostics d;
        for (const std::string& p : problems) d.error(p.substr(0, p.find(':')), p.substr(p.find(':') + 2));
        throw InputError(d);
    }
    LlmJob job;
    job.workload = &w;
    job.memory = memory_per_rank(w, workload_gpu(w, t));
    if (!job.memory.fits()) {
        const RankMemory& r = job.memory.worst();
        char buf[400];
        const double gib = double(1ull << 30);  // one unit for memory everywhere (the workbench shows GiB too)
        std::snprintf(buf, sizeof buf,
                      "rank %u (pipeline stage %d) needs %.2f GiB (weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, overhead %.2f) "
                      "but a %s has %.2f GiB",
                      r.rank, r.stage, r.total() / gib, r.weights / gib, r.gradients / gib, r.optimizer / gib, r.activations / gib, r.overhead / gib,
                      w.gpu.c_str(), job.memory.available / gib);
        job.oom_message = buf;
        return job;  // not run: no task graph
    }
    job.place = hosts ? place_on_hosts(fabric, *hosts) : place_ranks(w.parallel, fabric);
    const bool lockstep = lockstep_lanes(w, uint32_t(w.parallel.world()));
    refuse_graph_beyond_memory(w, t, job.place, lockstep);
    job.graph = build_task_graph(w, t, job.place, lockstep);
    index_transfers(job);
    return job;
}

void refuse_graph_beyond_memory(const LlmWorkload& w, const WorkloadTables& t, const Placement& place, bool lockstep) {
    // Each micro-batch beyond the pipeline's depth adds the same schedule, so the graph grows by the same
    // number of operations per micro-batch: two small builds give that slope, and a job whose graph cannot fit
    // is refused at once with the estimate instead of minutes and gigabytes into building it.
    const int small = w.parallel.pp, m = w.parallel.micro_batches;
    if (m <= 4 * small) return;
    LlmWorkload probe = w;
    probe.iterations = 1;
    probe.parallel.micro_batches = small;
    const uint64_t at_small = build_task_graph(probe, t, place, lockstep).size();
    probe.parallel.micro_batches = 2 * small;
    const uint64_t at_double = build_task_graph(probe, t, place, lockstep).size();
    const uint64_t per_micro_batch = (at_double - at_small) / uint64_t(small);
    const uint64_t ops = (at_small + uint64_t(m - small) * per_micro_batch) * uint64_t(std::max(1, w.iterations));
    refuse_beyond_memory("workload.parallel.micro_batches",
                         "the task graph of " + std::to_string(m) + " micro-batches (about " + std::to_string(ops) + " operations, " +
                             std::to_string(per_micro_batch) + " a micro-batch over " + std::to_string(w.parallel.world()) + " ranks)",
                         ops * TaskGraph::kOpBytes);
}

void index_transfers(LlmJob& job) {
    job.transfers.clear();
    job.source_port.clear();
    job.flow_of_op.assign(job.graph.size(), UINT32_MAX);
    std::map<std::pair<uint32_t, uint32_t>, uint16_t> next_port;
    for (uint32_t op = 0; op < job.graph.size(); ++op) {
        const Op& o = job.graph.ops[op];
        if (o.kind != OpKind::transfer) continue;
        job.flow_of_op[op] = uint32_t(job.transfers.size());
        job.transfers.push_back(op);
        if (o.pairs != UINT32_MAX) {  // lockstep: its pairs take their set's port (flow_mode.cpp)
            job.source_port.push_back(0);
            continue;
        }
        auto [it, fresh] = next_port.emplace(std::make_pair(job.place.host[o.rank], job.place.host[o.peer]), uint16_t(10000));
        job.source_port.push_back(it->second++);
        if (it->second == 0) it->second = 10000;  // 55,536 flows of one pair: wrap (ECMP only mixes the hash)
    }
}

std::vector<FlowSpec> llm_flows(const LlmJob& job, int priority) {
    if (job.graph.lockstep()) throw std::logic_error("llm_flows: a lockstep graph has no per-rank flows (granularity \"stage\" is refused at packet level)");
    std::vector<FlowSpec> flows;
    for (size_t i = 0; i < job.transfers.size(); ++i) {
        const Op& o = job.graph.ops[job.transfers[i]];
        FlowSpec f;
        f.src = job.place.host[o.rank];
        f.dst = job.place.host[o.peer];
        f.priority = job.lane_workload.empty() ? priority : job.workload_of(o.rank).collectives.priority;
        f.sport = job.source_port[i];
        f.dport = kLlmDestinationPort;
        f.size = Bytes(o.bytes);
        f.start = Picoseconds(net::kNever);
        f.where = "workload: " + job.graph.names[o.name];
        flows.push_back(std::move(f));
    }
    return flows;
}

namespace {

std::string peers_of(const CollectiveRecord& c, uint32_t rank) {
    std::string s;
    for (uint32_t r : c.ranks) {
        if (r == rank) continue;
        if (!s.empty()) s += ',';
        s += std::to_string(r);
    }
    return s;
}

}  // namespace

void span_members(const TaskGraph& g, const CollectiveRecord& c, std::vector<uint32_t>& members) {
    members.clear();
    if (!g.lockstep()) {
        members = c.ranks;
        return;
    }
    std::vector<uint32_t> lanes;  // several members share a lane: the first on each
    for (uint32_t r : c.ranks) {
        const uint32_t lane = g.lane(r);
        if (std::find(lanes.begin(), lanes.end(), lane) != lanes.end()) continue;
        lanes.push_back(lane);
        members.push_back(r);
    }
}

TimelineSpan compute_span(const TaskGraph& g, const OpTimes& x, uint32_t op) {
    const Op& c = g.ops[op];
    return {g.first_rank(c.rank), c.iteration, "compute", g.names[c.name], phase_name(c.phase), x.start[op], x.end[op], 0, ""};
}

TimelineSpan collective_span(const TaskGraph& g, const OpTimes& x, uint32_t collective, uint32_t member) {
    const CollectiveRecord& c = g.collectives[collective];
    return {member, g.ops[c.start].iteration, group_name(c.group), g.names[c.name], collective_kind_name(c.kind), x.end[c.start], x.end[c.end], c.bytes,
            peers_of(c, member)};
}

namespace {

// The network flows a job's transfers stand for. A lockstep graph's task is every pair across servers, per
// step and piece.
size_t network_flows(const LlmJob& job) {
    const TaskGraph& g = job.graph;
    if (!g.lockstep()) return job.transfers.size();
    std::vector<size_t> network_pairs(g.pair_sets.size(), SIZE_MAX);
    size_t flows = 0;
    for (uint32_t op : job.transfers) {
        const Op& t = g.ops[op];
        size_t& n = network_pairs[t.pairs];
        if (n == SIZE_MAX) {
            n = 0;
            for (const RankPair& pr : g.pair_sets[t.pairs].pairs) n += job.place.server[pr.first] != job.place.server[pr.second];
        }
        flows += n * t.steps * size_t(lockstep_pieces(g.pair_sets[t.pairs], t, job.workload_of(t.rank).collectives.chunk.count));
    }
    return flows;
}

// Per lane: its compute ops in graph order, and the collective that ends last among those it runs.
struct LaneFacts {
    std::vector<std::vector<uint32_t>> compute_of;
    std::vector<int64_t> last_comm_end;
    std::vector<Group> last_comm_group;
};

LaneFacts timeline(const TaskGraph& g, const OpTimes& x, LlmOutcome& o) {
    LaneFacts lanes;
    // Timeline: compute spans, and one span per collective and member, by lane (bucketed), then start within a
    // lane. Each span's place is found from its lane and start first, and the span (four strings) is made once,
    // there: made in graph order, grown and then moved into place, they cost a third more.
    struct SpanSource {
        uint32_t lane;        // the rank or lane it is on
        uint32_t item;        // a compute op, or a collective
        uint32_t member;      // the collective's member rank (unused for compute)
        int64_t start;
    };
    std::vector<std::vector<uint32_t>>& compute_of = lanes.compute_of;
    compute_of.resize(g.world);
    std::vector<SpanSource> sources;
    size_t upper_bound = 0;
    for (const CollectiveRecord& c : g.collectives) upper_bound += c.ranks.size();
    sources.reserve(g.size() + upper_bound);
    uint32_t compute_spans = 0;
    for (uint32_t op = 0; op < g.size(); ++op) {
        const Op& c = g.ops[op];
        if (c.kind != OpKind::compute) continue;
        compute_of[c.rank].push_back(op);
        sources.push_back({c.rank, op, 0, x.start[op]});
        ++compute_spans;
    }
    // A lockstep graph reports per lane, under the lane's first rank; a collective once per lane it runs on.
    std::vector<int64_t>& last_comm_end = lanes.last_comm_end;
    last_comm_end.assign(g.world, 0);
    std::vector<Group>& last_comm_group = lanes.last_comm_group;
    last_comm_group.assign(g.world, Group::dp);  // the group of the collective that ends last
    std::vector<uint32_t> members;
    for (uint32_t ci = 0; ci < g.collectives.size(); ++ci) {
        const CollectiveRecord& c = g.collectives[ci];
        const int64_t s = x.end[c.start], e = x.end[c.end];
        span_members(g, c, members);
        for (uint32_t r : members) {
            const uint32_t lane = g.lane(r);
            sources.push_back({lane, ci, r, s});
            if (e >= last_comm_end[lane]) {
                last_comm_end[lane] = e;
                last_comm_group[lane] = c.group;
            }
        }
    }
    {
        std::vector<uint32_t> begin(size_t(g.world) + 1, 0);
        for (const SpanSource& src : sources) ++begin[size_t(src.lane) + 1];
        for (size_t r = 0; r < g.world; ++r) begin[r + 1] += begin[r];
        std::vector<uint32_t> order(sources.size()), next(begin.begin(), begin.end() - 1);
        for (uint32_t i = 0; i < sources.size(); ++i) order[next[sources[i].lane]++] = i;
        for (size_t r = 0; r < g.world; ++r)
            std::stable_sort(order.begin() + begin[r], order.begin() + begin[r + 1],
                             [&](uint32_t a, uint32_t b) { return sources[a].start < sources[b].start; });
        o.timeline.reserve(order.size());
        for (uint32_t i : order) {
            const SpanSource& src = sources[i];
            o.timeline.push_back(i < compute_spans ? compute_span(g, x, src.item) : collective_span(g, x, src.item, src.member));
        }
    }

    return lanes;
}

// Lane r's breakdown: every gap in its compute stream is charged to what it waited on.
RankBreakdown rank_breakdown(const TaskGraph& g, const OpTimes& x, const LaneFacts& lanes, uint32_t r, double iteration_time_s, double it, int64_t t0) {
    const std::vector<std::vector<uint32_t>>& compute_of = lanes.compute_of;
    const std::vector<int64_t>& last_comm_end = lanes.last_comm_end;
    const std::vector<Group>& last_comm_group = lanes.last_comm_group;
    RankBreakdown b;
    b.rank = g.first_rank(r);
    int64_t prev_end = t0;
    double exposed[kGroupCount] = {}, bubble = 0, compute = 0, optimizer = 0;
    for (uint32_t op : compute_of[r]) {
        const int64_t start = x.start[op], end = x.end[op];
        compute += double(end - start);
        if (g.ops[op].optimizer) optimizer += double(end - start);
        const int64_t gap = start - prev_end;
        if (gap > 0) {
            const uint32_t blocker = x.blocker[op];
            const Op* bo = blocker == UINT32_MAX ? nullptr : &g.ops[blocker];
            if (bo && bo->group == Group::pp && bo->collective != UINT32_MAX) {
                // A pipeline receive: waiting before the sender was ready is bubble, the transfer itself exposed PP.
                const int64_t sent = x.end[g.collectives[bo->collective].start];
                const int64_t waited = std::clamp<int64_t>(sent - prev_end, 0, gap);
                bubble += double(waited);
                exposed[size_t(Group::pp)] += double(gap - waited);
            } else if (bo && bo->group != Group::none) {
                exposed[size_t(bo->group)] += double(gap);
            }
        }
        prev_end = std::max(prev_end, end);
    }
    // After its last compute: its own collectives still running are exposed, charged to the one that ends
    // last (DP gradients or parameters, or the embedding sync).
    const int64_t tail_comm = std::max<int64_t>(0, last_comm_end[r] - prev_end);
    const Group tail_group = last_comm_group[r] == Group::none ? Group::dp : last_comm_group[r];
    exposed[size_t(tail_group)] += double(tail_comm);
    const double ps = 1e-12 / it;
    b.compute_s = compute * ps;
    b.optimizer_s = optimizer * ps;
    b.exposed_tp_s = exposed[size_t(Group::tp)] * ps;
    b.exposed_pp_s = exposed[size_t(Group::pp)] * ps;
    b.exposed_dp_s = exposed[size_t(Group::dp)] * ps;
    b.exposed_ep_s = exposed[size_t(Group::ep)] * ps;
    b.exposed_embedding_s = exposed[size_t(Group::embedding)] * ps;
    b.bubble_s = bubble * ps;
    b.idle_s = iteration_time_s -
               (b.compute_s + b.exposed_tp_s + b.exposed_pp_s + b.exposed_dp_s + b.exposed_ep_s + b.exposed_embedding_s + b.bubble_s);
    if (std::fabs(b.idle_s) < 1e-15) b.idle_s = 0;  // the sum's rounding (a rank with no idle time read -4e-19 s)
    return b;
}

}  // namespace

LlmOutcome summarize_llm(const LlmJob& job, const Executor& x) { return summarize_llm(job, x.times(), 0); }

LlmOutcome summarize_llm(const LlmJob& job, const OpTimes& x, int64_t t0) {
    const TaskGraph& g = job.graph;
    LlmOutcome o;
    o.iterations = job.workload->iterations;
    o.ops = g.size();
    o.flows = network_flows(job);
    o.transfer_times.reserve(job.transfers.size());
    for (uint32_t op : job.transfers) o.transfer_times.emplace_back(x.start[op], x.end[op]);
    int64_t finish = t0;
    for (uint32_t op = 0; op < g.size(); ++op) finish = std::max(finish, x.end[op]);
    o.iteration_time_s = double(finish - t0) * 1e-12 / o.iterations;
    const LaneFacts lanes = timeline(g, x, o);
    for (uint32_t r = 0; r < g.world; ++r) o.ranks.push_back(rank_breakdown(g, x, lanes, r, o.iteration_time_s, o.iterations, t0));
    return o;
}

nlohmann::json llm_summary_json(const LlmOutcome& o) {
    nlohmann::json j;
    j["iteration_time_s"] = o.iteration_time_s;
    j["iterations"] = o.iterations;
    if (o.ranks.empty()) return j;
    auto mean = [&](double RankBreakdown::*f) {
        double s = 0;
        for (const RankBreakdown& r : o.ranks) s += r.*f;
        return s / double(o.ranks.size());
    };
    j["breakdown_mean_per_rank"] = {{"compute_s", mean(&RankBreakdown::compute_s)},       {"optimizer_s", mean(&RankBreakdown::optimizer_s)},
                                    {"exposed_tp_s", mean(&RankBreakdown::exposed_tp_s)}, {"exposed_pp_s", mean(&RankBreakdown::exposed_pp_s)},
                                    {"exposed_dp_s", mean(&RankBreakdown::exposed_dp_s)}, {"exposed_ep_s", mean(&RankBreakdown::exposed_ep_s)},
                                    {"exposed_embedding_s", mean(&RankBreakdown::exposed_embedding_s)},
                                    {"bubble_s", mean(&RankBreakdown::bubble_s)},         {"idle_s", mean(&RankBreakdown::idle_s)}};
    j["ops"] = o.ops;
    j["network_flows"] = o.flows;
    return j;
}

LlmOutcome run_llm_analytic(const LlmJob& job, const Fabric& fabric, const Routes& routes, uint32_t mtu, const Summarize& summarize) {
    // Path facts per host pair, computed once.
    std::map<std::pair<uint32_t, uint32_t>, PathMetrics> paths;
    auto path = [&](uint32_t a, uint32_t b) -> const PathMetrics& {
        auto it = paths.find({a, b});
        if (it == paths.end()) it = paths.emplace(std::make_pair(a, b), path_metrics(fabric, routes, a, b, mtu)).first;
        if (it->second.hops < 0) throw InputError("workload", "host " + std::to_string(b) + " cannot be reached from host " + std::to_string(a));
        return it->second;
    };
    // Lockstep transfers: per pair set its distinct network paths and whether a pair stays inside a server.
    struct SetPaths {
        bool ready = false;
        std::vector<PathMetrics> network;  // distinct paths
        std::vector<uint32_t> path_of;     // per pair: index into network, UINT32_MAX inside a server
    };
    std::vector<SetPaths> set_paths(job.graph.pair_sets.size());
    std::vector<int64_t> cost;  // scratch: per pair of a lockstep transfer, its step alone (ps)
    auto paths_of = [&](uint32_t set) -> const SetPaths& {
        SetPaths& sp = set_paths[set];
        if (sp.ready) return sp;
        std::map<std::tuple<int, uint64_t, uint64_t, uint64_t>, uint32_t> seen;
        for (const RankPair& pr : job.graph.pair_sets[set].pairs) {
            if (job.place.server[pr.first] == job.place.server[pr.second]) {
                sp.path_of.push_back(UINT32_MAX);
                continue;
            }
            const PathMetrics& m = path(job.place.host[pr.first], job.place.host[pr.second]);
            auto [it, fresh] = seen.emplace(std::make_tuple(m.hops, m.delay_ns, m.tx_delay_ns, m.min_bw), uint32_t(sp.network.size()));
            if (fresh) sp.network.push_back(m);
            sp.path_of.push_back(it->second);
        }
        sp.ready = true;
        return sp;
    };
    Executor x(job.graph, job.workload->compute.overlap_slowdown, [&](uint32_t op, int64_t t) {
        const Op& o = job.graph.ops[op];
        if (o.pairs != UINT32_MAX) {  // every pair alone on its path, a step at a time (lockstep_cost)
            const SetPaths& sp = paths_of(o.pairs);
            const PairSet& set = job.graph.pair_sets[o.pairs];
            const int64_t pieces = lockstep_pieces(set, o, job.workload_of(o.rank).collectives.chunk.count);
            const uint64_t step = uint64_t(o.bytes) / o.steps / uint64_t(pieces);
            std::vector<int64_t> per_path(sp.network.size());
            for (size_t i = 0; i < sp.network.size(); ++i) per_path[i] = int64_t(standalone_fct_ns(sp.network[i], step, mtu)) * 1000;
            cost.resize(sp.path_of.size());
            const int64_t nvlink = pieces == 1 ? o.duration : o.duration - (o.duration - job.place.nvlink_hop_ps) * (pieces - 1) / pieces;
            for (size_t p = 0; p < cost.size(); ++p) cost[p] = sp.path_of[p] == UINT32_MAX ? nvlink : per_path[sp.path_of[p]];
            x.transfer_done(op, t + lockstep_cost(set, cost, uint32_t(o.steps + pieces - 1)));
            return t;
        }
        const PathMetrics& m = path(job.place.host[o.rank], job.place.host[o.peer]);
        x.transfer_done(op, t + int64_t(standalone_fct_ns(m, uint64_t(o.bytes), mtu)) * 1000);
        return t;
    });
    x.begin(0);
    while (x.next_time() != kNoTime) x.advance(x.next_time());
    if (!x.finished()) throw std::logic_error("workload task graph has a cycle: " + std::to_string(x.unfinished()) + " ops never became ready");
    return summarize ? summarize(x) : summarize_llm(job, x);
}

}  // namespace orrery
