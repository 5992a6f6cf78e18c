#pragma once
// The packet engine's side of an LLM experiment: one driver per experiment of a batch, called by the CPU
// runner after every step. It releases an engine flow per network transfer when the executor starts it,
// feeds completions back, and times intra-server ops on a fluid NVLink network (FlowTimer without the
// network), so concurrent TP, PXN and hierarchical traffic inside a server contend as in flow mode.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "workload/flow_mode.h"
#include "workload/llm_job.h"

namespace orrery {

// Drives one experiment of a batch through RunOptions::drive.
class LlmDriver {
public:
    LlmDriver(const LlmJob& job, Batch& batch, uint32_t experiment, const Fabric& fabric, const WorkloadTables& tables);
    DriverStatus drive(int64_t now, uint32_t flows_done);
    const Executor& executor() const { return exec_; }

private:
    const LlmJob& job_;
    Batch& batch_;
    uint32_t experiment_;
    Executor exec_;
    FlowTimer nvlink_;                       // intra-server ops share NVLink ports as in flow mode
    std::vector<uint32_t> in_flight_;        // flow rows released, not yet seen finished
    uint32_t seen_done_ = 0;
    int64_t now_ = 0;
    int64_t min_release_ = INT64_MAX;
    bool begun_ = false;
};

}  // namespace orrery
