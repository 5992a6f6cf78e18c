// Map: run_cpu picks the parallelism:
//   - at least as many experiments as threads: each thread takes whole experiments from a queue and steps
//     each alone to its end (experiments never interact, so no barrier between them, and one experiment's
//     working set stays in cache);
//   - fewer experiments than threads: threads take small chunks of the batch's nodes (chunk_shares.h) and
//     meet at a barrier every step (a step with little work runs on one thread).
// Both run CpuSteps: workers call process_node over their nodes, each with its own stock of packet blocks
// and PFC log (WorkerStorage); the barrier's completion is the host step (runtime/stepper.h), whose
// summaries, PFC events and block releases CpuSteps answers from the host tables. Nothing is planned or
// grown per node between steps: packets live in blocks the step itself takes and gives back (net/blocks.h).
#include "runtime/cpu_runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/diagnostics.h"
#include "net/node.h"
#include "runtime/chunk_shares.h"
#include "runtime/memo_rounds.h"
#include "runtime/partition.h"
#include "runtime/spin_barrier.h"
#include "runtime/stepper.h"

namespace orrery {
namespace {

using namespace net;

constexpr uint64_t kEventsWorthSplitting = 2000;    // events in a step below which one thread does it all

// A core's own cache (its L2), which a worker's packets of a step must outgrow before streaming them pays:
// measured on this machine's 1 MiB L2 (docs/history/runtime-scale-and-mpi.md). 1 MiB when the system does not say.
uint64_t core_cache_bytes() {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? uint64_t(l2) : uint64_t(1) << 20;
}

void store_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// The CPU backend's side of a stepper: the nodes in locality order, the workers' storage, the chunks.
struct CpuSteps final : StepBackend {
    Batch& b;
    NetView view;
    std::vector<uint32_t> order;  // the nodes in the order they are stepped and chunks cut them (locality_order)
    std::vector<uint32_t> chunk_begin;    // node-parallel: chunk c is order[chunk_begin[c] .. chunk_begin[c + 1])
    std::vector<std::unique_ptr<WorkerStorage>> workers;  // per thread: its block stock and PFC log
    std::unique_ptr<ChunkShares> shares;  // node-parallel: chunks of nodes handed out within a step
    int threads = 1;
    bool solo = true;                     // the next step is small: one thread does it all
    bool split = false;                   // the step just run was split
    bool stream = false;                  // the next step writes packets into rings by non-temporal stores
    uint64_t stream_above = core_cache_bytes();
    uint64_t events_seen = 0;             // events of the range up to the last step
    const Stepper* stepper = nullptr;

    CpuSteps(Batch& batch, const NetView& v, uint32_t begin, uint32_t end, int thread_count)
        : b(batch), view(v), order(locality_order(batch, begin, end)), threads(thread_count) {
        for (int t = 0; t < threads; ++t) workers.push_back(std::make_unique<WorkerStorage>(*b.arena));
    }

    // The nodes at positions [begin, end) of `order`, on worker thread t.
    void process(int t, uint32_t begin, uint32_t end) {
        NetView v = view;
        v.store.cache = &workers[t]->cache;
        v.pfc_log = &workers[t]->log;
        v.stream_packets = stream;
        const uint64_t step = stepper->step;
        const int64_t* window_end = stepper->window_end.data();
        for (uint32_t i = begin; i < end; ++i) process_node(v, order[i], StepClock{step, window_end[b.node_experiment[order[i]]]});
        if (stream) store_fence();  // the non-temporal stores are seen by the readers after the barrier
    }

