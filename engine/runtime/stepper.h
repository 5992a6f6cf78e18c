#pragma once
// The host's share of a step, common to the backends: after the nodes of a step have run (on CPU threads
// or on a device), Stepper::host_step drains the PFC events, takes queue snapshots and samples, calls the
// workload driver and the skipper, detects completion and moves each experiment's clock to its next event.
// What it needs of the nodes comes through StepBackend: a summary per experiment after every step, and the
// experiment's tables on the host only when a hook reads or writes them (pull, push).
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"
#include "runtime/step_summary.h"

namespace orrery {

// Sums experiment e's nodes (from the host tables).
StepSummary summarize_nodes(const Batch& b, uint32_t e);

// What a backend does for the stepper. The CPU backend steps the host tables themselves (pull and push do
// nothing); the device backend keeps the tables on the device and moves an experiment's rows on demand.
struct StepBackend {
    virtual ~StepBackend() = default;
    // After a step: experiment e's summary.
    virtual StepSummary summary(uint32_t e) = 0;
    // The PFC events of the step just run, in any order (node = batch row), then empties the logs.
    virtual void drain_pfc(std::vector<net::PfcEvent>& into) = 0;
    // Room for this many PFC events in the next step.
    virtual void size_pfc_logs(uint64_t events) = 0;
    // Experiment e's rows of the tables (and, with `packets`, the packet blocks) brought to the host
    // before a hook reads them, and sent back after it changed them.
    virtual void pull(uint32_t e, bool packets) = 0;
    virtual void push(uint32_t e) = 0;
    // Experiment e ended: give its packet blocks back (the host tables are pulled).
    virtual void release(uint32_t e) = 0;
    // A host hook of experiment e (its tables pulled with packets) gives packet blocks back through the
    // cache `use` is handed.
    virtual void with_block_cache(uint32_t e, const std::function<void(net::BlockCache&)>& use) = 0;
    // Experiment e's queue monitor was just allocated on the host.
    virtual void monitor_allocated(uint32_t e) = 0;
    // After the host step: the events handled so far (the CPU backend decides whether to split the next step).
    virtual void stepped(uint64_t events) { (void)events; }
    // Whether the step just run was split over several threads (counted in ExperimentResult::split_steps).
    virtual bool split_last_step() const { return false; }
    // Whether the step just run wrote its packets by non-temporal stores (ExperimentResult::streamed_steps).
    virtual bool streamed_last_step() const { return false; }
};

struct Stepper {
    Batch& b;
    StepBackend& backend;
    std::vector<ExperimentResult>& results;
    std::vector<uint32_t> exps;        // the experiments this stepper advances
    uint32_t node_begin, node_end;     // their nodes (contiguous)
    const RunOptions* options;
    std::vector<int64_t> window_end;   // per experiment of the batch, for the step under way
    std::vector<uint32_t> done_count;  // per experiment of the batch
    std::vector<int64_t> next_sample;  // per experiment of the batch: next telemetry sample time
    std::vector<int64_t> own_next;     // per experiment of the batch: its driver's next own event
    std::vector<std::unique_ptr<wormhole::Skipper>> skippers;  // per experiment of the batch with skipping on
    uint64_t step = 0;
    bool finished = false;
    std::exception_ptr error;
    // Reused by every host step (not allocated per step): its experiments' summaries, the PFC events drained.
    std::vector<StepSummary> summaries;
    std::vector<net::PfcEvent> pfc_drained;

    Stepper(Batch& batch, StepBackend& backend, std::vector<ExperimentResult>& r, std::vector<uint32_t> experiments, const RunOptions* o);
    // The host step, catching what it throws into `error` (it runs as a barrier's completion).
    void run() noexcept;

private:
    void prepare();
    int64_t skip_idle_samples(uint32_t e, int64_t next_sample, int64_t until);
    void snapshot_queues(uint32_t e, int64_t time);
    void finish(uint32_t e, int64_t end_time, bool stalled, bool cancelled = false);
    void host_step();
    uint64_t gather_summaries();  // each experiment's step summary, and the PFC events it logged; returns the events handled
    // Experiment exps[i]'s host work after a step (hooks, completion, its next window); false once it has ended.
    bool after_step(size_t i, bool was_split, bool was_streamed, bool cancelled);
    // The workload driver's turn at the step's end: it takes the step's completions, then handles its own events
    // up to any step that would start at one of them. Returns the experiment's next event; sets flows_done.
    int64_t drive(uint32_t e, int64_t end, int64_t next, uint32_t done, bool& flows_done);
    void report_progress();
};

}  // namespace orrery
