#include "runtime/block_arena.h"

#include "runtime/huge_page_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace orrery {
namespace {

// Committed in bunches of this many blocks: a whole number of pages for the blocks and for their links.
constexpr uint64_t kCommitBlocks = BlockArena::kMinBlocks;
constexpr uint32_t kStockCapacity = 2048;  // blocks a worker keeps at most
constexpr uint32_t kStockBunch = 512;      // blocks moved between a stock and the arena at once

void* reserve(uint64_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error("cannot reserve " + std::to_string(bytes >> 20) + " MiB of address space for packet storage: " + std::strerror(errno));
    return p;
}

}  // namespace

BlockArena::BlockArena(uint64_t max_blocks, uint32_t packet_shift) : packet_shift_(packet_shift) {
    if (packet_shift != net::kFullPacketShift && packet_shift != net::kCompactPacketShift)
        throw std::logic_error("packet slots are 32 or 64 bytes, not " + std::to_string(1u << packet_shift));
    max_blocks_ = std::max<uint64_t>(kCommitBlocks, std::min<uint64_t>(max_blocks, uint64_t(net::kNoBlock) - kCommitBlocks) / kCommitBlocks * kCommitBlocks);
    // The blocks start on a huge-page boundary, so that every commit (4,096 blocks or a multiple: 2 or 4 MiB) is whole huge pages.
    blocks_mapping_ = reserve(max_blocks_ * block_bytes() + kHugePageBytes);
    blocks_ = reinterpret_cast<unsigned char*>(round_up_to_huge_page(reinterpret_cast<uintptr_t>(blocks_mapping_)));
    next_ = static_cast<uint32_t*>(reserve(max_blocks_ * sizeof(uint32_t)));
}

BlockArena::~BlockArena() {
    munmap(blocks_mapping_, max_blocks_ * block_bytes() + kHugePageBytes);
    munmap(next_, max_blocks_ * sizeof(uint32_t));
}

bool BlockArena::commit_more() {
    if (committed_ >= max_blocks_) return false;
    // Grow by an eighth of what is committed, so a big run makes few calls and a small one stays small.
    const uint64_t add = std::min(max_blocks_ - committed_, std::max(kCommitBlocks, committed_ / 8 / kCommitBlocks * kCommitBlocks));
    if (mprotect(reinterpret_cast<char*>(blocks_) + committed_ * block_bytes(), add * block_bytes(), PROT_READ | PROT_WRITE) != 0 ||
        mprotect(reinterpret_cast<char*>(next_) + committed_ * sizeof(uint32_t), add * sizeof(uint32_t), PROT_READ | PROT_WRITE) != 0)
        return false;
    if ((committed_ + add) * block_bytes() > kHugePagesFromBytes)  // advice only: the blocks are the same without it
        madvise(reinterpret_cast<char*>(blocks_) + committed_ * block_bytes(), add * block_bytes(), MADV_HUGEPAGE);
    committed_ += add;
    return true;
}

bool BlockArena::commit_at_least(uint64_t n) {
    std::lock_guard<std::mutex> hold(lock_);
    while (committed_ < n)
        if (!commit_more()) return false;
    return true;
}

void BlockArena::refill(net::BlockCache& c) {
    std::lock_guard<std::mutex> hold(lock_);
    while (c.count < kStockBunch && c.count < c.capacity) {
        if (!free_.empty()) {
            c.free[c.count++] = free_.back();
            free_.pop_back();
        } else if (fresh_ < committed_ || commit_more()) {
            c.free[c.count++] = uint32_t(fresh_++);
        } else {
            return;  // exhausted: the caller flags the overflow
        }
    }
}

void BlockArena::spill(net::BlockCache& c, bool all) {
    std::lock_guard<std::mutex> hold(lock_);
    const uint32_t keep = all ? 0 : c.count / 2;
    free_.insert(free_.end(), c.free + keep, c.free + c.count);
    c.count = keep;
}

WorkerStorage::WorkerStorage(BlockArena& a) : arena(a), stock(kStockCapacity) {
    cache.free = stock.data();
    cache.capacity = kStockCapacity;
    cache.pool = &arena;
    reserve_log(64);
}

WorkerStorage::~WorkerStorage() { arena.spill(cache, true); }

void WorkerStorage::reserve_log(uint64_t events) {
    if (log_events.size() < events) {
        log_events.resize(std::max<uint64_t>(events, 2 * log_events.size()));
        log.events = log_events.data();
        log.capacity = uint32_t(log_events.size());
    }
}

}  // namespace orrery

namespace orrery::net {
void block_cache_refill(BlockCache& c) { static_cast<BlockArena*>(c.pool)->refill(c); }
void block_cache_spill(BlockCache& c) { static_cast<BlockArena*>(c.pool)->spill(c); }
}  // namespace orrery::net