    StepSummary summary(uint32_t e) override { return summarize_nodes(b, e); }
    void drain_pfc(std::vector<PfcEvent>& into) override {
        for (const auto& w : workers) {
            into.insert(into.end(), w->log.events, w->log.events + w->log.count);
            w->log.count = 0;
        }
    }
    void size_pfc_logs(uint64_t events) override {
        for (const auto& w : workers) w->reserve_log(events);
    }
    void pull(uint32_t, bool) override {}
    void push(uint32_t) override {}
    void release(uint32_t e) override { release_experiment_storage(b, e, workers[0]->cache); }
    void with_block_cache(uint32_t, const std::function<void(BlockCache&)>& use) override { use(workers[0]->cache); }
    void monitor_allocated(uint32_t) override {}
    void stepped(uint64_t events) override {
        split = !solo && threads > 1;
        // Splitting a step over threads pays only when it holds enough work; measured on the last step.
        const uint64_t step_events = events - events_seen;
        solo = step_events < kEventsWorthSplitting;
        // Streamed packet writes pay once a worker's packets of a step (about one per event) outgrow its
        // core's cache; below that the receiver would find them there (link.h: write_ring_slot).
        stream = (step_events << b.arena->packet_shift()) / uint64_t(solo ? 1 : threads) > stream_above;
        events_seen = events;
        if (shares) shares->reset();  // released to the workers by the barrier
    }
    bool split_last_step() const override { return split; }
    bool streamed_last_step() const override { return stream; }
};

// Threads split the nodes of `exps`, meeting at a barrier every step.
void run_node_parallel(Batch& b, const NetView& view, std::vector<ExperimentResult>& results, std::vector<uint32_t> exps, int threads,
                       const RunOptions* options) {
    const uint32_t begin = b.experiments[exps.front()].node_begin, end = b.experiments[exps.back()].node_end;
    threads = std::max(1, std::min<int>(threads, int(std::max<uint32_t>(1, end - begin))));
    CpuSteps steps(b, view, begin, end, threads);
    if (options && options->stream_packets_above) steps.stream_above = options->stream_packets_above;
    Stepper stepper(b, steps, results, std::move(exps), options);
    steps.stepper = &stepper;
    const uint32_t count = end - begin;
    if (threads > 1) {
        // Each thread's share is its part of the fabric as a partitioned run would cut it (partition.h: racks
        // and pods whole, core switches spread, balanced by ports): cutting the locality order in equal counts
        // gave one thread every aggregation and core switch (a k = 60 step: 1.5x on two threads, 1.8x with two
        // ranks cut this way).
        const PartitionPlan plan = plan_partition(b, threads);
        std::vector<uint32_t> by_owner;
        by_owner.reserve(count);
        std::vector<uint32_t> first_chunk;
        const uint32_t chunk_size = std::max<uint32_t>(1, count / (uint32_t(threads) * 16));
        for (int t = 0; t < threads; ++t) {
            first_chunk.push_back(uint32_t(steps.chunk_begin.size()));
            const size_t from = by_owner.size();
            for (uint32_t n : steps.order)
                if (plan.owner[n] == t) by_owner.push_back(n);
            for (size_t at = from; at < by_owner.size(); at += chunk_size) steps.chunk_begin.push_back(uint32_t(at));
        }
        first_chunk.push_back(uint32_t(steps.chunk_begin.size()));
        steps.chunk_begin.push_back(count);
        steps.order = std::move(by_owner);
        steps.shares = std::make_unique<ChunkShares>(threads, first_chunk);
    }
    if (threads == 1) {
        while (!stepper.finished) {
            steps.process(0, 0, count);
            stepper.run();
        }
    } else {
        auto on_step = [&stepper]() noexcept { stepper.run(); };
        SpinBarrier sync(threads, on_step);
        // Threads take small chunks of nodes, their own share first, so a step's uneven work spreads by itself.
        auto work = [&](int t) {
            while (!stepper.finished) {
                if (steps.solo) {
                    if (t == 0) steps.process(0, 0, count);
                } else {
                    for (uint32_t c; (c = steps.shares->take(t)) != ChunkShares::kNone;) steps.process(t, steps.chunk_begin[c], steps.chunk_begin[c + 1]);
                }
                sync.arrive_and_wait();
            }
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
        work(0);
        for (std::thread& t : pool) t.join();
    }
    if (stepper.error) std::rethrow_exception(stepper.error);
}

}  // namespace

std::vector<uint32_t> locality_order(const Batch& b, uint32_t begin, uint32_t end) {
    std::vector<std::vector<uint32_t>> attached(end - begin);
    std::vector<uint32_t> order;
    order.reserve(end - begin);
    for (uint32_t n = begin; n < end; ++n) {
        if (b.node_role[n] != kRoleHost) continue;
        const uint32_t peer = b.port[b.port[b.nic[n].port].peer_port].node;
        if (b.node_role[peer] == kRoleSwitch) attached[peer - begin].push_back(n);
        else order.push_back(n);  // a host wired to a host
    }
    for (uint32_t n = begin; n < end; ++n) {
        if (b.node_role[n] == kRoleHost) continue;
        order.push_back(n);
        order.insert(order.end(), attached[n - begin].begin(), attached[n - begin].end());
    }
    return order;
}

namespace {

// Experiments `exps` (in experiment order): whole experiments per thread when there are at least as many as
// threads, else all of them stepped together with the threads splitting their nodes.
void run_experiments(Batch& b, const NetView& view, std::vector<ExperimentResult>& results, const std::vector<uint32_t>& exps,
                     const RunOptions& options) {
    const uint32_t count = uint32_t(exps.size());
    if (count > 1 && count >= uint32_t(options.threads)) {
        // Whole experiments per thread, taken from a queue in order (one thread: one after the other).
        std::atomic<uint32_t> next{0};
        std::mutex failure_lock;
        std::exception_ptr failure;
        auto work = [&]() {
            for (uint32_t i; (i = next.fetch_add(1)) < count;) {
                try {
                    run_node_parallel(b, view, results, {exps[i]}, 1, &options);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(failure_lock);
                    if (!failure) failure = std::current_exception();
                }
            }
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < std::min<int>(options.threads, int(count)); ++t) pool.emplace_back(work);
        work();
        for (std::thread& t : pool) t.join();
        if (failure) std::rethrow_exception(failure);
    } else if (exps.back() - exps.front() + 1 == count) {
        run_node_parallel(b, view, results, exps, options.threads, &options);
    } else {
        // Stepped together, experiments must be contiguous (their nodes are one range): these are not.
        for (uint32_t e : exps) run_node_parallel(b, view, results, {e}, options.threads, &options);
    }
}

}  // namespace

std::vector<ExperimentResult> run_cpu(Batch& b, const RunOptions& options) {
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    if (b.experiments.empty()) return results;
    // Built once: steppers of different experiments run concurrently, each with its own workers' storage.
    const NetView view = b.view();
    const MemoRounds plan = plan_memo_rounds(b);
    if (!plan.sharing()) {
        run_experiments(b, view, results, plan.rounds[0], options);
        return results;
    }
    // Each chain's memo: the run's, then what its members learned, one round after another.
    std::vector<wormhole::MemoTable> chain_memo(plan.chains, options.memo ? *options.memo : wormhole::MemoTable{});
    RunOptions round_options = options;
    round_options.memo_by_experiment.assign(b.experiments.size(), nullptr);
    for (uint32_t e = 0; e < b.experiments.size(); ++e)
        round_options.memo_by_experiment[e] = plan.chain[e] == MemoRounds::kOwnMemo ? options.memo_for(e) : &chain_memo[plan.chain[e]];
    for (const std::vector<uint32_t>& round : plan.rounds) {
        run_experiments(b, view, results, round, round_options);
        for (uint32_t e : round)
            if (plan.chain[e] != MemoRounds::kOwnMemo)
                for (const wormhole::MemoEntry& m : results[e].skipping.learned) chain_memo[plan.chain[e]].add(m);
    }
    return results;
}

}  // namespace orrery
