#pragma once
// The batch's big tables in transparent huge pages. A large fabric's step touches its per-port and per-node
// rows in an order no cache holds (k = 60: 0.37 GiB of tables and 2.5 GiB of packet blocks), so with 4 KiB
// pages nearly every such access also misses the TLB. Debian's kernels give huge pages only to memory
// that asks for them (transparent_hugepage=madvise), so a table of at least 2 MiB is taken aligned to 2 MiB
// and marked MADV_HUGEPAGE before anything touches it; smaller ones come from the ordinary heap. Where the
// kernel has huge pages off, the mark is ignored and nothing changes. Results never depend on it.
// bench_scale --k 60 --threads 2, alternating in one session: 57.1-58.8 s with 4 KiB pages, 53.8-54.6 s with
// these tables; k <= 32 the same within noise. The packet arena is marked only past its first GiB
// (block_arena.h, kHugePagesFromBytes): marking all of it made k = 32 3-4 % slower (docs/history/runtime-tuning.md).
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
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

// Storage straight from fresh anonymous pages (mmap), which read as zero and cost nothing until written, and
// whose rows grown without a value (`resize`) are left as they are: nothing writes them. For the per-CC flow
// state (HPCC's 256 bytes a flow, DCQCN's, TIMELY's and DCTCP's 64), where a batch has a row in every table for
// every flow but a flow only ever touches its own CC's: the kernel zeroing the other three tables' pages was 5 %
// of a MoE 8x13B skip-on run (256,000 flows) and 1.2 GB resident in MoE 32x22B (3 M flows). A row grown without
// a value holds zero bytes, not T's defaults: only rows never read may be grown so (batch.cpp: compile_batch).
template <class T>
struct UntouchedPagesAllocator {
    using value_type = T;
    UntouchedPagesAllocator() = default;
    template <class U>
    UntouchedPagesAllocator(const UntouchedPagesAllocator<U>&) {}

    static size_t mapped_bytes(size_t n) {
        const size_t bytes = std::max<size_t>(1, n * sizeof(T));
        return bytes < kHugePageBytes ? (bytes + 4095) / 4096 * 4096 : round_up_to_huge_page(bytes);
    }
    T* allocate(size_t n) {
        if (n > size_t(-1) / sizeof(T) / 2) throw std::bad_array_new_length();
        const size_t bytes = mapped_bytes(n);
        if (bytes < kHugePageBytes) {
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            return static_cast<T*>(p);
        }
        // Mapped a huge page longer, then trimmed to a 2 MiB boundary at both ends, so that it can be marked.
        void* raw = mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) throw std::bad_alloc();
        char* begin = reinterpret_cast<char*>(round_up_to_huge_page(reinterpret_cast<size_t>(raw)));
        char* end = begin + bytes;
        if (begin != raw) munmap(raw, size_t(begin - static_cast<char*>(raw)));
        if (end != static_cast<char*>(raw) + bytes + kHugePageBytes) munmap(end, size_t(static_cast<char*>(raw) + bytes + kHugePageBytes - end));
        madvise(begin, bytes, MADV_HUGEPAGE);  // advice only, as for Table
        return reinterpret_cast<T*>(begin);
    }
    void deallocate(T* p, size_t n) { munmap(p, mapped_bytes(n)); }
    // Growing without a value leaves the row untouched (zero bytes); every other construction is the usual one.
    template <class U>
    void construct(U*) noexcept {
        static_assert(std::is_trivially_destructible_v<U> && std::is_trivially_copyable_v<U>, "rows left as zero bytes must be plain data");
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <class U>
    bool operator==(const UntouchedPagesAllocator<U>&) const { return true; }
};

// A column whose rows other than a flow's own CC's are never written (see UntouchedPagesAllocator).
template <class T>
using CcTable = std::vector<T, UntouchedPagesAllocator<T>>;

}  // namespace orrery
