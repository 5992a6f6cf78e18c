// Map: run_cpu picks the parallelism:
//   - at least as many experiments as threads: each thread takes whole experiments from a queue and steps
//     each alone to its end (experiments never interact, so no barrier between them, and one experiment's
//     working set stays in cache);
//   - fewer experiments than threads: threads take small chunks of the batch's nodes (chunk_shares.h) and
//     meet at a barrier every step (a step with little work runs on one thread).
// Both run Stepper: workers call process_node over their nodes, each with its own stock of packet blocks
// and PFC log (WorkerStorage); Stepper::host_step (the barrier's completion) drains the PFC logs → takes
// queue snapshots → detects completion → moves each clock to its next event → sizes the logs for the
// next step. Nothing is planned or grown per node between steps: packets live in blocks the step itself
// takes and gives back (net/blocks.h).
#include "runtime/cpu_runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "common/diagnostics.h"
#include "net/node.h"
#include "runtime/chunk_shares.h"
#include "runtime/spin_barrier.h"

namespace orrery {
namespace {

using namespace net;

constexpr int64_t kDumpInterval = 100'000'000'000;  // ps: the reference writes queue histograms every 100 ms
constexpr uint64_t kEventsWorthSplitting = 2000;    // events in a step below which one thread does it all

// The first queue-histogram dump time at or after t.
int64_t next_dump_at(int64_t t) { return (t + kDumpInterval - 1) / kDumpInterval * kDumpInterval; }

void finish_experiment(Batch& b, uint32_t e, ExperimentResult& r) {
    const ExperimentSlice& x = b.experiments[e];
    for (uint32_t f = x.flow_begin; f < x.flow_end; ++f) r.flows.push_back({f, b.qp[f].phase == kDone ? b.qp[f].finish : kNever});
    std::stable_sort(r.flows.begin(), r.flows.end(), [&](const FlowResult& a, const FlowResult& c) {
        if (a.finish != c.finish) return a.finish < c.finish;
        if (b.flow[a.flow].src != b.flow[c.flow].src) return b.flow[a.flow].src < b.flow[c.flow].src;
        return b.qp[a.flow].completion_order < b.qp[c.flow].completion_order;
    });
    std::stable_sort(r.pfc.begin(), r.pfc.end(), [](const PfcEvent& a, const PfcEvent& c) {
        if (a.time != c.time) return a.time < c.time;
        if (a.node != c.node) return a.node < c.node;
        return a.ifindex < c.ifindex;
    });
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
        r.events += b.out[n].packets_processed;
        r.packet_hops += b.out[n].transmissions;
        r.lost += b.out[n].lost;
        if (b.node_role[n] == kRoleSwitch) r.drops += b.sw[n].drops;
    }
}

// Nodes [begin, end) with each switch followed by the hosts attached to it, so that contiguous chunks
// (and the threads' shares of them) hold whole racks or pods: in generated fabrics the hosts come first
// and the switches after, and cutting that order puts every host on another thread than its switch,
// sending every packet between cores.
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

struct Stepper {
    Batch& b;
    std::vector<ExperimentResult>& results;
    std::vector<uint32_t> exps;        // the experiments this stepper advances
    uint32_t node_begin, node_end;     // their nodes (contiguous)
    const RunOptions* options;         // progress reports (node-parallel mode only)
    NetView view;
    std::vector<int64_t> window_end;   // per experiment of the batch, for the step under way
    std::vector<uint32_t> done_count;  // per experiment of the batch
    std::vector<int64_t> next_sample;  // per experiment of the batch: next telemetry sample time
    std::vector<int64_t> own_next;     // per experiment of the batch: its driver's next own event
    std::vector<std::unique_ptr<wormhole::Skipper>> skippers;  // per experiment of the batch with skipping on
    uint64_t step = 0;
    bool finished = false;
    std::exception_ptr error;
    std::unique_ptr<ChunkShares> shares;  // node-parallel: chunks of nodes handed out within a step
    std::vector<uint32_t> order;  // the nodes in the order they are stepped and chunks cut them (locality_order)
    uint32_t chunk_size = 1;
    bool solo = true;                     // the next step is small: one thread does it all
    int threads = 1;
    std::vector<std::unique_ptr<WorkerStorage>> workers;  // per thread: its block stock and PFC log
    uint64_t events_seen = 0;             // events of the range up to the last step

