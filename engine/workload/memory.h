#pragma once
// GPU memory per rank of a training job (mixed-precision Adam as Megatron-LM runs it):
//   weights 2 B/param (÷DP under ZeRO-3), gradients 2 B/param (÷DP under ZeRO-2, 3),
//   optimizer 12 B/param — fp32 master copy, first and second moments (÷DP under ZeRO-1, 2, 3),
//   activations of the micro-batches in flight (Korthikanti et al. 2022 with flash attention:
//   s·b·h·(10 + 24/t) bytes per layer, s·b·h·34/t with sequence parallelism, 2·s·b·h(/t with SP) with full
//   recomputation; the last stage adds fp32 logits 4·s·b·V/t), plus a fixed framework overhead.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/spec.h"
#include "workload/tables.h"

namespace orrery {

struct RankMemory {
    uint32_t rank = 0;
    int stage = 0;
    int64_t params = 0;                     // parameters this rank holds before ZeRO sharding
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, overhead = 0;  // bytes
    double total() const { return weights + gradients + optimizer + activations + overhead; }
};

struct MemoryReport {
    std::vector<RankMemory> per_stage;      // one entry per pipeline stage (every rank of a stage needs the same)
    double available = 0;                   // bytes of HBM per GPU
    // The stage with the largest need, and whether it fits.
    const RankMemory& worst() const;
    bool fits() const { return worst().total() <= available; }
};

// Layers of pipeline stage `stage` (all its virtual chunks), in model order.
std::vector<int> stage_layers(const ModelSpec& m, const ParallelSpec& p, int stage);
// Micro-batch chunks whose activations a stage keeps at the peak of its schedule.
int in_flight_micro_batches(const ParallelSpec& p, int stage);

MemoryReport memory_per_rank(const LlmWorkload& w, const GpuSpec& gpu);

}  // namespace orrery
