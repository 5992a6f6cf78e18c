#pragma once
// The chunks of a step's nodes, handed to the threads that step them. Each thread owns the same share of
// the chunks every step, so its nodes' state stays in its core's cache from one step to the next (taking
// chunks from one shared counter sent each node to whichever thread came first: measured on the k = 8
// ring, two threads then spent 22 % more CPU time in total than one, with almost no time waiting). A
// thread that finishes its share takes chunks from the back of the others', which balances uneven steps
// while leaving the owners their front chunks. The shares may differ in size (cpu_runner cuts them where
// plan_partition cuts the fabric).
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace orrery {

class ChunkShares {
public:
    static constexpr uint32_t kNone = UINT32_MAX;

    // Thread t owns chunks [first[t], first[t + 1]); `first` has threads + 1 entries, from 0 to the chunk count.
    ChunkShares(int threads, std::vector<uint32_t> first) : threads_(threads), first_(std::move(first)), shares_(new Share[size_t(threads)]) { reset(); }
    // Equal shares of `chunks`.
    ChunkShares(int threads, uint32_t chunks) : ChunkShares(threads, equal_shares(threads, chunks)) {}

    // Every share back to its full range. Call it while no thread takes; a barrier publishes it.
    void reset() {
        for (int t = 0; t < threads_; ++t) shares_[t].range.store(pack(first_[size_t(t)], first_[size_t(t) + 1]), std::memory_order_relaxed);
    }

    // The next chunk for thread t: the front of its own share, then the back of the others' in turn;
    // kNone when every chunk is taken.
    uint32_t take(int t) {
        uint64_t r = shares_[t].range.load(std::memory_order_relaxed);
        while (begin_of(r) < end_of(r))
            if (shares_[t].range.compare_exchange_weak(r, pack(begin_of(r) + 1, end_of(r)), std::memory_order_relaxed)) return begin_of(r);
        for (int k = 1; k < threads_; ++k) {
            Share& s = shares_[(t + k) % threads_];
            r = s.range.load(std::memory_order_relaxed);
            while (begin_of(r) < end_of(r))
                if (s.range.compare_exchange_weak(r, pack(begin_of(r), end_of(r) - 1), std::memory_order_relaxed)) return end_of(r) - 1;
        }
        return kNone;
    }

private:
    struct alignas(64) Share {
        std::atomic<uint64_t> range{0};  // [begin, end) of the chunks not yet taken: begin low, end high
    };
    static uint64_t pack(uint32_t begin, uint32_t end) { return uint64_t(end) << 32 | begin; }
    static uint32_t begin_of(uint64_t r) { return uint32_t(r); }
    static uint32_t end_of(uint64_t r) { return uint32_t(r >> 32); }
    static std::vector<uint32_t> equal_shares(int threads, uint32_t chunks) {
        std::vector<uint32_t> first;
        for (int t = 0; t <= threads; ++t) first.push_back(uint32_t(uint64_t(chunks) * uint32_t(t) / uint32_t(threads)));
        return first;
    }

    const int threads_;
    const std::vector<uint32_t> first_;
    std::unique_ptr<Share[]> shares_;
};

}  // namespace orrery
