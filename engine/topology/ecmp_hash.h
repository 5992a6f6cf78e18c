#pragma once
// The reference's ECMP hash (reference/ns3-hpcc README §8): MurmurHash3 x86 32-bit over a 12-byte key of
// three little-endian words (source IP, destination IP, sport | dport << 16), seeded with the switch's node id.
// Shared by the CPU and CUDA backends.
#include <cstdint>

#include "common/host_device.h"

namespace orrery {

ORRERY_HD constexpr uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

ORRERY_HD constexpr uint32_t murmur3_32(const uint32_t* words, int word_count, uint32_t seed) {
    constexpr uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    for (int i = 0; i < word_count; ++i) {
        uint32_t k = words[i];
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    h ^= static_cast<uint32_t>(word_count * 4);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

ORRERY_HD constexpr uint32_t ecmp_hash(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, uint16_t dport, uint32_t seed) {
    const uint32_t key[3] = {src_ip, dst_ip, static_cast<uint32_t>(sport) | (static_cast<uint32_t>(dport) << 16)};
    return murmur3_32(key, 3, seed);
}

// Published MurmurHash3_x86_32 test vectors, checked at compile time.
static_assert(murmur3_32(nullptr, 0, 0) == 0u);
static_assert(murmur3_32(nullptr, 0, 1) == 0x514e28b7u);

// The index ECMP's hash picks among n next hops: hash mod n, or with weights (set_weights), where hash mod
// their sum falls. With every weight 1 the two are the same.
ORRERY_HD inline uint32_t weighted_index(const uint32_t* weights, uint32_t n, uint64_t hash) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) total += weights[i];
    uint64_t x = hash % total;
    for (uint32_t i = 0; i < n; ++i) {
        if (x < weights[i]) return i;
        x -= weights[i];
    }
    return n - 1;
}

}  // namespace orrery
