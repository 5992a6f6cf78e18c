#pragma once
// The CUDA side of the engine, behind one small interface. In a build without nvcc, device.cpp answers
// that there is no CUDA support; with nvcc, device.cu runs on whatever GPUs are visible.
#include <cstdint>
#include <string>
#include <vector>

namespace orrery::cuda {

struct DeviceInfo {
    int index = 0;
    std::string name;
    int compute_major = 0, compute_minor = 0;
    uint64_t memory_bytes = 0;
};

bool built_with_cuda();
// Visible GPUs; empty with `why` set when there are none (no driver, no device, or a CPU-only build).
std::vector<DeviceInfo> list_devices(std::string* why);

// The reference ECMP hash of n keys (3 words each) computed on GPU `device` by the same ORRERY_HD function
// the CPU uses; false with `why` when it could not run.
bool ecmp_hashes_on_device(int device, const uint32_t* keys, const uint32_t* seeds, uint32_t* out, size_t n, std::string* why);

}  // namespace orrery::cuda
