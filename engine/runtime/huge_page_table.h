#pragma once
// The batch's big tables in transparent huge pages. A large fabric's step touches its per-port and per-node
// rows in an order no cache holds (k = 60: 0.37 GiB of tables and 2.5 GiB of packet blocks), so with 4 KiB
// pages nearly every such access also misses the TLB. Debian's kernels give huge pages only to memory
// that asks for them (transparent_hugepage=madvise), so a table of at least 2 MiB is taken aligned to 2 MiB
// and marked MADV_HUGEPAGE before anything touches it; smaller ones come from the ordinary heap. Where the
// kernel has huge pages off, the mark is ignored and nothing changes. Results never depend on it.
// bench_scale --k 60 --threads 2, alternating in one session: 57.1-58.8 s with 4 KiB pages, 53.8-54.6 s with
// these tables; k <= 32 the same within noise. The packet arena is marked only past its first GiB
// (block_arena.h, kHugePagesFromBytes): marking all of it made k = 32 3-4 % slower (engine/runtime/README.md).
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace orrery {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// `bytes` rounded up to a whole number of huge pages (an address: up to the next huge-page boundary).
inline constexpr size_t round_up_to_huge_page(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}

    T* allocate(size_t n) {
        if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        const size_t bytes = n * sizeof(T);
        if (bytes < kHugePageBytes) return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
        const size_t rounded = round_up_to_huge_page(bytes);
        void* p = std::aligned_alloc(kHugePageBytes, rounded);
        if (!p) throw std::bad_alloc();
        madvise(p, rounded, MADV_HUGEPAGE);  // advice only: refused or ignored, the table is the same
        return static_cast<T*>(p);
    }
    void deallocate(T* p, size_t n) {
        if (n * sizeof(T) < kHugePageBytes) ::operator delete(p, std::align_val_t(alignof(T)));
        else std::free(p);
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const { return true; }
};

// A column of the batch: a std::vector whose storage, when large, is in huge pages.
template <class T>
using Table = std::vector<T, HugePageAllocator<T>>;

}  // namespace orrery
