#pragma once
// A counter-based draw without repetition, the same on every platform (std::shuffle's is the library's own):
// what a seeded choice of links to fail or servers to place a job on must be to give one result everywhere.
#include <cstdint>
#include <utility>
#include <vector>

namespace orrery {

inline uint64_t splitmix64(uint64_t seed, uint64_t counter) {
    uint64_t x = seed + 0x9e3779b97f4a7c15ull * counter;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The first `count` items of `items` become a draw of `count` without repetition (a partial Fisher–Yates).
template <typename T>
void draw_front(std::vector<T>& items, size_t count, uint64_t seed) {
    for (size_t i = 0; i < count && i < items.size(); ++i) {
        const size_t j = i + size_t(splitmix64(seed, uint64_t(i + 1)) % (items.size() - i));
        std::swap(items[i], items[j]);
    }
}

}  // namespace orrery
