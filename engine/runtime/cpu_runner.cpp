// Map: run_cpu → workers (process_node over their node range) ⇄ barrier completion HostStep::run
// (drain PFC events → queue snapshots → completion → next clock per experiment → pool growth).
#include "runtime/cpu_runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

#include "common/diagnostics.h"
#include "net/node.h"
#include "runtime/spin_barrier.h"

namespace orrery {
namespace {

using namespace net;

constexpr int64_t kDumpInterval = 100'000'000'000;  // ps: the reference writes queue histograms every 100 ms

struct HostStep {
    Batch& b;
    const RunOptions& options;
    std::vector<ExperimentResult>& results;
    NetView view;
    std::vector<int64_t> window_end;   // per experiment, for the step under way
    std::vector<uint32_t> done_count;  // per experiment
    uint64_t step = 0;
    bool finished = false;
    std::exception_ptr error;
    std::vector<uint32_t> bounds;      // thread t processes nodes [bounds[t], bounds[t+1])
    std::vector<uint64_t> work_seen;   // per node: events counted at the last rebalance

    // Contiguous node ranges of equal work: events handled since the last rebalance (plus one per node, so
    // idle nodes still cost something). Any split gives the same results; only the speed differs.
    void rebalance() {
        const size_t threads = bounds.size() - 1, nodes = b.out.size();
        std::vector<uint64_t> weight(nodes);
        uint64_t total = 0;
        for (size_t n = 0; n < nodes; ++n) {
            weight[n] = b.out[n].packets_processed - work_seen[n] + 1;
            work_seen[n] = b.out[n].packets_processed;
            total += weight[n];
        }
        uint64_t acc = 0;
        size_t t = 1;
        for (size_t n = 0; n < nodes && t < threads; ++n) {
            acc += weight[n];
            while (t < threads && acc * threads >= total * t) bounds[t++] = uint32_t(n + 1);
        }
        while (t < threads) bounds[t++] = uint32_t(nodes);
    }

    void prepare() {
        for (size_t e = 0; e < b.experiments.size(); ++e) {
            ExperimentSlice& x = b.experiments[e];
            const ExperimentParams& ep = b.params[e];
            if (x.done) {
                window_end[e] = x.clock;
                continue;
            }
            int64_t end = x.clock + x.lookahead;
            // Never cross a queue-histogram dump time within a step: the snapshot is taken right after it.
            if (ep.qlen_start != kNever && x.clock <= ep.qlen_end) {
                const int64_t next_dump = (x.clock / kDumpInterval) * kDumpInterval + (x.clock % kDumpInterval == 0 ? 0 : kDumpInterval);
                if (next_dump <= ep.qlen_end) end = std::min(end, next_dump + 1);
            }
            if (ep.stop_time != kNever) end = std::min(end, ep.stop_time + 1);
            window_end[e] = end;
        }
    }

    // Nothing but queue-monitor samples happens before `until`: the queues are constant, so count those
    // samples at once instead of stepping through them. Stops at a dump time so its snapshot is taken.
    // Returns the next time anything happens: the next sample still to take, or `until`.
    int64_t skip_idle_samples(size_t e, int64_t next_sample, int64_t until) {
        const ExperimentSlice& x = b.experiments[e];
        const ExperimentParams& ep = b.params[e];
        const int64_t next_dump = (next_sample / kDumpInterval) * kDumpInterval + (next_sample % kDumpInterval == 0 ? 0 : kDumpInterval);
        const int64_t limit = std::min({until, next_dump, ep.qlen_end + 1});
        if (limit <= next_sample) return next_sample;
        const int64_t count = (limit - 1 - next_sample) / ep.qlen_interval + 1;  // samples in [next_sample, limit)
        const int64_t resume = next_sample + count * ep.qlen_interval;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            if (b.node_role[n] != kRoleSwitch || b.sw[n].next_sample != next_sample) continue;
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                uint32_t bytes = 0;
                for (int q = 0; q < kPriorities; ++q) bytes += b.mmu[row].egress_bytes[q];
                const uint32_t bucket = std::min(bytes / 1000, b.qlen_buckets[row] - 1);
                b.qlen_hist[b.qlen_offset[row] + bucket] += uint32_t(count);
            }
            b.sw[n].next_sample = resume > ep.qlen_end ? kNever : resume;
        }
        return resume > ep.qlen_end ? until : std::min(resume, until);
    }

