#pragma once
// Distinct integer unit types, so bytes, picoseconds and bit rates never mix silently.
// All are plain int64 wrappers: trivially copyable, usable in device code and in table columns.
#include <cstdint>
#include <compare>

#include "common/host_device.h"

namespace orrery {

template <class Tag>
struct Quantity {
    int64_t count = 0;
    constexpr Quantity() = default;
    ORRERY_HD constexpr explicit Quantity(int64_t c) : count(c) {}
    constexpr auto operator<=>(const Quantity&) const = default;
    ORRERY_HD constexpr Quantity operator+(Quantity o) const { return Quantity(count + o.count); }
    ORRERY_HD constexpr Quantity operator-(Quantity o) const { return Quantity(count - o.count); }
    ORRERY_HD constexpr Quantity& operator+=(Quantity o) { count += o.count; return *this; }
    ORRERY_HD constexpr Quantity& operator-=(Quantity o) { count -= o.count; return *this; }
};

struct PicosecondsTag {};
struct BytesTag {};
struct BitRateTag {};

using Picoseconds = Quantity<PicosecondsTag>;   // simulated time and durations
using Bytes = Quantity<BytesTag>;               // sizes of messages, packets, buffers
using BitsPerSecond = Quantity<BitRateTag>;     // link and NIC rates

static_assert(sizeof(Picoseconds) == 8 && sizeof(Bytes) == 8 && sizeof(BitsPerSecond) == 8);

constexpr Picoseconds picoseconds(int64_t v) { return Picoseconds(v); }
constexpr Picoseconds nanoseconds(int64_t v) { return Picoseconds(v * 1000); }
constexpr Picoseconds microseconds(int64_t v) { return Picoseconds(v * 1000000); }
constexpr Bytes bytes(int64_t v) { return Bytes(v); }
constexpr BitsPerSecond gbps(int64_t v) { return BitsPerSecond(v * 1000000000); }

}  // namespace orrery
