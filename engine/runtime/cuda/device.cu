#include "runtime/cuda/device.h"

#include <cuda_runtime.h>

#include "topology/ecmp_hash.h"

namespace orrery::cuda {
namespace {

__global__ void ecmp_kernel(const uint32_t* keys, const uint32_t* seeds, uint32_t* out, size_t n) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = murmur3_32(keys + 3 * i, 3, seeds[i]);
}

bool ok(cudaError_t e, std::string* why, const char* what) {
    if (e == cudaSuccess) return true;
    if (why) *why = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
}

}  // namespace

bool built_with_cuda() { return true; }

std::vector<DeviceInfo> list_devices(std::string* why) {
    std::vector<DeviceInfo> out;
    int count = 0;
    if (!ok(cudaGetDeviceCount(&count), why, "no usable CUDA device")) return out;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p{};
        if (!ok(cudaGetDeviceProperties(&p, d), why, "cudaGetDeviceProperties")) continue;
        out.push_back({d, p.name, p.major, p.minor, uint64_t(p.totalGlobalMem)});
    }
    if (out.empty() && why && why->empty()) *why = "no CUDA device is visible";
    return out;
}

bool ecmp_hashes_on_device(int device, const uint32_t* keys, const uint32_t* seeds, uint32_t* out, size_t n, std::string* why) {
    if (!ok(cudaSetDevice(device), why, "cudaSetDevice")) return false;
    uint32_t *d_keys = nullptr, *d_seeds = nullptr, *d_out = nullptr;
    bool good = ok(cudaMalloc(&d_keys, 12 * n), why, "cudaMalloc") && ok(cudaMalloc(&d_seeds, 4 * n), why, "cudaMalloc") &&
                ok(cudaMalloc(&d_out, 4 * n), why, "cudaMalloc") &&
                ok(cudaMemcpy(d_keys, keys, 12 * n, cudaMemcpyHostToDevice), why, "cudaMemcpy") &&
                ok(cudaMemcpy(d_seeds, seeds, 4 * n, cudaMemcpyHostToDevice), why, "cudaMemcpy");
    if (good) {
        ecmp_kernel<<<unsigned((n + 255) / 256), 256>>>(d_keys, d_seeds, d_out, n);
        good = ok(cudaGetLastError(), why, "kernel launch") && ok(cudaMemcpy(out, d_out, 4 * n, cudaMemcpyDeviceToHost), why, "cudaMemcpy");
    }
    cudaFree(d_keys);
    cudaFree(d_seeds);
    cudaFree(d_out);
    return good;
}

}  // namespace orrery::cuda
