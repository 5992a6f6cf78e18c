#pragma once
// The arena of packet blocks of a batch (net/blocks.h): one reservation of address space for the blocks
// and one for their links, committed in steps as the run needs more, so a block's address never moves and
// a block is named by its index alone. Workers keep their own stocks of free blocks (WorkerStorage) and
// trade with the arena's shared free list in bunches, under a lock.
#include <cstdint>
#include <mutex>
#include <vector>

#include "net/blocks.h"
#include "net/state.h"

namespace orrery {

class BlockArena {
public:
    // Reserves room for up to `max_blocks` (address space only; nothing is committed yet) of packets of
    // 1 << packet_shift bytes (net/blocks.h: 64-byte slots wherever HPCC's INT hops are carried, else 32).
    explicit BlockArena(uint64_t max_blocks, uint32_t packet_shift = net::kFullPacketShift);
    static constexpr uint64_t kMinBlocks = 4096;  // the least an arena reserves (one commit)
    ~BlockArena();
    BlockArena(const BlockArena&) = delete;
    BlockArena& operator=(const BlockArena&) = delete;

    unsigned char* blocks() const { return blocks_; }
    uint32_t* next() const { return next_; }
    uint32_t packet_shift() const { return packet_shift_; }
    size_t block_bytes() const { return net::block_bytes(packet_shift_); }
    // A block's memory with its link.
    size_t bytes_per_block() const { return block_bytes() + sizeof(uint32_t); }
    net::BlockStore store(net::BlockCache* cache) const { return net::BlockStore{blocks_, next_, cache, packet_shift_}; }
    // Gives an empty stock a bunch of free blocks (none when the arena is exhausted); takes half of a full
    // one, or all of it.
    void refill(net::BlockCache& c);
    void spill(net::BlockCache& c, bool all = false);
    uint64_t committed_blocks() const { return committed_; }
    // Commits at least blocks [0, n) without handing them out (the host copy of a device's blocks);
    // false when the memory is not there.
    bool commit_at_least(uint64_t n);
    uint64_t max_blocks() const { return max_blocks_; }
    // The most a block can take (64-byte packets), for sizing before the packets' size is known.
    static constexpr size_t kBytesPerBlock = net::kMaxBlockBytes + sizeof(uint32_t);
    // Blocks committed past this many bytes are asked for in transparent huge pages (docs/history/runtime-tuning.md, "Huge pages"): a
    // run holding this much in flight walks more packet lines per step than the TLB covers (k = 60: 2.6 GiB),
    // while a smaller run measured slower with its whole arena marked (k = 32, 0.41 GiB: +3-4 %).
    static constexpr uint64_t kHugePagesFromBytes = uint64_t(1) << 30;

private:
    bool commit_more();  // with the lock held
    void* blocks_mapping_ = nullptr;  // the reservation; blocks_ is its first huge-page boundary
    unsigned char* blocks_ = nullptr;
    uint32_t* next_ = nullptr;
    uint64_t max_blocks_ = 0;
    uint32_t packet_shift_ = net::kFullPacketShift;
    uint64_t committed_ = 0;   // blocks [0, committed_) are backed by memory
    uint64_t fresh_ = 0;       // blocks [fresh_, committed_) were never handed out
    std::vector<uint32_t> free_;
    std::mutex lock_;
};

// What one worker thread brings to process_node: its stock of free blocks and its PFC event log.
// Returns its blocks to the arena when it ends.
struct WorkerStorage {
    explicit WorkerStorage(BlockArena& arena);
    ~WorkerStorage();
    WorkerStorage(const WorkerStorage&) = delete;
    WorkerStorage& operator=(const WorkerStorage&) = delete;
    // Makes room in the log for `events` events of the next step (host, between steps).
    void reserve_log(uint64_t events);

    BlockArena& arena;
    std::vector<uint32_t> stock;
    net::BlockCache cache;
    std::vector<net::PfcEvent> log_events;
    net::PfcLog log;
};

}  // namespace orrery
