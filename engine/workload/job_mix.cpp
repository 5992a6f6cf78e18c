#include "workload/job_mix.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "workload/placement.h"

namespace orrery {
namespace {

void append_graph(TaskGraph& g, const TaskGraph& part, uint32_t rank_offset) {
    const uint32_t op_offset = uint32_t(g.ops.size()), lane_offset = g.world;
    const uint32_t collective_offset = uint32_t(g.collectives.size()), member_offset = uint32_t(g.member_sets.size()),
                   pair_offset = uint32_t(g.pair_sets.size());
    std::vector<uint32_t> name_of(part.names.size());
    for (size_t i = 0; i < part.names.size(); ++i) name_of[i] = g.name(part.names[i]);
    auto shifted = [](uint32_t v, uint32_t by) { return v == UINT32_MAX ? v : v + by; };
    g.ops.reserve(g.ops.size() + part.ops.size());
    g.deps.reserve(g.deps.size() + part.deps.size());
    for (size_t i = 0; i < part.ops.size(); ++i) {
        Op o = part.ops[i];
        o.rank += lane_offset;
        o.peer += lane_offset;
        o.name = name_of[o.name];
        o.collective = shifted(o.collective, collective_offset);
        o.members = shifted(o.members, member_offset);
        o.pairs = shifted(o.pairs, pair_offset);
        g.ops.push_back(o);
        std::vector<uint32_t> deps = part.deps[i];
        for (uint32_t& d : deps) d += op_offset;
        g.deps.push_back(std::move(deps));
    }
    for (CollectiveRecord c : part.collectives) {
        c.name = name_of[c.name];
        for (uint32_t& r : c.ranks) r += rank_offset;
        c.start += op_offset;
        c.end += op_offset;
        g.collectives.push_back(std::move(c));
    }
    for (std::vector<uint32_t> m : part.member_sets) {
        for (uint32_t& r : m) r += rank_offset;
        g.member_sets.push_back(std::move(m));
    }
    for (PairSet s : part.pair_sets) {
        for (RankPair& pr : s.pairs) pr = {pr.first + rank_offset, pr.second + rank_offset};
        g.pair_sets.push_back(std::move(s));
    }
    for (std::vector<uint32_t> lane : part.lane_ranks) {
        for (uint32_t& r : lane) r += rank_offset;
        g.lane_ranks.push_back(std::move(lane));
    }
    for (uint32_t l : part.lane_of_rank) g.lane_of_rank.push_back(l + lane_offset);
    g.world += part.world;
}

void append_placement(Placement& to, const Placement& part) {
    to.host.insert(to.host.end(), part.host.begin(), part.host.end());
    to.server.insert(to.server.end(), part.server.begin(), part.server.end());
    to.local.insert(to.local.end(), part.local.begin(), part.local.end());
}

}  // namespace

void merge_jobs(JobMix& mix) {
    if (mix.parts.empty()) throw std::logic_error("merge_jobs: no jobs");
    LlmJob& m = mix.merged;
    m = LlmJob{};
    m.workload = mix.parts[0].job.workload;
    const Placement& first = mix.parts[0].job.place;
    m.place.gpus_per_server = first.gpus_per_server;
    m.place.nvlink_hop_ps = first.nvlink_hop_ps;
    m.place.nvlink_bytes_per_s = first.nvlink_bytes_per_s;
    m.place.nvlink_rate_is_bus_bandwidth = first.nvlink_rate_is_bus_bandwidth;
    TaskGraph& g = m.graph;
    uint32_t ranks = 0;
    for (MixPart& p : mix.parts) {
        if (p.job.graph.lockstep() != mix.parts[0].job.graph.lockstep()) throw std::logic_error("merge_jobs: lockstep and per-rank jobs mixed");
        p.first_op = uint32_t(g.ops.size());
        p.first_lane = g.world;
        p.first_rank = ranks;
        p.first_transfer = 0;
        append_graph(g, p.job.graph, ranks);
        append_placement(m.place, p.job.place);
        m.lane_workload.insert(m.lane_workload.end(), p.job.graph.world, p.job.workload);
        g.lane_overlap_slowdown.insert(g.lane_overlap_slowdown.end(), p.job.graph.world, p.job.workload->compute.overlap_slowdown);
        ranks += uint32_t(p.job.place.host.size());
    }
    // A job that starts later: its first ops wait on a join that lasts until its start.
    for (const MixPart& p : mix.parts) {
        if (p.start_ps <= 0) continue;
        const uint32_t end = p.first_op + uint32_t(p.job.graph.size());
        Op wait;
        wait.rank = wait.peer = p.first_lane;
        wait.duration = p.start_ps;
        wait.name = g.name(p.name + " starts");
        const uint32_t at = uint32_t(g.ops.size());
        g.ops.push_back(wait);
        g.deps.emplace_back();
        for (uint32_t op = p.first_op; op < end; ++op)
            if (g.deps[op].empty()) g.deps[op].push_back(at);
    }
    index_ranks_by_server(m.place);
    index_transfers(m);
    uint32_t transfers = 0;
    for (MixPart& p : mix.parts) {
        p.first_transfer = transfers;
        transfers += uint32_t(p.job.transfers.size());
    }
}

LlmJob background_job(const std::vector<BackgroundFlow>& flows, const Fabric& f, const LlmWorkload& w) {
    LlmJob job;
    job.workload = &w;
    std::vector<NodeId> hosts;
    std::map<NodeId, uint32_t> rank_of;
    auto rank = [&](NodeId h) {
        auto [it, fresh] = rank_of.emplace(h, uint32_t(hosts.size()));
        if (fresh) hosts.push_back(h);
        return it->second;
    };
    TaskGraph& g = job.graph;
    const uint32_t name = g.name("flow");
    for (const BackgroundFlow& fl : flows) {
        Op t;
        t.kind = OpKind::transfer;
        t.rank = rank(fl.src);
        t.peer = rank(fl.dst);
        t.bytes = fl.bytes;
        t.name = name;
        uint32_t after = UINT32_MAX;
        if (fl.start_ps > 0) {
            Op wait;
            wait.rank = wait.peer = t.rank;
            wait.duration = fl.start_ps;
            wait.name = g.name("flow starts");
            after = g.add(wait, {});
        }
        g.add(t, after == UINT32_MAX ? std::vector<uint32_t>{} : std::vector<uint32_t>{after});
    }
    g.world = uint32_t(hosts.size());
    job.place = place_on_hosts(f, hosts);
    index_transfers(job);
    return job;
}

void slow_ranks(TaskGraph& g, const std::vector<std::pair<uint32_t, double>>& factors) {
    if (factors.empty()) return;
    std::vector<double> lane_factor(g.world, 1.0);
    for (const auto& [rank, f] : factors) {
        const uint32_t lane = g.lane(rank);
        lane_factor[lane] = std::max(lane_factor[lane], f);
    }
    for (Op& op : g.ops)
        if (op.kind == OpKind::compute && lane_factor[op.rank] != 1.0) op.duration = int64_t(std::llround(double(op.duration) * lane_factor[op.rank]));
}

LlmOutcome summarize_mix(const JobMix& mix, const OpTimes& x, std::vector<LlmOutcome>& per_job) {
    per_job.clear();
    LlmOutcome all;
    all.ops = mix.merged.graph.size();
    std::vector<int64_t> start, end;
    std::vector<uint32_t> blocker;
    for (const MixPart& p : mix.parts) {
        const uint32_t n = uint32_t(p.job.graph.size()), from = p.first_op;
        start.assign(x.start.begin() + from, x.start.begin() + from + n);
        end.assign(x.end.begin() + from, x.end.begin() + from + n);
        blocker.resize(n);
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t b = x.blocker[from + i];
            blocker[i] = b >= from && b < from + n ? b - from : UINT32_MAX;  // a job's start wait is nothing of its own
        }
        per_job.push_back(summarize_llm(p.job, OpTimes{start, end, blocker}, p.start_ps));
        all.iteration_time_s = std::max(all.iteration_time_s, per_job.back().iteration_time_s);
        all.flows += per_job.back().flows;
    }
    all.iterations = per_job.empty() ? 1 : per_job[0].iterations;
    all.transfer_times.reserve(mix.merged.transfers.size());
    for (uint32_t op : mix.merged.transfers) all.transfer_times.emplace_back(x.start[op], x.end[op]);
    return all;
}

}  // namespace orrery
