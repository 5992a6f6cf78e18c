#pragma once
// An LLM training job → the task graph of its iterations over every rank, or over one lockstep lane per
// pipeline stage (Megatron-LM's program):
// per pipeline stage its 1F1B or interleaved schedule of micro-batches; per layer and micro-batch the
// forward, backward-input and backward-weight compute, TP collectives (all-reduce, or reduce-scatter +
// all-gather with sequence parallelism), MoE all-to-alls over the EP group; pipeline sends between stages
// as real transfers; DP gradient sync in buckets as the last micro-batch's backward produces them
// (all-reduce, or reduce-scatter + parameter all-gather under ZeRO); with tied embeddings and PP > 1 the
// embedding-gradient all-reduce between the first and last stage; the optimizer step.
// Not modelled: embedding lookups (memory-bound, microseconds).
#include <cstdint>
#include <string>
#include <vector>

#include "topology/fabric.h"
#include "workload/collectives.h"
#include "workload/graph.h"
#include "workload/spec.h"
#include "workload/tables.h"

namespace orrery {

struct RankCoord {
    int tp = 0, dp = 0, pp = 0;
};

// Rank ↔ coordinates by the parallel order ("tp-dp-pp": TP fastest).
RankCoord rank_coord(const ParallelSpec& p, uint32_t rank);
uint32_t rank_of(const ParallelSpec& p, RankCoord c);

// The checks a job must pass before it is built: divisibility of layers, heads, micro-batches, EP, the
// order string, and the world size against the fabric's hosts. Errors name the scenario field.
std::vector<std::string> check_llm_workload(const LlmWorkload& w, const Fabric* fabric);

// Rank r on the r-th host of the fabric (node order); servers from the fabric's NVLink domains.
Placement place_ranks(const ParallelSpec& p, const Fabric& f);

// Megatron-LM's order of one pipeline stage's work: 1F1B (virtual_stages 1) or interleaved; each item a
// forward or backward of micro-batch `micro_batch` on model chunk `chunk`.
struct PipelineItem {
    bool forward;
    int micro_batch, chunk;
};
std::vector<PipelineItem> pipeline_schedule(const ParallelSpec& p, int stage);

// lockstep: one lane per pipeline stage (TaskGraph::lockstep), each collective one task over the stage's groups.
TaskGraph build_task_graph(const LlmWorkload& w, const WorkloadTables& t, const Placement& place, bool lockstep = false);

}  // namespace orrery
