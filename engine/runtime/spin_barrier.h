#pragma once
// A barrier for the step loop: the last thread to arrive runs the completion (the host's share of the
// step) and releases the others. Waiting threads spin briefly, then yield, so steps of a few
// microseconds do not pay for a futex sleep and wake-up, and more threads than cores still make progress.
#include <atomic>
#include <cstdint>
#include <thread>

namespace orrery {

template <class Completion>
class SpinBarrier {
public:
    SpinBarrier(int threads, Completion completion) : threads_(threads), completion_(completion) {}

    void arrive_and_wait() {
        const uint64_t generation = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
            completion_();
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(generation + 1, std::memory_order_release);
            return;
        }
        for (uint32_t spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
            if (spins > 4096) std::this_thread::yield();
        }
    }

private:
    const int threads_;
    Completion completion_;
    std::atomic<int> arrived_{0};
    std::atomic<uint64_t> generation_{0};
};

}  // namespace orrery
