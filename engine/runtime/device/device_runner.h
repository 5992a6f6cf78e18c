#pragma once
// The device backend: the same steps as run_cpu, with the batch's tables on a device (device_tables.h)
// and process_node launched over every node of every unfinished experiment at once. The host step is the
// CPU backend's (runtime/stepper.h); it sees per-experiment summaries each step, and an experiment's rows
// only when a hook (driver, skipper, sampler, queue monitor, completion) reads or writes them.
// Results are byte-identical to run_cpu's (tests/engine/test_device.cpp, under the OpenMP device system).
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"

namespace orrery {

// What a device run did (for tests and benchmarks).
struct DeviceReport {
    uint64_t groups = 0;          // runs of experiments that each fit one device, run one after another per device
    uint64_t steps = 0;
    uint64_t passes = 0;          // launches over nodes: more than steps when nodes waited for packet blocks
    uint64_t device_bytes = 0;    // the most device memory one group's tables and blocks took at its end
    uint64_t block_capacity = 0;  // packet blocks on the device at the end
};

struct DeviceOptions {
    uint64_t initial_blocks = 4096;   // packet blocks on the device at the start
    double growth = 2.0;              // × when the free pool runs low
    uint64_t memory_limit_bytes = 0;  // what one device may hold (0: the GPU's free memory, or the host's under OpenMP)
    int devices = 0;                  // devices to divide the experiments over (CUDA: GPUs 0 … devices − 1); 0: every visible GPU (one under OpenMP)
    DeviceReport* report = nullptr;   // filled when set
};

// A run of experiments [experiment_begin, experiment_end) that fits one device: about `bytes` before packets.
struct DeviceGroup {
    uint32_t experiment_begin = 0, experiment_end = 0;
    uint64_t bytes = 0;
    int device = 0;
};

// Experiments packed in order into groups of at most `device_bytes` each (their tables plus a start of packet
// blocks), dealt to `devices` in turn. Throws InputError naming an experiment that alone needs more.
std::vector<DeviceGroup> plan_device_groups(const Batch& batch, uint64_t device_bytes, int devices);

// What one device holds (the first GPU's free memory; the host's under OpenMP), and how many there are.
uint64_t device_memory_bytes();
int device_count();

// What run_device will do: its groups, what each device may hold, and how many devices. Under OpenMP a
// sweep on several threads becomes one group per thread unless `devices` is given.
struct DevicePlan {
    std::vector<DeviceGroup> groups;
    uint64_t device_bytes = 0;  // what the groups were packed into: a group's tables and first blocks fit it
    int devices = 1;
    uint64_t group_bytes = 0;   // what a group's packet blocks may grow into, at least device_bytes
};
DevicePlan plan_device_run(const Batch& batch, int threads, const DeviceOptions& device);

// The device system this build's device backend runs on: "CUDA", "OpenMP", or "" when it has none.
std::string device_backend_system();

// Throws InputError when this build has no device backend, or no device to run it on.
std::vector<ExperimentResult> run_device(Batch& batch, const RunOptions& options, const DeviceOptions& device = {});

}  // namespace orrery
