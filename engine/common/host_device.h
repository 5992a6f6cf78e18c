#pragma once
// ORRERY_HD marks functions shared by the CPU and CUDA backends: empty under g++, __host__ __device__ under nvcc.
#if defined(__CUDACC__)
#define ORRERY_HD __host__ __device__
#else
#define ORRERY_HD
#endif

// ORRERY_HOT_INLINE: inlined into every caller, for the few functions of a node's event loop whose calls cost
// more than their bodies' growth (measured on the k = 8 ring: engine/runtime/README.md).
#if defined(__CUDACC__)
#define ORRERY_HOT_INLINE  // nvcc inlines device code on its own; its __forceinline__ repeats `inline`
#else
#define ORRERY_HOT_INLINE __attribute__((always_inline))
#endif
