#pragma once
// Matching flow conflict graphs: the Weisfeiler-Lehman colours behind every memo key, and the isomorphism that
// maps a stored key's flows onto a query's (memo hits, followers, tails).

#include <cstdint>
#include <vector>

#include "wormhole/memo.h"

namespace orrery::wormhole {

// Per vertex, its Weisfeiler-Lehman colour (3 rounds): vertices of one colour have the same label and the
// same labelled neighbourhood, as far as 3 rounds tell.
std::vector<uint64_t> vertex_classes(const FlowConflictGraph& g);

// How isomorphic() decided, counted into by the caller that asks (tests, profiling).
struct MatchCounts {
    uint64_t same_order = 0;   // the query lists its flows as the key does
    uint64_t refined = 0;      // found by colour refinement and individualization
    uint64_t vf2 = 0;          // found by VF2 after the refinement's budget was spent
    uint64_t different = 0;    // shown not isomorphic
    uint64_t gave_up = 0;      // both budgets spent: counted as not the same
};

// Whether `stored` and `query` are the same labelled graph (same context, labels and edge weights); fills
// mapping[stored vertex] = query vertex. Deterministic: the same pair gives the same answer and mapping on
// every thread count and backend. A search too costly for its budget answers "not the same" (a memo miss).
bool isomorphic(const FlowConflictGraph& stored, const FlowConflictGraph& query, std::vector<uint32_t>& mapping, MatchCounts* counts = nullptr);

}  // namespace orrery::wormhole
