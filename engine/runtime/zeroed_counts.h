#pragma once
// Counters that start at zero and are mostly never written: the queue monitor's histograms, one 1 KB bucket
// per KB of a switch's buffer for every port (a k = 8 fat-tree with 32 MB buffers: 82 MB of buckets, of
// which its queues reach a few per port). Taken from calloc, whose fresh pages the kernel maps only when
// first written, so the run pays for the buckets it counts into instead of zeroing the whole array (on the
// k = 8 ring with the monitor on, a tenth of the run went to that zeroing and its page faults).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace orrery {

class ZeroedCounts {
public:
    // n counters, all zero (any earlier ones are dropped).
    void assign(size_t n) {
        void* p = n ? std::calloc(n, sizeof(uint32_t)) : nullptr;
        if (n && !p) throw std::bad_alloc();
        counts_.reset(static_cast<uint32_t*>(p));
        size_ = n;
    }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    size_t capacity() const { return size_; }
    uint32_t* data() { return counts_.get(); }
    const uint32_t* data() const { return counts_.get(); }
    uint32_t& operator[](size_t i) { return counts_[i]; }
    const uint32_t& operator[](size_t i) const { return counts_[i]; }

private:
    struct Free {
        void operator()(uint32_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], Free> counts_;
    size_t size_ = 0;
};

}  // namespace orrery
