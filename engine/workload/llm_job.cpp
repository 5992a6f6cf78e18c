#include "workload/llm_job.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common/diagnostics.h"
#include "net/state.h"

namespace orrery {

const GpuSpec& workload_gpu(const LlmWorkload& w, const WorkloadTables& t) {
    auto gpu = t.gpus.find(w.gpu);
    if (gpu == t.gpus.end()) throw InputError("workload.gpu", "unknown GPU \"" + w.gpu + "\" (data/gpus.json)");
    return gpu->second;
}

LlmJob prepare_llm_job(const LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t) {
    const std::vector<std::string> problems = check_llm_workload(w, &fabric);
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
    job.place = place_ranks(w.parallel, fabric);
    job.graph = build_task_graph(w, t, job.place);
    index_transfers(job);
    return job;
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
        auto [it, fresh] = next_port.emplace(std::make_pair(job.place.host[o.rank], job.place.host[o.peer]), uint16_t(10000));
        job.source_port.push_back(it->second++);
        if (it->second == 0) it->second = 10000;  // 55,536 flows of one pair: wrap (ECMP only mixes the hash)
    }
}

std::vector<FlowSpec> llm_flows(const LlmJob& job, int priority) {
    std::vector<FlowSpec> flows;
    for (size_t i = 0; i < job.transfers.size(); ++i) {
        const Op& o = job.graph.ops[job.transfers[i]];
        FlowSpec f;
        f.src = job.place.host[o.rank];
        f.dst = job.place.host[o.peer];
        f.priority = priority;
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

LlmOutcome summarize_llm(const LlmJob& job, const Executor& x) {
    const TaskGraph& g = job.graph;
    LlmOutcome o;
    o.iterations = job.workload->iterations;
    o.ops = g.size();
    o.flows = job.transfers.size();
    int64_t finish = 0;
    for (uint32_t op = 0; op < g.size(); ++op) finish = std::max(finish, x.end()[op]);
    o.iteration_time_s = double(finish) * 1e-12 / o.iterations;

    // Timeline: compute spans, and one span per collective and member.
    std::vector<std::vector<uint32_t>> compute_of(g.world);
    for (uint32_t op = 0; op < g.size(); ++op) {
        const Op& c = g.ops[op];
        if (c.kind != OpKind::compute) continue;
        compute_of[c.rank].push_back(op);
        o.timeline.push_back({c.rank, c.iteration, "compute", g.names[c.name], phase_name(c.phase), x.start()[op], x.end()[op], 0, ""});
    }
    std::vector<int64_t> last_comm_end(g.world, 0);
    for (const CollectiveRecord& c : g.collectives) {
        const int64_t s = x.end()[c.start], e = x.end()[c.end];
        for (uint32_t r : c.ranks) {
            o.timeline.push_back({r, g.ops[c.start].iteration, group_name(c.group), g.names[c.name], collective_kind_name(c.kind), s, e, c.bytes, peers_of(c, r)});
            last_comm_end[r] = std::max(last_comm_end[r], e);
        }
    }
    {  // by rank (bucketed), then start within a rank; each span moved once (a span holds four strings)
        std::vector<uint32_t> begin(size_t(g.world) + 1, 0);
        for (const TimelineSpan& span : o.timeline) ++begin[size_t(span.rank) + 1];
        for (size_t r = 0; r < g.world; ++r) begin[r + 1] += begin[r];
        std::vector<uint32_t> order(o.timeline.size()), next(begin.begin(), begin.end() - 1);
        std::vector<int64_t> start(o.timeline.size());
        for (uint32_t i = 0; i < o.timeline.size(); ++i) {
            const uint32_t at = next[o.timeline[i].rank]++;
            order[at] = i;
            start[at] = o.timeline[i].start_ps;
        }
        for (size_t r = 0; r < g.world; ++r) {
            std::vector<std::pair<int64_t, uint32_t>> by_start;
            for (uint32_t k = begin[r]; k < begin[r + 1]; ++k) by_start.emplace_back(start[k], order[k]);
            std::stable_sort(by_start.begin(), by_start.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            for (uint32_t k = begin[r]; k < begin[r + 1]; ++k) order[k] = by_start[k - begin[r]].second;
        }
        std::vector<TimelineSpan> sorted;
        sorted.reserve(order.size());
        for (uint32_t i : order) sorted.push_back(std::move(o.timeline[i]));
        o.timeline = std::move(sorted);
    }

    // Breakdown: every gap in a rank's compute stream is charged to what it waited on.
    const double it = o.iterations;
    for (uint32_t r = 0; r < g.world; ++r) {
        RankBreakdown b;
        b.rank = r;
        int64_t prev_end = 0;
        double exposed[5] = {0, 0, 0, 0, 0}, bubble = 0, compute = 0, optimizer = 0;
        for (uint32_t op : compute_of[r]) {
            const int64_t start = x.start()[op], end = x.end()[op];
            compute += double(end - start);
            if (g.ops[op].optimizer) optimizer += double(end - start);
            const int64_t gap = start - prev_end;
            if (gap > 0) {
                const uint32_t blocker = x.blocker()[op];
                const Op* bo = blocker == UINT32_MAX ? nullptr : &g.ops[blocker];
                if (bo && bo->group == Group::pp && bo->collective != UINT32_MAX) {
                    // A pipeline receive: waiting before the sender was ready is bubble, the transfer itself exposed PP.
                    const int64_t sent = x.end()[g.collectives[bo->collective].start];
                    const int64_t waited = std::clamp<int64_t>(sent - prev_end, 0, gap);
                    bubble += double(waited);
                    exposed[size_t(Group::pp)] += double(gap - waited);
                } else if (bo && bo->group != Group::none) {
                    exposed[size_t(bo->group)] += double(gap);
                }
            }
            prev_end = std::max(prev_end, end);
        }
        // After its last compute: its own collectives still running are exposed DP (gradients, parameters).
        const int64_t tail_comm = std::max<int64_t>(0, last_comm_end[r] - prev_end);
        exposed[size_t(Group::dp)] += double(tail_comm);
        const double ps = 1e-12 / it;
        b.compute_s = compute * ps;
        b.optimizer_s = optimizer * ps;
        b.exposed_tp_s = exposed[size_t(Group::tp)] * ps;
        b.exposed_pp_s = exposed[size_t(Group::pp)] * ps;
        b.exposed_dp_s = exposed[size_t(Group::dp)] * ps;
        b.exposed_ep_s = exposed[size_t(Group::ep)] * ps;
        b.bubble_s = bubble * ps;
        b.idle_s = o.iteration_time_s - (b.compute_s + b.exposed_tp_s + b.exposed_pp_s + b.exposed_dp_s + b.exposed_ep_s + b.bubble_s);
        o.ranks.push_back(b);
    }
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
                                    {"bubble_s", mean(&RankBreakdown::bubble_s)},         {"idle_s", mean(&RankBreakdown::idle_s)}};
    j["ops"] = o.ops;
    j["network_flows"] = o.flows;
    return j;
}

LlmOutcome run_llm_analytic(const LlmJob& job, const Fabric& fabric, const Routes& routes, uint32_t mtu) {
    // Path facts per host pair, computed once.
    std::map<std::pair<uint32_t, uint32_t>, PathMetrics> paths;
    Executor x(job.graph, job.workload->compute.overlap_slowdown, [&](uint32_t op, int64_t t) {
        const Op& o = job.graph.ops[op];
        const uint32_t a = job.place.host[o.rank], b = job.place.host[o.peer];
        auto it = paths.find({a, b});
        if (it == paths.end()) it = paths.emplace(std::make_pair(a, b), path_metrics(fabric, routes, a, b, mtu)).first;
        if (it->second.hops < 0) throw InputError("workload", "host " + std::to_string(b) + " cannot be reached from host " + std::to_string(a));
        x.transfer_done(op, t + int64_t(standalone_fct_ns(it->second, uint64_t(o.bytes), mtu)) * 1000);
        return t;
    });
    x.begin(0);
    while (x.next_time() != kNoTime) x.advance(x.next_time());
    if (!x.finished()) throw std::logic_error("workload task graph has a cycle: " + std::to_string(x.unfinished()) + " ops never became ready");
    return summarize_llm(job, x);
}

}  // namespace orrery
