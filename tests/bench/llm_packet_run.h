#pragma once
// One LLM job stepped at packet level by its driver, as the benchmarks run it.
#include <string>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "workload/llm_driver.h"

namespace orrery::bench {

struct LlmPacketRun {
    Batch batch;
    std::vector<ExperimentResult> results;
    size_t unfinished = 0;    // tasks left when the network had nothing more to do
    LlmOutcome outcome;       // set when every task finished
};

inline LlmPacketRun run_llm_packet(const Scenario& s, const Fabric& f, const LlmJob& job, const WorkloadTables& tables, int threads,
                                   const wormhole::MemoTable* memo = nullptr) {
    LlmPacketRun r;
    std::vector<ExperimentInput> in{{"llm", &s, &f, llm_flows(job, s.workload.llm->collectives.priority)}};
    r.batch = compile_batch(in);
    LlmDriver driver(job, r.batch, 0, f, tables);
    RunOptions ro;
    ro.threads = threads;
    ro.memo = memo;
    ro.drive = [&](uint32_t, int64_t now, uint32_t done) { return driver.drive(now, done); };
    r.results = run_cpu(r.batch, ro);
    r.unfinished = driver.executor().unfinished();
    if (driver.executor().finished()) r.outcome = summarize_llm(job, driver.executor());
    return r;
}

}  // namespace orrery::bench
