#pragma once
// ORRERY_HD marks functions shared by the CPU and CUDA backends: empty under g++, __host__ __device__ under nvcc.
#if defined(__CUDACC__)
#define ORRERY_HD __host__ __device__
#else
#define ORRERY_HD
#endif
