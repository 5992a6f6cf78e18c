#pragma once
// A packet in flight or in a queue, copied by value through link rings and switch queues.
// Wire sizes follow reference/ns3-hpcc README §5: data = payload + 48 B (+42 B INT for HPCC, +8 B
// timestamp for TIMELY); ACK/NACK = 60 B (88 B with HPCC INT); PFC = 43 B (14 L2 + 20 IPv4 + 9 pause).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/host_device.h"

namespace orrery::net {

enum PacketKind : uint8_t { kData = 0, kAck = 1, kNack = 2, kPfc = 3 };

enum PacketFlags : uint8_t {
    kFlagCe = 1,     // ECN congestion experienced (set by a switch at dequeue)
    kFlagCnp = 2,    // on an ACK: the data packet it acknowledges was CE-marked
    kFlagPause = 4,  // on a PFC frame: pause (else resume)
};

inline constexpr int kMaxIntHops = 5;
inline constexpr uint32_t kDataHeaderBytes = 48;
inline constexpr uint32_t kIntBytes = 42;        // 5 hops × 8 B + 2 B hop count
inline constexpr uint32_t kTimelyTsBytes = 8;
inline constexpr uint32_t kAckBytes = 60;
inline constexpr uint32_t kHpccAckBytes = 88;
inline constexpr uint32_t kPfcBytes = 43;

// One INT hop record exactly as the reference packs it (IntHop): 64 bits of
// lineRate:3 | time:24 | bytes:20 | qlen:17, with bytes in units of 128·multi B and qlen in 80·multi B.
struct IntHop {
    uint64_t bits;
    static constexpr int kTimeWidth = 24, kBytesWidth = 20, kQlenWidth = 17;
    ORRERY_HD uint32_t line_rate_code() const { return uint32_t(bits & 7u); }
    ORRERY_HD uint64_t time() const { return (bits >> 3) & ((1ull << kTimeWidth) - 1); }
    ORRERY_HD uint64_t bytes_field() const { return (bits >> 27) & ((1ull << kBytesWidth) - 1); }
    ORRERY_HD uint64_t qlen_field() const { return (bits >> 47) & ((1ull << kQlenWidth) - 1); }
    // The timestamp moved by `dt_ns` (a skip), wrapping as the field does.
    ORRERY_HD void shift_time(uint64_t dt_ns) {
        constexpr uint64_t mask = (1ull << kTimeWidth) - 1;
        bits = (bits & ~(mask << 3)) | (((time() + dt_ns) & mask) << 3);
    }
};

// One cache line, of which a batch without HPCC stores only the first half (net/blocks.h: the INT hops are
// its second half; TIMELY's timestamp is in the first). Slots are 32- or 64-byte aligned, so writing or
// reading a packet touches one line. Trivially constructible, so block memory needs no initialization (a slot is always written before it is
// read); create packets with `Packet p{}`, which zeroes every field. What a field can be computed from is
// not stored: a data packet's payload is its wire size less the headers of its experiment's CC
// (packet_payload, nic.h), and its serialization time on the last link is recomputed by the receiver from
// the wire size and the sender's rate (refresh_arrival, node.h).
struct alignas(32) Packet {
    int64_t arrival;        // ps: when the last bit reaches the receiving port
    uint32_t flow;          // flow row (data, ACK, NACK); unused for PFC
    uint32_t seq;           // data: offset of the first payload byte; ACK/NACK: next expected byte; PFC: priority
    uint16_t wire;          // bytes serialized on the link and counted in buffers
    uint16_t in_port;       // at a switch: the local ingress port (for buffer accounting)
    uint8_t hop;            // index of the next egress on the flow's path (incremented by each switch)
    uint8_t nhop;           // INT hop count (HPCC), may exceed kMaxIntHops like the reference's
    uint8_t kind : 2;       // PacketKind
    uint8_t flags : 3;      // PacketFlags
    uint8_t pg : 3;         // priority class: switch queue and PFC class
    uint8_t reserved;
    union {
        IntHop hops[kMaxIntHops];  // HPCC
        uint64_t sent_ns;          // TIMELY: NIC dequeue time in ns
    };
};
static_assert(sizeof(Packet) == 64, "Packet is one cache line: keep its layout fixed");
static_assert(offsetof(Packet, sent_ns) + sizeof(uint64_t) == 32, "a compact slot (32 bytes) holds all but the INT hops");
static_assert(std::is_trivially_default_constructible_v<Packet>, "block memory is left uninitialized");

}  // namespace orrery::net