    void snapshot_queues(size_t e, int64_t time) {
        const ExperimentSlice& x = b.experiments[e];
        QueueSnapshot snap;
        snap.time = time;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            if (b.node_role[n] != kRoleSwitch) continue;
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                const uint32_t* h = b.qlen_hist.data() + b.qlen_offset[row];
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

    void run() noexcept {
        try {
            host_step();
        } catch (...) {
            error = std::current_exception();
            finished = true;
        }
    }

    void host_step() {
        for (size_t n = 0; n < b.out.size(); ++n) {
            NodeOutput& o = b.out[n];
            if (o.events_overflow)
                throw std::runtime_error("packet engine capacity exceeded at node " + std::to_string(b.node_fabric_id[n]) + " of experiment " +
                                         b.experiments[b.node_experiment[n]].id + " (flags " + std::to_string(o.events_overflow) +
                                         "): a ring, pool, ACK queue or event buffer was sized too small");
            ExperimentResult& r = results[b.node_experiment[n]];
            for (uint32_t i = 0; i < o.events_count; ++i) {
                PfcEvent ev = b.node_events[o.events_offset + i];
                ev.node = b.node_fabric_id[n];
                r.pfc.push_back(ev);
            }
            o.events_count = 0;
        }
        bool all_done = true;
        for (size_t e = 0; e < b.experiments.size(); ++e) {
            ExperimentSlice& x = b.experiments[e];
            const ExperimentParams& ep = b.params[e];
            if (x.done) continue;
            ++results[e].steps;
            const int64_t end = window_end[e];
            if (ep.qlen_start != kNever && (end - 1) % kDumpInterval == 0 && end - 1 >= ep.qlen_start && end - 1 <= ep.qlen_end)
                snapshot_queues(e, end - 1);
            // Every unconsumed packet was either seen by its receiver (its next event) or sent in this step
            // (its sender's earliest arrival): the next event of the experiment needs no scan of the rings.
            uint32_t done = 0;
            int64_t next = kNever, next_busy = kNever;
            for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
                const NodeOutput& o = b.out[n];
                done += o.completions;
                next = std::min(next, o.next_event);
                next_busy = std::min({next_busy, o.next_busy_event, o.min_sent_arrival});
            }
            done_count[e] = done;
            next = std::min(next, next_busy);
            if (next_busy > end && next < next_busy) next = skip_idle_samples(e, next, next_busy);
            const bool flows_done = done == x.flow_end - x.flow_begin;
            const bool monitor_pending = ep.qlen_start != kNever && end <= ep.qlen_end;
            if ((flows_done && !monitor_pending) || (ep.stop_time != kNever && end > ep.stop_time)) {
                x.done = true;
                int64_t last = 0;
                for (uint32_t f = x.flow_begin; f < x.flow_end; ++f)
                    if (b.qp[f].phase == kDone) last = std::max(last, b.qp[f].finish);
                results[e].end_time = flows_done ? last : ep.stop_time;
                continue;
            }
            if (next == kNever) {
                results[e].stalled = true;
                results[e].end_time = end;
                x.done = true;
                continue;
            }
            x.clock = std::max(end, next);
            all_done = false;
        }
        ++step;
        if (grow_pools(b)) view = b.view();
        if (bounds.size() > 2 && (step & 31) == 0) rebalance();
        if (options.progress && step % 1000 == 0) {
            RunProgress p{step, {}, done_count};
            for (const ExperimentSlice& x : b.experiments) p.clocks.push_back(x.clock);
            options.progress(p);
        }
        if (all_done) {
            finished = true;
            return;
        }
        prepare();
    }
};

}  // namespace

std::vector<ExperimentResult> run_cpu(Batch& b, const RunOptions& options) {
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    const uint32_t nodes = uint32_t(b.node_experiment.size());
    const int threads = std::max(1, std::min<int>(options.threads, int(std::max<uint32_t>(1, nodes))));
    HostStep host{b, options, results, b.view(), std::vector<int64_t>(b.experiments.size()), std::vector<uint32_t>(b.experiments.size(), 0),
                  0, false, nullptr, std::vector<uint32_t>(threads + 1, nodes), std::vector<uint64_t>(nodes, 0)};
    host.bounds[0] = 0;
    // First split by ports, the best guess before any work is measured.
    for (int t = 1; t < threads; ++t)
        host.bounds[t] = uint32_t(std::lower_bound(b.node_port_begin.begin(), b.node_port_begin.begin() + nodes,
                                                   uint32_t(uint64_t(b.port.size()) * t / threads)) - b.node_port_begin.begin());
    host.prepare();
    auto on_step = [&host]() noexcept { host.run(); };
    SpinBarrier sync(threads, on_step);
    auto work = [&](int t) {
        while (!host.finished) {
            NetView v = host.view;
            const uint32_t begin = host.bounds[t], end = host.bounds[t + 1];
            for (uint32_t n = begin; n < end; ++n) {
                StepClock clock{host.step, host.window_end[b.node_experiment[n]]};
                process_node(v, n, clock);
            }
            sync.arrive_and_wait();
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& t : pool) t.join();
    if (host.error) std::rethrow_exception(host.error);

    for (size_t e = 0; e < b.experiments.size(); ++e) {
        const ExperimentSlice& x = b.experiments[e];
        ExperimentResult& r = results[e];
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
            if (b.node_role[n] == kRoleSwitch) r.drops += b.sw[n].drops;
        }
    }
    return results;
}

}  // namespace orrery
