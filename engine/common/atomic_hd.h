#pragma once
// Relaxed fetch-and-add shared by the backends' device code: CUDA's atomicAdd on a GPU, the compiler's
// builtin on CPU cores (the OpenMP device system, or a host call).
#include <cstdint>

#include "common/host_device.h"

namespace orrery {

ORRERY_HD inline uint32_t atomic_fetch_add_u32(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
    return atomicAdd(p, v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

}  // namespace orrery