    Stepper(Batch& batch, const NetView& v, std::vector<ExperimentResult>& r, std::vector<uint32_t> experiments, const RunOptions* o, int thread_count)
        : b(batch), results(r), exps(std::move(experiments)), options(o), view(v),
          window_end(batch.experiments.size(), 0), done_count(batch.experiments.size(), 0), next_sample(batch.experiments.size(), kNever), own_next(batch.experiments.size(), kNever) {
        skippers.resize(batch.experiments.size());
        node_begin = b.experiments[exps.front()].node_begin;
        node_end = b.experiments[exps.back()].node_end;
        order = locality_order(b, node_begin, node_end);
        threads = thread_count;
        for (int t = 0; t < threads; ++t) workers.push_back(std::make_unique<WorkerStorage>(*b.arena));
        for (uint32_t e : exps) {
            const int64_t interval = b.params[e].sample_interval;
            if (interval != kNever && interval > 0) next_sample[e] = (b.experiments[e].clock / interval + 1) * interval;
            if (options && options->on_experiment_start && !b.experiments[e].done) options->on_experiment_start(e);
            if (options && options->drive && !b.experiments[e].done) own_next[e] = options->drive(e, b.experiments[e].clock, 0).next_own;
            if (b.experiments[e].skipping.enabled && !b.experiments[e].done)
                skippers[e] = std::make_unique<wormhole::Skipper>(b, e, options ? options->memo : nullptr);
        }
        prepare();
    }

    void prepare() {
        for (uint32_t e : exps) {
            ExperimentSlice& x = b.experiments[e];
            const ExperimentParams& ep = b.params[e];
            if (x.done) {
                window_end[e] = x.clock;
                continue;
            }
            int64_t end = x.clock + x.lookahead;
            if (ep.qlen_start != kNever && end > ep.qlen_start && x.clock <= ep.qlen_end) allocate_queue_monitor(b, e);
            // Never cross a queue-histogram dump time within a step: the snapshot is taken right after it.
            if (ep.qlen_start != kNever && x.clock <= ep.qlen_end) {
                const int64_t next_dump = next_dump_at(x.clock);
                if (next_dump <= ep.qlen_end) end = std::min(end, next_dump + 1);
            }
            if (ep.stop_time != kNever) end = std::min(end, ep.stop_time + 1);
            if (next_sample[e] != kNever) end = std::min(end, next_sample[e] + 1);  // a sample sees every event up to its time
            if (own_next[e] != kNever) end = std::min(end, own_next[e]);  // the driver's event starts the next step
            window_end[e] = end;
        }
    }

    // The nodes at positions [begin, end) of `order`, on worker thread t.
    void process(int t, uint32_t begin, uint32_t end) {
        NetView v = view;
        v.store.cache = &workers[t]->cache;
        v.pfc_log = &workers[t]->log;
        for (uint32_t i = begin; i < end; ++i) process_node(v, order[i], StepClock{step, window_end[b.node_experiment[order[i]]]});
    }

