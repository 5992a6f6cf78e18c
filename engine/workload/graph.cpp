#include "workload/graph.h"

#include <algorithm>

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

}  // namespace orrery
