#pragma once
// Several training jobs on one fabric (`workload.kind: "jobs"`): each job a workload as `kind: "llm"` reads
// it, with its name, where it sits (placement), when it starts and which of its ranks straggle. Plain data,
// read by read_jobs_workload; placed by workload/placement.h, run together by workload/job_mix.h.
#include <cstdint>
#include <string>
#include <vector>

#include "common/units.h"
#include "workload/spec.h"

namespace orrery {

// packed: whole servers, the lowest free ones in fabric order; spread: whole servers dealt round robin over the
// leaves; random: whole servers drawn with `seed`; hosts: the hosts listed, in that order.
enum class PlacementPolicy { packed, spread, random, hosts };
const char* placement_policy_name(PlacementPolicy p);

struct PlacementSpec {
    PlacementPolicy policy = PlacementPolicy::packed;
    uint64_t seed = 1;                // random
    std::vector<std::string> hosts;   // hosts: names (explicit fabrics), host indices or ranges "0-31"
    uint32_t gpus = 0;                // GPUs the job holds; 0: its ranks (TP × PP × DP), required for imported jobs
};

// Ranks whose compute runs slower by a factor: listed, or `count` drawn with `seed` from the job's ranks.
struct StragglerSpec {
    std::vector<std::pair<uint32_t, double>> ranks;  // (rank, compute slowdown ≥ 1)
    uint32_t count = 0;
    double slowdown = 1;
    uint64_t seed = 1;
    bool any() const { return !ranks.empty() || count > 0; }
};

// A flow of a background job (`"kind": "flows"`): between two hosts (fabric node ids, as workload.flows names
// them), its bytes, from its start.
struct BackgroundFlow {
    uint32_t src = 0, dst = 0;
    int64_t bytes = 0;
    int64_t start_ps = 0;
    std::string where;                // "workload.jobs[2].flows[0]"
};

struct JobSpec {
    std::string name;
    // A background job: a list of flows that holds no hosts (it shares theirs with the training jobs); its
    // measure is its flows' mean completion time. Empty: a training job (`llm`).
    std::vector<BackgroundFlow> flows;
    int priority = 3;                 // a background job's switch queue (1–7)
    bool background() const { return !flows.empty(); }
    LlmWorkload llm;                  // network_mode is the experiment's (workload.network_mode)
    PlacementSpec placement;
    Picoseconds start{0};             // when the job starts, from the experiment's start
    StragglerSpec stragglers;
    std::string where;                // "workload.jobs[1]", for messages
};

struct JobsWorkload {
    std::vector<JobSpec> jobs;
    // Also run each job alone on the same hosts, for its slowdown (iteration time with the others / alone).
    bool isolation = true;
};

}  // namespace orrery