    // Nothing but queue-monitor samples happens before `until`: the queues are constant, so count those
    // samples at once instead of stepping through them. Stops at a dump time so its snapshot is taken.
    // Returns the next time anything happens: the next sample still to take, or `until`.
    int64_t skip_idle_samples(uint32_t e, int64_t next_sample, int64_t until) {
        const ExperimentSlice& x = b.experiments[e];
        const ExperimentParams& ep = b.params[e];
        const int64_t limit = std::min({until, next_dump_at(next_sample), ep.qlen_end + 1});
        if (limit <= next_sample) return next_sample;
        allocate_queue_monitor(b, e);
        const int64_t count = (limit - 1 - next_sample) / ep.qlen_interval + 1;  // samples in [next_sample, limit)
        const int64_t resume = next_sample + count * ep.qlen_interval;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            if (b.node_role[n] != kRoleSwitch || b.sw[n].next_sample != next_sample) continue;
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                uint32_t bytes = 0;
                for (int q = 0; q < kPriorities; ++q) bytes += b.mmu[row].egress_bytes[q];
                const uint32_t bucket = std::min(bytes / 1000, b.qlen_buckets[row] - 1);
                b.qlen_hist[e][b.qlen_offset[row] + bucket] += uint32_t(count);
            }
            b.sw[n].next_sample = resume > ep.qlen_end ? kNever : resume;
        }
        return resume > ep.qlen_end ? until : std::min(resume, until);
    }

    void snapshot_queues(uint32_t e, int64_t time) {
        const ExperimentSlice& x = b.experiments[e];
        QueueSnapshot snap;
        snap.time = time;
        for (uint32_t n = x.node_begin; n < x.node_end && !b.qlen_hist[e].empty(); ++n) {
            if (b.node_role[n] != kRoleSwitch) continue;
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                const uint32_t* h = b.qlen_hist[e].data() + b.qlen_offset[row];
                uint32_t last = 0;
                bool any = false;
                for (uint32_t i = 0; i < b.qlen_buckets[row]; ++i)
                    if (h[i]) last = i, any = true;
                if (!any) continue;
                snap.ports.push_back({b.node_fabric_id[n], uint32_t(b.port[row].local + 1), std::vector<uint32_t>(h, h + last + 1)});
            }
        }
        results[e].queues.push_back(std::move(snap));
    }

    void finish(uint32_t e, int64_t end_time, bool stalled, bool cancelled = false) {
        b.experiments[e].done = true;
        ExperimentResult& r = results[e];
        if (skippers[e]) r.skipping = skippers[e]->take_report();
        r.end_time = end_time;
        r.stalled = stalled;
        r.cancelled = cancelled;
        finish_experiment(b, e, r);
        if (options && options->on_experiment_done) options->on_experiment_done(e, r);
        release_experiment_storage(b, e, workers[0]->cache);  // the next experiments of a sweep reuse its blocks
    }

    void run() noexcept {
        try {
            host_step();
        } catch (...) {
            error = std::current_exception();
            finished = true;
        }
    }

    void host_step() {
        uint64_t events = 0, pfc_in_flight = 0;
        for (uint32_t n = node_begin; n < node_end; ++n) {
            const NodeOutput& o = b.out[n];
            events += o.packets_processed;
            pfc_in_flight += o.pfc_sent - o.pfc_received;
            if (o.events_overflow & 1u) throw std::logic_error("a PFC event log was sized below the pause frames in flight");
            if (o.events_overflow)
                throw std::runtime_error("packet storage exhausted at node " + std::to_string(b.node_fabric_id[n]) + " of experiment " +
                                         b.experiments[b.node_experiment[n]].id + ": " +
                                         std::to_string(b.arena->committed_blocks() * BlockArena::kBytesPerBlock >> 20) +
                                         " MiB of packets in flight and queued, as much as this machine's memory holds");
        }
        for (const auto& w : workers) {
            for (uint32_t i = 0; i < w->log.count; ++i) {
                PfcEvent ev = w->log.events[i];
                results[b.node_experiment[ev.node]].pfc.push_back({ev.time, b.node_fabric_id[ev.node], ev.ifindex, ev.node_type, ev.pause});
            }
            w->log.count = 0;
            // The frames the next step can receive were all sent before it starts.
            w->reserve_log(pfc_in_flight + 8);
        }
        const bool was_split = !solo && threads > 1;
        // Splitting a step over threads pays only when it holds enough work; measured on the last step.
        solo = events - events_seen < kEventsWorthSplitting;
        events_seen = events;
        bool all_done = true;
        const bool cancelled = options && options->cancel && options->cancel->load(std::memory_order_relaxed);
        for (uint32_t e : exps) {
            ExperimentSlice& x = b.experiments[e];
            const ExperimentParams& ep = b.params[e];
            if (x.done) continue;
            if (cancelled) {
                finish(e, window_end[e], false, true);
                continue;
            }
            ++results[e].steps;
            if (was_split) ++results[e].split_steps;
            const int64_t end = window_end[e];
            if (ep.qlen_start != kNever && (end - 1) % kDumpInterval == 0 && end - 1 >= ep.qlen_start && end - 1 <= ep.qlen_end)
                snapshot_queues(e, end - 1);
            if (next_sample[e] == end - 1) {
                if (options && options->on_sample) options->on_sample(e, end - 1);
                next_sample[e] += ep.sample_interval;
            }
            // Every unconsumed packet was either seen by its receiver (its next event) or sent in this step
            // (its sender's earliest arrival): the next event of the experiment needs no scan of the rings.
            uint32_t done = 0;
            int64_t next = kNever, next_busy = kNever, held = 0;
            for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
                const NodeOutput& o = b.out[n];
                done += o.completions;
                held += o.blocks_held;
                next = std::min(next, o.next_event);
                next_busy = std::min({next_busy, o.next_busy_event, o.min_sent_arrival});
            }
            done_count[e] = done;
            x.peak_blocks = std::max(x.peak_blocks, held);
            next = std::min(next, next_busy);
            if (next_busy > end && next < next_busy) next = skip_idle_samples(e, next, next_busy);
            bool flows_done = done == x.flow_end - x.flow_begin;
            if (options && options->drive) {
                // The driver first takes this step's completions at its end, then handles its own events up
                // to `now` before any step that would start at one of them.
                int64_t now = end;
                for (;;) {
                    const DriverStatus st = options->drive(e, now, done);
                    own_next[e] = st.next_own;
                    flows_done = st.finished;
                    const int64_t candidate = std::max(end, std::min({next, st.next_own, st.next_release}));
                    if (flows_done || candidate != st.next_own || candidate <= now) {
                        next = std::min({next, st.next_own, st.next_release});
                        break;
                    }
                    now = candidate;
                }
            }
            if (skippers[e] && !flows_done) next = skippers[e]->after_step(end, next, done);
            const bool monitor_pending = ep.qlen_start != kNever && end <= ep.qlen_end;
            if ((flows_done && !monitor_pending) || (ep.stop_time != kNever && end > ep.stop_time)) {
                int64_t last = 0;
                for (uint32_t f = x.flow_begin; f < x.flow_end; ++f)
                    if (b.qp[f].phase == kDone) last = std::max(last, b.qp[f].finish);
                finish(e, flows_done ? last : ep.stop_time, false);
                continue;
            }
            if (next == kNever) {
                finish(e, end, true);
                continue;
            }
            x.clock = std::max(end, next);
            // Idle stretches produce no samples: the next one is the first at or after the new clock.
            if (next_sample[e] != kNever && next_sample[e] < x.clock)
                next_sample[e] = (x.clock + ep.sample_interval - 1) / ep.sample_interval * ep.sample_interval;
            all_done = false;
        }
        if (shares) shares->reset();  // released to the workers by the barrier
        ++step;
        if (options && options->on_progress && step % 1000 == 0)
            for (uint32_t e : exps)
                if (!b.experiments[e].done) options->on_progress(e, b.experiments[e].clock, done_count[e]);
        if (options && options->progress && exps.size() == b.experiments.size() && step % 1000 == 0) {
            RunProgress p{step, {}, done_count};
            for (const ExperimentSlice& x : b.experiments) p.clocks.push_back(x.clock);
            options->progress(p);
        }
        if (all_done) {
            finished = true;
            return;
        }
        prepare();
    }
};

