#pragma once
// An LLM experiment whose workload names files: reads its custom collective algorithms (MSCCL / MSCCL++)
// into the collective spec, and — for an imported trace (SimAI workload, Chakra traces) — builds the task
// graph from the trace instead of the model. Everything else (analytic or packet run, breakdown, timeline)
// is the same as for a modelled job.
#include "common/diagnostics.h"
#include "workload/llm_job.h"

namespace orrery {

// `w` gains its custom algorithms (read from w.collectives.custom_files) and must outlive the job.
// Throws InputError naming the file at fault; warnings collects what real files get wrong.
// `hosts`: the job's hosts when it is one of several (prepare_llm_job).
LlmJob prepare_any_llm_job(LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t, Diagnostics& warnings,
                           const std::vector<NodeId>* hosts = nullptr);

struct SimaiWorkload;
// A SimAI file's parallelism as the scenario completes it: workload.import's `parallel` keys fill what a
// legacy header lacks (tp, pp, ep, micro_batches → ga, virtual_stages → vpp, and dp → all_gpus = tp·pp·dp)
// and must agree with what the header says. Returns the world size: the header's all_gpus, else the
// fabric's hosts. Ranks sit on the first `world` hosts (rank r on the r-th); a larger fabric leaves the rest
// idle (a warning says so), a smaller one is an error.
uint32_t complete_simai_parallelism(SimaiWorkload& s, const TraceImport& t, uint32_t hosts, Diagnostics& warnings);

// Reads the workload's files without building anything (for `orrery-cli validate`).
void check_workload_files(const LlmWorkload& w, Diagnostics& warnings);

}  // namespace orrery
