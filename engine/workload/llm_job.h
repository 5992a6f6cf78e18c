#pragma once
// One LLM experiment end to end: the job's placement, task graph and memory check (prepare_llm_job), its
// run on the analytic network (run_llm_analytic; the flow level and the packet engine: flow_mode.h,
// llm_driver.h), and what
// users ask for afterwards (summarize_llm): the iteration time, per rank the time in compute, exposed
// communication per group and pipeline bubble, and the timeline of compute and communication spans.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "scenario/scenario.h"
#include "topology/fabric.h"
#include "topology/routing.h"
#include "workload/build.h"
#include "workload/execute.h"
#include "workload/memory.h"

namespace orrery {

struct LlmJob {
    const LlmWorkload* workload = nullptr;
    Placement place;
    TaskGraph graph;
    MemoryReport memory;
    std::string oom_message;                 // non-empty: the job does not fit, is not run, and has no graph
    std::vector<uint32_t> transfers;         // ops that cross the network, in op order (flow i of the experiment)
    std::vector<uint32_t> flow_of_op;        // per op: its flow index, or UINT32_MAX
    std::vector<uint16_t> source_port;       // per flow: 10000 + n for the n-th flow of its host pair (the reference's)
    // Several jobs in one graph (workload/job_mix.h): per lane, the workload of the job it belongs to (its
    // chunk size, switch priority); empty: `workload` for every lane.
    std::vector<const LlmWorkload*> lane_workload;
    const LlmWorkload& workload_of(uint32_t lane) const { return lane_workload.empty() ? *workload : *lane_workload[lane]; }
};

// Every transfer's flow goes to this port (FlowSpec's default, the reference's).
inline constexpr uint16_t kLlmDestinationPort = 100;

// The workload's GPU from data/gpus.json; throws InputError naming workload.gpu when it is unknown.
const GpuSpec& workload_gpu(const LlmWorkload& w, const WorkloadTables& t);

// Whether a job of `ranks` ranks is built in lockstep lanes (Granularity): "stage", or "auto" with
// kLockstepFrom ranks or more, off the packet level and without PXN.
bool lockstep_lanes(const LlmWorkload& w, uint32_t ranks);
// Throws InputError at workload.parallel.micro_batches when the job's task graph, estimated from two small
// builds, would not fit in this machine's memory (common/memory_budget.h). prepare_llm_job calls it.
void refuse_graph_beyond_memory(const LlmWorkload& w, const WorkloadTables& t, const Placement& place, bool lockstep);
// The warning an automatic choice of lanes gives (where: workload.granularity).
std::string lockstep_warning(uint32_t ranks);

// Throws InputError when the job is inconsistent (check_llm_workload) or names an unknown GPU.
// `hosts`: the job's hosts, rank r on hosts[r] (a job of several, workload/placement.h); null: rank r on the
// fabric's r-th host, the world the fabric's hosts.
LlmJob prepare_llm_job(const LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t, const std::vector<NodeId>* hosts = nullptr);

// Fills job.transfers, job.flow_of_op and job.source_port from job.graph (prepare_llm_job does; for hand-built graphs).
void index_transfers(LlmJob& job);

// The network flows of the job, not yet started (start = kNever): one per transfer, in `transfers` order.
// Source ports as the reference assigns them: 10000 + n for the n-th flow of a host pair.
std::vector<FlowSpec> llm_flows(const LlmJob& job, int priority);

struct RankBreakdown {
    uint32_t rank = 0;
    double compute_s = 0, optimizer_s = 0;   // optimizer_s is part of compute_s
    double exposed_tp_s = 0, exposed_pp_s = 0, exposed_dp_s = 0, exposed_ep_s = 0;
    double exposed_embedding_s = 0;          // the tied-embedding gradient all-reduce (first ↔ last stage)
    double bubble_s = 0;                     // waiting for another pipeline stage's compute
    double idle_s = 0;                       // the rest: waiting for the slowest rank at the end
};

struct TimelineSpan {
    uint32_t rank;
    int iteration;
    std::string stream;                      // "compute", "tp", "pp", "dp", "ep", "embedding"
    std::string name, kind;                  // kind: forward, backward-input, backward-weight, optimizer, or the collective
    int64_t start_ps, end_ps;
    int64_t bytes;
    std::string peers;                       // the other ranks of the collective ("3,4,5") or the pipeline peer
};

struct LlmOutcome {
    std::string status = "ok";               // ok, oom, error
    std::string message;
    double iteration_time_s = 0;             // mean over the iterations run
    int iterations = 1;
    std::vector<RankBreakdown> ranks;        // per rank, per iteration (means)
    std::vector<TimelineSpan> timeline;
    size_t ops = 0, flows = 0;
    // Per network transfer (LlmJob::transfers order): when it started and finished, ps; for the flow table of
    // runs that time transfers without packets (output.record "fct").
    std::vector<std::pair<int64_t, int64_t>> transfer_times;
};

LlmOutcome summarize_llm(const LlmJob& job, const Executor& x);
// From the op times of a run; the job started at t0 (ps): its iteration time counts from there.
LlmOutcome summarize_llm(const LlmJob& job, const OpTimes& x, int64_t t0);
// The spans of the timeline, one finished task at a time (summarize_llm, and a run writing them as it goes:
// timeline_stream.h). A compute op's span; a collective's span on one of its members, the members with a span
// being every member, or in a lockstep graph the first member on each lane.
TimelineSpan compute_span(const TaskGraph& g, const OpTimes& x, uint32_t op);
TimelineSpan collective_span(const TaskGraph& g, const OpTimes& x, uint32_t collective, uint32_t member);
void span_members(const TaskGraph& g, const CollectiveRecord& c, std::vector<uint32_t>& members);
// The per-rank means and the iteration time as a JSON object with units in the keys.
nlohmann::json llm_summary_json(const LlmOutcome& o);

// Every transfer as α + size/β on its path, no packets: the reference's standalone FCT of a flow of its size
// (base RTT of the path + wire bytes at the path's bottleneck rate).
// How a run's end becomes its outcome; unset: summarize_llm (a mix of jobs sets its own, workload/job_mix.h).
using Summarize = std::function<LlmOutcome(const Executor&)>;

LlmOutcome run_llm_analytic(const LlmJob& job, const Fabric& fabric, const Routes& routes, uint32_t mtu, const Summarize& summarize = {});

}  // namespace orrery
