#pragma once
// An experiment's jobs (workload.kind "jobs") made ready to run: each job's workload checked where the
// scenario wrote it (workload.jobs[i]…), the jobs placed on the fabric, each prepared alone on its hosts (its
// task graph, its stragglers' slower compute), then laid side by side into one graph (workload/job_mix.h).
#include <memory>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "scenario/scenario.h"
#include "topology/fabric.h"
#include "workload/job_mix.h"
#include "workload/tables.h"

namespace orrery {

struct PreparedMix {
    std::vector<std::unique_ptr<LlmWorkload>> workloads;  // per job, with its custom algorithms read; the jobs point here
    std::vector<std::vector<NodeId>> hosts;               // per job, rank order
    std::vector<std::vector<std::pair<uint32_t, double>>> stragglers;  // per job: (rank, compute slowdown)
    JobMix mix;
    std::string oom_message;                              // non-empty: a job does not fit its GPUs; nothing is built
};

// Throws InputError naming the job's field; a job out of GPU memory leaves oom_message set instead.
PreparedMix prepare_job_mix(const Scenario& s, const Fabric& f, const WorkloadTables& t, Diagnostics& warnings);

}  // namespace orrery
