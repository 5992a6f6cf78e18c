#pragma once
// Dependency graphs given as "node i waits for after[i]": how many nodes can ever run (Kahn's algorithm).
// Fewer than all means some wait on each other in a cycle — inputs (imported traces, custom algorithms)
// are checked with it before they run, since such a graph would never finish.
#include <cstdint>
#include <vector>

namespace orrery {

inline size_t runnable_count(const std::vector<std::vector<uint32_t>>& after) {
    std::vector<uint32_t> waiting(after.size());
    std::vector<std::vector<uint32_t>> next(after.size());
    for (uint32_t i = 0; i < after.size(); ++i)
        for (uint32_t d : after[i]) {
            ++waiting[i];
            next[d].push_back(i);
        }
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < after.size(); ++i)
        if (waiting[i] == 0) ready.push_back(i);
    size_t done = 0;
    while (!ready.empty()) {
        const uint32_t i = ready.back();
        ready.pop_back();
        ++done;
        for (uint32_t n : next[i])
            if (--waiting[n] == 0) ready.push_back(n);
    }
    return done;
}

}  // namespace orrery
