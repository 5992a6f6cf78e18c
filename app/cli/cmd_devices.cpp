// `orrery-cli devices`: what this build can run on — its device backend's system, and the CUDA GPUs visible
// with their memory (or why there are none).
#include <cstdio>
#include <thread>

#include "cli/commands.h"
#include "runtime/cuda/device.h"
#include "runtime/device/device_runner.h"

namespace orrery::cli {

Runner add_devices(CLI::App& app, const PresetLibrary&) {
    (void)app;
    return []() -> int {
        const std::string system = device_backend_system();
        std::printf("CPU backend: %u CPU threads on this machine (--threads)\n", std::thread::hardware_concurrency());
        if (system.empty())
            std::printf("device backend: none in this build (configure with -DORRERY_DEVICE_SYSTEM=CUDA or OMP)\n");
        else if (system == "OpenMP")
            std::printf("device backend: Thrust's OpenMP device system, on this machine's CPU cores (--backend device --threads N)\n");
        else
            std::printf("device backend: CUDA (--backend device); built for compute capability 8.0 and 9.0, never yet run on a GPU by the project\n");
        std::string why;
        const auto gpus = cuda::list_devices(&why);
        if (gpus.empty()) std::printf("CUDA GPUs: none (%s)\n", why.c_str());
        for (const cuda::DeviceInfo& d : gpus)
            std::printf("CUDA GPU %d: %s, compute capability %d.%d, %.1f GiB\n", d.index, d.name.c_str(), d.compute_major, d.compute_minor,
                        double(d.memory_bytes) / (1ull << 30));
        return 0;
    };
}

}  // namespace orrery::cli
