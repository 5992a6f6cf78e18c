#pragma once
// ORRERY_HD marks functions shared by the CPU and CUDA backends: empty under g++, __host__ __device__ under nvcc.
#if defined(__CUDACC__)
#define ORRERY_HD __host__ __device__
#else
#define ORRERY_HD
#endif

// ORRERY_HOT_INLINE: inlined into every caller, for the few functions of a node's event loop whose calls cost
// more than their bodies' growth (measured on the k = 8 ring: docs/history/runtime-scale-and-mpi.md).
#if defined(__CUDACC__)
#define ORRERY_HOT_INLINE  // nvcc inlines device code on its own; its __forceinline__ repeats `inline`
#else
#define ORRERY_HOT_INLINE __attribute__((always_inline))
#endif

// ORRERY_COLD_CALL: kept out of its callers, for the branches of an event loop that only some experiments take
// (another load-balancing mode, out-of-order delivery), so that they do not cost the common path its registers.
#if defined(__CUDACC__)
#define ORRERY_COLD_CALL
#else
#define ORRERY_COLD_CALL __attribute__((noinline, cold))
#endif

// A hint that the line at `p` is read (or written) soon, for packet lines a large fabric has left in memory
// (docs/history/runtime-scale-and-mpi.md). Nothing in device code: a GPU hides such latency with other warps.
ORRERY_HD inline void prefetch_line(const void* p) {
#if !defined(__CUDA_ARCH__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}
ORRERY_HD inline void prefetch_line_for_write(void* p) {
#if !defined(__CUDA_ARCH__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
}

// Sets a flag byte that several threads may set at once, all to 1, while no thread reads or clears it (a
// barrier separates the setting from the reading): a relaxed atomic store on the CPU, a plain store on a GPU.
ORRERY_HD inline void set_flag(unsigned char& flag) {
#if defined(__CUDA_ARCH__)
    *static_cast<volatile unsigned char*>(&flag) = 1;
#else
    __atomic_store_n(&flag, static_cast<unsigned char>(1), __ATOMIC_RELAXED);
#endif
}
