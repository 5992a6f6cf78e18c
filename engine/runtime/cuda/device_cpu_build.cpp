// Compiled instead of device.cu where nvcc was not found at configure time.
#include "runtime/cuda/device.h"

namespace orrery::cuda {

bool built_with_cuda() { return false; }

std::vector<DeviceInfo> list_devices(std::string* why) {
    if (why) *why = "this build of Orrery has no CUDA support (configured without nvcc)";
    return {};
}

bool ecmp_hashes_on_device(int, const uint32_t*, const uint32_t*, uint32_t*, size_t, std::string* why) {
    if (why) *why = "this build of Orrery has no CUDA support (configured without nvcc)";
    return false;
}

}  // namespace orrery::cuda
