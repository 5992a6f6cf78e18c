#pragma once
// Packet storage: blocks of kBlockPackets packets taken from one arena per batch (runtime/block_arena.h)
// and chained by index into FIFOs — a port's receive ring, a switch port's queue of one priority, a NIC's
// ACK queue. A FIFO holds blocks only while it holds packets, so memory follows what is in flight, not the
// worst case a step could bring, and no pass before a step has to size anything.
//
// Blocks come from the worker's own stock (BlockCache) and go back to the stock of whoever frees them:
// last freed, first reused, so the block a step writes next is usually still in that core's cache. On the
// CPU backend an empty stock refills from the shared pool (runtime/block_arena.cpp, under a lock); a block
// that cannot be had is flagged in the node's overflow and stops the run with a message, never a dropped packet.
// On the device backend every node running at once has a small stock of its own that refills from a
// SharedBlockPool by atomic increments; a node whose stock cannot cover its next event stops before it
// (block_stock_ready) and resumes in another pass of the same step once the host has refilled the pool.
#include <cstdint>
#include <cstring>

#include "common/atomic_hd.h"
#include "common/host_device.h"
#include "net/packet.h"

namespace orrery::net {

inline constexpr uint32_t kBlockPackets = 16;
inline constexpr uint32_t kNoBlock = 0xffffffffu;

// A packet slot is 64 bytes (one line) where an experiment of the batch needs HPCC's INT hops, else 32: a
// packet's header and TIMELY's timestamp fit in half a line (packet.h), so a batch without HPCC moves half
// the bytes through rings and queues: bench_scale k = 60 on two threads peaks at 1.68 GB instead of 2.91, and
// runs up to 8 % faster (docs/history/runtime-tuning.md, "Half-line packets").
inline constexpr uint32_t kFullPacketShift = 6, kCompactPacketShift = 5;
ORRERY_HD constexpr size_t block_bytes(uint32_t packet_shift) { return size_t(kBlockPackets) << packet_shift; }
inline constexpr size_t kMaxBlockBytes = block_bytes(kFullPacketShift);

// The device backend's free blocks for one pass of a step, shared by the nodes running at once: taken
// from free[taken ..) by atomic increments, given back by atomic appends to returned[], which the host
// makes free again between passes (so a block given back is never reused within the pass).
struct SharedBlockPool {
    const uint32_t* free = nullptr;
    uint32_t size = 0;
    uint32_t taken = 0;            // atomic; may run past size, when nothing is left
    uint32_t* returned = nullptr;  // room for every block of the arena
    uint32_t returned_count = 0;   // atomic
};

// A worker's stock of free blocks; one per thread that runs process_node (CPU), one per node (device).
struct BlockCache {
    uint32_t* free = nullptr;      // free[0 .. count): block indices
    uint32_t count = 0;
    uint32_t capacity = 0;
    void* pool = nullptr;          // the shared pool it refills from and spills to (host)
    SharedBlockPool* shared = nullptr;  // instead, on the device backend
};

// The most blocks one event of process_node can take: a switch arrival queues the packet and may queue a
// pause frame, and each may start a transmission that itself sends a resume frame (switch.h).
inline constexpr uint32_t kTakesPerEvent = 8;

// Device stocks: take up to half the capacity from the pool; give back `n` blocks from the top.
ORRERY_HD inline void shared_refill(BlockCache& c) {
    SharedBlockPool& p = *c.shared;
    const uint32_t want = c.capacity / 2;
    const uint32_t start = atomic_fetch_add_u32(&p.taken, want);
    for (uint32_t i = start; i < p.size && i < start + want; ++i) c.free[c.count++] = p.free[i];
}

ORRERY_HD inline void shared_spill(BlockCache& c, uint32_t n) {
    SharedBlockPool& p = *c.shared;
    const uint32_t at = atomic_fetch_add_u32(&p.returned_count, n);
    for (uint32_t i = 0; i < n; ++i) p.returned[at + i] = c.free[c.count - n + i];
    c.count -= n;
}

// Device stocks, before each event: whether the stock covers the most an event can take (refilling it if
// it does not). A node that finds it does not stops before the event, its state whole.
ORRERY_HD inline bool block_stock_ready(BlockCache& c) {
    if (c.count < kTakesPerEvent) shared_refill(c);
    return c.count >= kTakesPerEvent;
}

// What the systems see of the storage: the batch's blocks and their links, and the stock of the worker
// running them. `held` arguments below are the node's count of blocks in use (NodeOutput::blocks_held).
struct BlockStore {
    unsigned char* packets = nullptr;   // block b's slot i at (b·kBlockPackets + i) << packet_shift
    uint32_t* next = nullptr;
    BlockCache* cache = nullptr;
    uint32_t packet_shift = kFullPacketShift;
};

// The slot of position `at` (a FIFO's or ring's counter: modulo kBlockPackets) of `block`. In a compact store
// the Packet there is only its first 32 bytes: read it whole with load_packet, write it with store_packet.
ORRERY_HD inline Packet& packet_at(const BlockStore& s, uint32_t block, uint64_t at) {
    return *reinterpret_cast<Packet*>(s.packets + ((uint64_t(block) * kBlockPackets + at % kBlockPackets) << s.packet_shift));
}

// The slot after `slot` in its block (the caller knows it is not the block's last).
ORRERY_HD inline const Packet& next_slot(const BlockStore& s, const Packet& slot) {
    return *reinterpret_cast<const Packet*>(reinterpret_cast<const unsigned char*>(&slot) + (size_t(1) << s.packet_shift));
}
ORRERY_HD inline Packet& next_slot(const BlockStore& s, Packet& slot) {
    return *reinterpret_cast<Packet*>(reinterpret_cast<unsigned char*>(&slot) + (size_t(1) << s.packet_shift));
}

ORRERY_HD inline bool compact_store(const BlockStore& s) { return s.packet_shift == kCompactPacketShift; }

ORRERY_HD inline void store_packet(const BlockStore& s, Packet& slot, const Packet& p) {
    if (compact_store(s)) memcpy(&slot, &p, size_t(1) << kCompactPacketShift);
    else slot = p;
}

// A copy of a slot's packet; from a compact slot its INT hops are zero (no CC of such a batch reads them).
ORRERY_HD inline Packet load_packet(const BlockStore& s, const Packet& slot) {
    if (!compact_store(s)) return slot;
    Packet p{};
    memcpy(&p, &slot, size_t(1) << kCompactPacketShift);
    return p;
}

// Host side of the CPU backend (runtime/block_arena.cpp): refill an empty stock, spill half of a full one.
// Both return with count strictly between 0 and capacity, or, when the arena is exhausted, count 0.
void block_cache_refill(BlockCache& c);
void block_cache_spill(BlockCache& c);

ORRERY_HD inline uint32_t block_take(BlockCache& c, int64_t& held) {
    if (c.count == 0) {
        if (c.shared) shared_refill(c);
#if !defined(__CUDA_ARCH__)
        else block_cache_refill(c);
#endif
        if (c.count == 0) return kNoBlock;
    }
    ++held;
    return c.free[--c.count];
}

ORRERY_HD inline void block_give(BlockCache& c, int64_t& held, uint32_t block) {
    if (c.count == c.capacity) {
        if (c.shared) shared_spill(c, c.capacity / 2);
#if !defined(__CUDA_ARCH__)
        else block_cache_spill(c);
#endif
    }
    --held;
    c.free[c.count++] = block;
}

// A FIFO owned by one node (both ends on the same thread): a switch port's queue of one priority, a NIC's
// ACK queue. Empty means no block held and counters at 0.
struct BlockFifo {
    uint32_t head_block = kNoBlock, tail_block = kNoBlock;
    uint32_t head = 0, tail = 0;   // packets read and written since it was last empty
};

ORRERY_HD inline bool fifo_empty(const BlockFifo& f) { return f.head == f.tail; }

ORRERY_HD inline Packet& fifo_front(const BlockStore& s, const BlockFifo& f) { return packet_at(s, f.head_block, f.head); }

// False when no block could be had (the packet is not stored; the caller flags the overflow).
ORRERY_HD inline bool fifo_push(const BlockStore& s, int64_t& held, BlockFifo& f, const Packet& p) {
    const uint32_t slot = f.tail % kBlockPackets;
    if (slot == 0) {
        const uint32_t b = block_take(*s.cache, held);
        if (b == kNoBlock) return false;
        if (f.tail_block == kNoBlock) f.head_block = b;
        else s.next[f.tail_block] = b;
        f.tail_block = b;
    }
    Packet& to = packet_at(s, f.tail_block, slot);
    store_packet(s, to, p);
    ++f.tail;
    // The tail block may have been taken up to 15 pushes ago; in a deep queue its next line is cold by now.
    if (slot + 1 < kBlockPackets) prefetch_line_for_write(&next_slot(s, to));
    return true;
}

ORRERY_HD inline Packet fifo_pop(const BlockStore& s, int64_t& held, BlockFifo& f) {
    const Packet& front = fifo_front(s, f);
    const Packet p = load_packet(s, front);
    ++f.head;
    if (f.head == f.tail) {
        block_give(*s.cache, held, f.head_block);
        f = BlockFifo{};
    } else if (f.head % kBlockPackets == 0) {
        const uint32_t done = f.head_block;
        f.head_block = s.next[done];
        block_give(*s.cache, held, done);
        prefetch_line(&fifo_front(s, f));
    } else {
        // The next packet is popped when this one's transmission ends, after the node's other events; in a deep
        // queue it was written steps ago and is in memory (docs/history/runtime-scale-and-mpi.md).
        prefetch_line(&next_slot(s, front));
    }
    return p;
}

// Packets [from, to) of a chain of blocks, `block` holding packet `from`, for host hooks that shift or
// inspect what is queued or in flight (rings and FIFOs alike: positions are counters modulo kBlockPackets).
// A visit may change a packet's header fields in place (not, in a compact store, its INT hops).
template <class Visit>
void chain_for_each(const BlockStore& s, uint32_t block, uint64_t from, uint64_t to, Visit visit) {
    for (uint64_t i = from; i < to; ++i) {
        visit(packet_at(s, block, i));
        if ((i + 1) % kBlockPackets == 0 && i + 1 < to) block = s.next[block];
    }
}

template <class Visit>
void fifo_for_each(const BlockStore& s, const BlockFifo& f, Visit visit) {
    chain_for_each(s, f.head_block, f.head, f.tail, visit);
}

// Gives back the blocks of a chain from `first` to `last` (kNoBlock: none), for an experiment that ended.
inline void chain_release(const BlockStore& s, int64_t& held, uint32_t first, uint32_t last) {
    for (uint32_t b = first; b != kNoBlock;) {
        const uint32_t following = b == last ? kNoBlock : s.next[b];
        block_give(*s.cache, held, b);
        b = following;
    }
}

inline void fifo_release(const BlockStore& s, int64_t& held, BlockFifo& f) {
    chain_release(s, held, f.head_block, f.tail_block);
    f = BlockFifo{};
}

}  // namespace orrery::net
