#pragma once
// The reference simulator's arithmetic, reproduced so that times and rates come out to the same integer.
//  - Time: ns-3 builds Seconds(double) through a 64.64 fixed-point number and truncates to whole
//    nanoseconds (reference README §5: "floor(bytes·8/rate)", sometimes 1 ns low).
//  - DataRate arithmetic: DataRate(uint64_t(double expression)), i.e. truncation toward zero.
// Everything here is exact integer work on the bits of IEEE doubles: no long double, no libm.
#include <cstdint>
#include <cstring>

#include "common/host_device.h"

namespace orrery::net {

// 128-bit integers (GCC, Clang and nvcc all have them; __extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 uint128;

// floor(x · ns_per_unit) for a double x ≥ 0, as ns-3's Time::FromDouble(x, unit).GetTimeStep() with
// nanosecond resolution: x is first truncated to 64 fractional bits, then multiplied by the unit's factor.
ORRERY_HD inline int64_t ns3_to_ns(double x, uint64_t ns_per_unit) {
    if (!(x > 0)) return 0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int exponent = int((bits >> 52) & 0x7ff) - 1075;  // x = mantissa · 2^exponent
    const uint64_t mantissa = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    // fixed = floor(x · 2^64) as an unsigned 128-bit number (hi, lo)
    const int shift = exponent + 64;
    uint128 fixed;
    if (shift >= 0) {
        if (shift > 70) return INT64_MAX;  // beyond any simulated time
        fixed = (uint128)mantissa << shift;
    } else {
        fixed = shift <= -64 ? 0 : (uint128)(mantissa >> (-shift));
    }
    const uint128 lo = (uint128)(uint64_t)fixed * ns_per_unit;
    const uint128 hi = (uint128)(uint64_t)(fixed >> 64) * ns_per_unit;
    return int64_t(hi + (lo >> 64));
}

ORRERY_HD inline int64_t ns3_seconds_to_ns(double x) { return ns3_to_ns(x, 1000000000u); }

// Serialization time in ns of `bytes` at `bps`: Seconds(DataRate::CalculateTxTime(bytes)).
ORRERY_HD inline int64_t tx_time_ns(uint32_t bytes, uint64_t bps) {
    return ns3_seconds_to_ns(double(bytes) * 8 / double(bps));
}

// MicroSeconds(double) as ns: scaled from microseconds directly (1 µs is exactly 1000 ns, while 1e-6 s
// as a double is slightly less than a microsecond).
ORRERY_HD inline int64_t us_to_ns(double us) { return ns3_to_ns(us, 1000u); }

// DataRate(uint64_t(d)): the double-to-integer conversion of DataRate's operators.
ORRERY_HD inline uint64_t rate_from_double(double bps) { return bps <= 0 ? 0 : uint64_t(bps); }
ORRERY_HD inline uint64_t rate_times(uint64_t bps, double c) { return rate_from_double(double(bps) * c); }
ORRERY_HD inline uint64_t rate_div(uint64_t bps, double c) { return rate_from_double(double(bps) / c); }
ORRERY_HD inline uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
ORRERY_HD inline uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
ORRERY_HD inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
ORRERY_HD inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
// Index of the lowest set bit of a non-zero word.
ORRERY_HD inline uint32_t lowest_bit(uint32_t word) {
#ifdef __CUDA_ARCH__
    return uint32_t(__ffs(int(word)) - 1);
#else
    return uint32_t(__builtin_ctz(word));
#endif
}

// Counter-based random numbers (SplitMix64 over seed, stream and counter): the same draw on any thread,
// any backend and in any batch. Uniform in [0, 1) with 53 bits.
ORRERY_HD inline uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
// Salts the seed of the link-loss stream so its draws never coincide with the ECN stream's of the same port.
inline constexpr uint64_t kLossStreamSalt = 0x6c6f73735f726e67ull;  // "loss_rng"
ORRERY_HD inline double uniform01(uint64_t seed, uint64_t stream, uint64_t counter) {
    return double(mix64(mix64(seed ^ mix64(stream)) ^ counter) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace orrery::net
