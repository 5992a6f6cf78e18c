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
    uint64_t steps = 0;
    uint64_t passes = 0;          // launches over nodes: more than steps when nodes waited for packet blocks
    uint64_t device_bytes = 0;    // the device memory the tables and blocks took at the end
    uint64_t block_capacity = 0;  // packet blocks on the device at the end
};

struct DeviceOptions {
    uint64_t initial_blocks = 4096;   // packet blocks on the device at the start
    double growth = 2.0;              // × when the free pool runs low
    uint64_t memory_limit_bytes = 0;  // packet blocks may grow to this (0: the GPU's free memory, or the host's under OpenMP)
    DeviceReport* report = nullptr;   // filled when set
};

// The device system this build's device backend runs on: "CUDA", "OpenMP", or "" when it has none.
std::string device_backend_system();

// Throws InputError when this build has no device backend, or no device to run it on.
std::vector<ExperimentResult> run_device(Batch& batch, const RunOptions& options, const DeviceOptions& device = {});

}  // namespace orrery
