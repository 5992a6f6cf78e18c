#pragma once
// One LLM job stepped at packet level by its driver, as the benchmarks run it.
#include <memory>
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

// A sweep of one LLM job: one experiment per scenario (their CC settings, seeds, skipping), each with its
// own driver, in one batch. `results[e]` and `outcomes[e]` by experiment (an outcome's iteration time is -1
// when its tasks did not all finish).
struct LlmSweepRun {
    Batch batch;
    std::vector<ExperimentResult> results;
    std::vector<double> iteration_s;
};

inline LlmSweepRun run_llm_sweep(const std::vector<const Scenario*>& scenarios, const Fabric& f, const LlmJob& job, const WorkloadTables& tables,
                                 int threads) {
    LlmSweepRun r;
    std::vector<ExperimentInput> in;
    for (size_t e = 0; e < scenarios.size(); ++e)
        in.push_back({"e" + std::to_string(e), scenarios[e], &f, llm_flows(job, scenarios[e]->workload.llm->collectives.priority)});
    r.batch = compile_batch(in);
    std::vector<std::unique_ptr<LlmDriver>> drivers;
    for (uint32_t e = 0; e < scenarios.size(); ++e) drivers.push_back(std::make_unique<LlmDriver>(job, r.batch, e, f, tables));
    RunOptions ro;
    ro.threads = threads;
    ro.drive = [&](uint32_t e, int64_t now, uint32_t done) { return drivers[e]->drive(now, done); };
    r.results = run_cpu(r.batch, ro);
    for (const auto& d : drivers) r.iteration_s.push_back(d->executor().finished() ? summarize_llm(job, d->executor()).iteration_time_s : -1);
    return r;
}

}  // namespace orrery::bench
