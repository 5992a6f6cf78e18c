#include "workload/graph.h"

#include <algorithm>
#include <stdexcept>

#include "common/diagnostics.h"
#include "common/memory_budget.h"

namespace orrery {

const char* group_name(Group g) {
    switch (g) {
        case Group::none: return "none";
        case Group::tp: return "tp";
        case Group::pp: return "pp";
        case Group::dp: return "dp";
        case Group::ep: return "ep";
        case Group::embedding: return "embedding";
    }
    return "?";
}

void TaskGraph::limit_to_memory(const std::string& at) {
    const uint64_t memory = physical_memory_bytes();
    where = at;
    max_ops = memory == 0 ? UINT64_MAX : std::min<uint64_t>(memory / 4 * 3 / kOpBytes, UINT32_MAX - 1);
}

uint32_t TaskGraph::add(const Op& op, const std::vector<uint32_t>& after) {
    if (ops.size() >= max_ops)
        throw InputError(where, "the task graph passes " + std::to_string(ops.size()) + " operations (about " + gib(ops.size() * kOpBytes) +
                                    " to run), more than three quarters of this machine's " + gib(physical_memory_bytes()) +
                                    " of memory: refused while building it. A smaller world, fewer micro-batches or, for a SimAI file, "
                                    "\"collectives\": {\"model\": \"busbw\"} (no task graph) runs here");
    const uint32_t id = uint32_t(ops.size());
    ops.push_back(op);
    deps.emplace_back();
    for (uint32_t d : after) add_dep(id, d);
    return id;
}

void TaskGraph::add_dep(uint32_t op, uint32_t after) {
    if (after == UINT32_MAX) return;
    std::vector<uint32_t>& list = deps[op];
    // Duplicates would count a predecessor twice.
    if (std::find(list.begin(), list.end(), after) == list.end()) list.push_back(after);
}

uint32_t TaskGraph::name(const std::string& s) {
    auto [it, fresh] = name_index.emplace(s, uint32_t(names.size()));
    if (fresh) names.push_back(s);
    return it->second;
}

uint32_t TaskGraph::intern_members(const std::vector<uint32_t>& ranks) {
    auto [it, fresh] = member_index.emplace(ranks, uint32_t(member_sets.size()));
    if (fresh) member_sets.push_back(ranks);
    return it->second;
}

uint32_t TaskGraph::intern_pairs(const std::vector<RankPair>& pairs, uint32_t label, uint32_t cycle) {
    auto [it, fresh] = pair_index.emplace(std::make_tuple(label, cycle, pairs), uint32_t(pair_sets.size()));
    if (fresh) pair_sets.push_back({pairs, label, cycle});
    return it->second;
}

int64_t lockstep_pieces(const PairSet& set, const Op& op, int64_t chunk) {
    if (set.cycle == 0 || chunk <= 0) return 1;
    const int64_t step = op.bytes / std::max<uint32_t>(1, op.steps);
    return std::max<int64_t>(1, (step + chunk - 1) / chunk);
}

int64_t lockstep_cost(const PairSet& set, const std::vector<int64_t>& cost, uint32_t steps) {
    if (set.cycle == 0 || steps <= 1) return int64_t(steps) * (cost.empty() ? 0 : *std::max_element(cost.begin(), cost.end()));
    // Step k of member i waits for step k−1 of member i−1: a path back around the ring through `steps` pairs.
    const size_t n = set.cycle, loops = steps / n, rest = steps % n;
    int64_t worst = 0;
    for (size_t g0 = 0; g0 + n <= cost.size(); g0 += n) {
        int64_t loop = 0;
        for (size_t i = 0; i < n; ++i) loop += cost[g0 + i];
        int64_t window = 0, best = 0;  // the costliest `rest` consecutive pairs (cyclic)
        for (size_t i = 0; i < rest; ++i) window += cost[g0 + i];
        best = window;
        for (size_t i = 0; rest > 0 && i < n; ++i) {
            window += cost[g0 + (i + rest) % n] - cost[g0 + i];
            best = std::max(best, window);
        }
        worst = std::max(worst, int64_t(loops) * loop + best);
    }
    return worst;
}

void TaskGraph::set_lanes(std::vector<std::vector<uint32_t>> ranks, uint32_t total_ranks) {
    lane_of_rank.assign(total_ranks, UINT32_MAX);
    for (uint32_t l = 0; l < ranks.size(); ++l)
        for (uint32_t r : ranks[l]) lane_of_rank.at(r) = l;
    for (uint32_t r = 0; r < total_ranks; ++r)
        if (lane_of_rank[r] == UINT32_MAX) throw std::logic_error("TaskGraph::set_lanes: rank " + std::to_string(r) + " is in no lane");
    lane_ranks = std::move(ranks);
    world = uint32_t(lane_ranks.size());
}

}  // namespace orrery