// Threads split the nodes of `exps`, meeting at a barrier every step.
void run_node_parallel(Batch& b, const NetView& view, std::vector<ExperimentResult>& results, std::vector<uint32_t> exps, int threads,
                       const RunOptions* options) {
    const uint32_t nodes = b.experiments[exps.back()].node_end - b.experiments[exps.front()].node_begin;
    threads = std::max(1, std::min<int>(threads, int(std::max<uint32_t>(1, nodes))));
    Stepper stepper(b, view, results, std::move(exps), options, threads);
    if (threads == 1) {
        while (!stepper.finished) {
            stepper.process(0, 0, uint32_t(stepper.order.size()));
            stepper.run();
        }
    } else {
        auto on_step = [&stepper]() noexcept { stepper.run(); };
        SpinBarrier sync(threads, on_step);
        // Threads take small chunks of nodes, their own share first, so a step's uneven work spreads by itself.
        const uint32_t begin = stepper.node_begin, end = stepper.node_end;
        stepper.chunk_size = std::max<uint32_t>(1, (end - begin) / (uint32_t(threads) * 16));
        const uint32_t count = end - begin, chunks = (count + stepper.chunk_size - 1) / stepper.chunk_size;
        stepper.shares = std::make_unique<ChunkShares>(threads, chunks);
        auto work = [&](int t) {
            while (!stepper.finished) {
                if (stepper.solo) {
                    if (t == 0) stepper.process(0, 0, count);
                } else {
                    for (uint32_t c; (c = stepper.shares->take(t)) != ChunkShares::kNone;)
                        stepper.process(t, c * stepper.chunk_size, std::min(count, (c + 1) * stepper.chunk_size));
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

std::vector<ExperimentResult> run_cpu(Batch& b, const RunOptions& options) {
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    const uint32_t count = uint32_t(b.experiments.size());
    if (count == 0) return results;
    // Built once: steppers of different experiments run concurrently, each with its own workers' storage.
    const NetView view = b.view();
    if (count > 1 && count >= uint32_t(options.threads)) {
        // Whole experiments per thread, taken from a queue in order (one thread: one after the other).
        std::atomic<uint32_t> next{0};
        std::mutex failure_lock;
        std::exception_ptr failure;
        auto work = [&]() {
            for (uint32_t e; (e = next.fetch_add(1)) < count;) {
                try {
                    run_node_parallel(b, view, results, {e}, 1, &options);
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
    } else {
        std::vector<uint32_t> all(count);
        for (uint32_t e = 0; e < count; ++e) all[e] = e;
        run_node_parallel(b, view, results, all, options.threads, &options);
    }
    return results;
}

}  // namespace orrery
