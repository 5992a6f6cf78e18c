// Map: Stepper::host_step (after every step) → per experiment: summary from the backend → queue snapshot
// → sample → idle-sample skip → driver → skipper → finish or move the clock → prepare (the next windows).
// Every hook that reads or writes the tables first pulls the experiment's rows (once per step), and they
// are pushed back after its hooks ran: on the CPU backend both do nothing.
#include "runtime/stepper.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "wormhole/skipper.h"

namespace orrery {
namespace {

using namespace net;

constexpr int64_t kDumpInterval = 100'000'000'000;  // ps: the reference writes queue histograms every 100 ms

// The first queue-histogram dump time at or after t.
int64_t next_dump_at(int64_t t) { return (t + kDumpInterval - 1) / kDumpInterval * kDumpInterval; }

void finish_experiment(Batch& b, uint32_t e, ExperimentResult& r) {
    const ExperimentSlice& x = b.experiments[e];
    for (uint32_t f = x.flow_begin; f < x.flow_end; ++f) {
        const QpRecovery& q = b.recovery[f];
        r.flows.push_back({f, b.qp[f].phase == kDone ? b.qp[f].finish : kNever, q.timeouts, q.retransmits});
        r.timeouts += q.timeouts;
        r.retransmits += q.retransmits;
    }
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
        r.sent_into_failures += b.out[n].sent_into_failures;
        r.node_steps_rested += b.out[n].steps_rested;
        if (b.node_role[n] == kRoleSwitch) r.drops += b.sw[n].drops;
    }
    r.lost_to_failures = x.lost_to_failures + r.sent_into_failures;
    r.fabric_events = x.fabric_events;
}

}  // namespace

StepSummary summarize_nodes(const Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    StepSummary s;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) s = merge_summaries(s, node_summary(b.out[n], n));
    return s;
}

Stepper::Stepper(Batch& batch, StepBackend& be, std::vector<ExperimentResult>& r, std::vector<uint32_t> experiments, const RunOptions* o)
    : b(batch), backend(be), results(r), exps(std::move(experiments)), options(o),
      window_end(batch.experiments.size(), 0), done_count(batch.experiments.size(), 0), next_sample(batch.experiments.size(), kNever),
      own_next(batch.experiments.size(), kNever) {
    skippers.resize(batch.experiments.size());
    node_begin = b.experiments[exps.front()].node_begin;
    node_end = b.experiments[exps.back()].node_end;
    for (uint32_t e : exps) {
        const int64_t interval = b.params[e].sample_interval;
        if (interval != kNever && interval > 0) next_sample[e] = (b.experiments[e].clock / interval + 1) * interval;
        if (options && options->on_experiment_start && !b.experiments[e].done) options->on_experiment_start(e);
        if (options && options->drive && !b.experiments[e].done) own_next[e] = options->drive(e, b.experiments[e].clock, 0).next_own;
        // What ran before the first step (the driver's first releases, a batch run before) is the host's.
        for (uint32_t n = b.experiments[e].node_begin; n < b.experiments[e].node_end; ++n) mark_host_wrote(b, n);
        if (b.experiments[e].skipping.enabled && !b.experiments[e].done)
            skippers[e] = std::make_unique<wormhole::Skipper>(b, e, options ? options->memo_for(e) : nullptr);
    }
    prepare();
}

void Stepper::prepare() {
    for (uint32_t e : exps) {
        ExperimentSlice& x = b.experiments[e];
        const ExperimentParams& ep = b.params[e];
        if (x.done) {
            window_end[e] = x.clock;
            continue;
        }
        int64_t end = x.clock + x.lookahead;
        if (ep.qlen_start != kNever && end > ep.qlen_start && x.clock <= ep.qlen_end && b.qlen_hist[e].empty()) {
            allocate_queue_monitor(b, e);
            backend.monitor_allocated(e);
        }
        // Never cross a queue-histogram dump time within a step: the snapshot is taken right after it.
        if (ep.qlen_start != kNever && x.clock <= ep.qlen_end) {
            const int64_t next_dump = next_dump_at(x.clock);
            if (next_dump <= ep.qlen_end) end = std::min(end, next_dump + 1);
        }
        if (ep.stop_time != kNever) end = std::min(end, ep.stop_time + 1);
        if (next_sample[e] != kNever) end = std::min(end, next_sample[e] + 1);  // a sample sees every event up to its time
        if (own_next[e] != kNever) end = std::min(end, own_next[e]);  // the driver's event starts the next step
        if (x.next_change < x.changes.size()) end = std::min(end, std::max(x.changes[x.next_change].at, x.clock + 1));  // a fabric event ends a step
        if (skippers[e]) {
            const int64_t due = skippers[e]->completion_due();  // a completion skip's flows finish at a step's end
            if (due != kNever && due > x.clock) end = std::min(end, due);
        }
        window_end[e] = end;
    }
}

// Nothing but queue-monitor samples happens before `until`: the queues are constant, so count those
// samples at once instead of stepping through them. Stops at a dump time so its snapshot is taken.
// Returns the next time anything happens: the next sample still to take, or `until`.
int64_t Stepper::skip_idle_samples(uint32_t e, int64_t next_sample_time, int64_t until) {
    const ExperimentSlice& x = b.experiments[e];
    const ExperimentParams& ep = b.params[e];
    const int64_t limit = std::min({until, next_dump_at(next_sample_time), ep.qlen_end + 1});
    if (limit <= next_sample_time) return next_sample_time;
    if (b.qlen_hist[e].empty()) {
        allocate_queue_monitor(b, e);
        backend.monitor_allocated(e);
    }
    const int64_t count = (limit - 1 - next_sample_time) / ep.qlen_interval + 1;  // samples in [next_sample, limit)
    const int64_t resume = next_sample_time + count * ep.qlen_interval;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
        if (b.node_role[n] != kRoleSwitch || b.sw[n].next_sample != next_sample_time) continue;
        for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
            const uint32_t bucket = std::min(egress_bytes_total(b.mmu[row]) / 1000, b.qlen_buckets[row] - 1);
            b.qlen_hist[e][b.qlen_offset[row] + bucket] += uint32_t(count);
        }
        b.sw[n].next_sample = resume > ep.qlen_end ? kNever : resume;
        mark_host_wrote(b, n);
    }
    return resume > ep.qlen_end ? until : std::min(resume, until);
}

void Stepper::snapshot_queues(uint32_t e, int64_t time) {
    const ExperimentSlice& x = b.experiments[e];
    QueueSnapshot snap;
    snap.time = time;
    for (uint32_t n = x.node_begin; n < x.node_end && !b.qlen_hist[e].empty(); ++n) {
        if (b.node_role[n] != kRoleSwitch) continue;
        // A switch samples all its ports at once (switch_sample_queues, skip_idle_samples), so every port's
        // histogram holds the same number of samples: its first port's, counted in full; the others are read
        // only up to the bucket where that count is reached, not through every KB of the buffer (untouched
        // buckets are pages never written: zeroed_counts.h).
        uint64_t samples = 0;
        for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
            const uint32_t* h = b.qlen_hist[e].data() + b.qlen_offset[row];
            const bool first_port = row == b.node_port_begin[n];
            uint32_t last = 0;
            bool any = false;
            uint64_t seen = 0;
            for (uint32_t i = 0; i < b.qlen_buckets[row] && (first_port || seen < samples); ++i)
                if (h[i]) last = i, any = true, seen += h[i];
            if (first_port) samples = seen;
            if (!any) continue;
            snap.ports.push_back({b.node_fabric_id[n], uint32_t(b.port[row].local + 1), std::vector<uint32_t>(h, h + last + 1)});
        }
    }
    results[e].queues.push_back(std::move(snap));
}

// The experiment's tables are on the host (pulled with packets).
void Stepper::finish(uint32_t e, int64_t end_time, bool stalled, bool cancelled) {
    b.experiments[e].done = true;
    ExperimentResult& r = results[e];
    if (skippers[e]) r.skipping = skippers[e]->take_report();
    r.end_time = end_time;
    r.stalled = stalled;
    r.cancelled = cancelled;
    finish_experiment(b, e, r);
    if (options && options->on_experiment_done) options->on_experiment_done(e, r);
    backend.release(e);  // the next experiments of a sweep reuse its blocks
}

void Stepper::run() noexcept {
    try {
        host_step();
    } catch (...) {
        error = std::current_exception();
        finished = true;
    }
}

void Stepper::host_step() {
    const uint64_t events = gather_summaries();
    const bool was_split = backend.split_last_step();
    const bool was_streamed = backend.streamed_last_step();
    backend.stepped(events);
    bool all_done = true;
    const bool cancelled = options && options->cancel && options->cancel->load(std::memory_order_relaxed);
    for (size_t i = 0; i < exps.size(); ++i)
        if (!b.experiments[exps[i]].done && after_step(i, was_split, was_streamed, cancelled)) all_done = false;
    ++step;
    report_progress();
    if (all_done) {
        finished = true;
        return;
    }
    prepare();
}

uint64_t Stepper::gather_summaries() {
    summaries.resize(exps.size());
    uint64_t events = 0, pfc_in_flight = 0;
    for (size_t i = 0; i < exps.size(); ++i) {
        const StepSummary& s = summaries[i] = backend.summary(exps[i]);
        events += s.events;
        pfc_in_flight += s.pfc_in_flight;
        if (s.overflow & 1u) throw std::logic_error("a PFC event log was sized below the pause frames in flight");
        if (s.overflow)
            throw std::runtime_error("packet storage exhausted at node " + std::to_string(b.node_fabric_id[s.overflow_node]) + " of experiment " +
                                     b.experiments[exps[i]].id + ": " +
                                     std::to_string(b.arena->committed_blocks() * b.arena->bytes_per_block() >> 20) +
                                     " MiB of packets in flight and queued, as much as this machine's memory holds");
    }
    pfc_drained.clear();
    backend.drain_pfc(pfc_drained);
    for (const PfcEvent& ev : pfc_drained) results[b.node_experiment[ev.node]].pfc.push_back({ev.time, b.node_fabric_id[ev.node], ev.ifindex, ev.node_type, ev.pause});
    // The frames the next step can receive were all sent before it starts.
    backend.size_pfc_logs(pfc_in_flight + 8);
    return events;
}

bool Stepper::after_step(size_t i, bool was_split, bool was_streamed, bool cancelled) {
    const uint32_t e = exps[i];
    ExperimentSlice& x = b.experiments[e];
    const ExperimentParams& ep = b.params[e];
    bool pulled = false, pulled_packets = false;
    auto tables = [&](bool packets) {
        if (pulled && (pulled_packets || !packets)) return;
        backend.pull(e, packets);
        pulled = true;
        pulled_packets = pulled_packets || packets;
    };
    if (cancelled) {
        tables(true);
        finish(e, window_end[e], false, true);
        return false;
    }
    ++results[e].steps;
    if (was_split) ++results[e].split_steps;
    if (was_streamed) ++results[e].streamed_steps;
    const int64_t end = window_end[e];
    if (ep.qlen_start != kNever && (end - 1) % kDumpInterval == 0 && end - 1 >= ep.qlen_start && end - 1 <= ep.qlen_end) {
        tables(false);
        snapshot_queues(e, end - 1);
    }
    if (next_sample[e] == end - 1) {
        if (options && options->on_sample) {
            tables(false);
            options->on_sample(e, end - 1);
        }
        next_sample[e] += ep.sample_interval;
    }
    // Every unconsumed packet was either seen by its receiver (its next event) or sent in this step
    // (its sender's earliest arrival): the next event of the experiment needs no scan of the rings.
    const StepSummary& s = summaries[i];
    uint32_t done = s.completions;
    x.peak_blocks = std::max(x.peak_blocks, s.blocks_held);
    int64_t next = std::min(s.next_event, s.next_busy);
    if (s.next_busy > end && next < s.next_busy) {
        tables(false);
        next = skip_idle_samples(e, next, s.next_busy);
    }
    if (skippers[e]) {
        // Completion skips ending by now finish their flows before the driver takes this step's completions.
        if (skippers[e]->completion_due() <= end) {
            tables(true);
            backend.with_block_cache(e, [&](BlockCache& cache) { done += skippers[e]->complete_due(end, cache); });
        }
        next = skippers[e]->wake(next);
    }
    if (x.next_change < x.changes.size() && x.changes[x.next_change].at <= end) {
        tables(true);
        backend.with_block_cache(e, [&](BlockCache& cache) { x.lost_to_failures += apply_fabric_changes(b, e, end, cache); });
        next = std::min(next, end);  // what the change touched looks again in the next step
    }
    if (x.next_change < x.changes.size()) next = std::min(next, x.changes[x.next_change].at);
    done_count[e] = done;
    bool flows_done = done == x.flow_end - x.flow_begin;
    if (options && options->drive) {
        tables(false);
        next = drive(e, end, next, done, flows_done);
    }
    if (skippers[e] && !flows_done) {
        tables(true);
        next = skippers[e]->after_step(end, next, done);
    }
    const bool monitor_pending = ep.qlen_start != kNever && end <= ep.qlen_end;
    if ((flows_done && !monitor_pending) || (ep.stop_time != kNever && end > ep.stop_time)) {
        tables(true);
        int64_t last = 0;
        for (uint32_t f = x.flow_begin; f < x.flow_end; ++f)
            if (b.qp[f].phase == kDone) last = std::max(last, b.qp[f].finish);
        finish(e, flows_done ? last : ep.stop_time, false);
        return false;
    }
    if (next == kNever) {
        tables(true);
        finish(e, end, true);
        return false;
    }
    if (pulled) backend.push(e);
    x.clock = std::max(end, next);
    // Idle stretches produce no samples: the next one is the first at or after the new clock.
    if (next_sample[e] != kNever && next_sample[e] < x.clock)
        next_sample[e] = (x.clock + ep.sample_interval - 1) / ep.sample_interval * ep.sample_interval;
    return true;
}

int64_t Stepper::drive(uint32_t e, int64_t end, int64_t next, uint32_t done, bool& flows_done) {
    int64_t now = end;
    for (;;) {
        const DriverStatus st = options->drive(e, now, done);
        own_next[e] = st.next_own;
        flows_done = st.finished;
        const int64_t candidate = std::max(end, std::min({next, st.next_own, st.next_release}));
        if (flows_done || candidate != st.next_own || candidate <= now) return std::min({next, st.next_own, st.next_release});
        now = candidate;
    }
}

void Stepper::report_progress() {
    if (options && options->on_progress && step % 1000 == 0)
        for (uint32_t e : exps)
            if (!b.experiments[e].done) options->on_progress(e, b.experiments[e].clock, done_count[e]);
    if (options && options->progress && exps.size() == b.experiments.size() && step % 1000 == 0) {
        RunProgress p{step, {}, done_count};
        for (const ExperimentSlice& x : b.experiments) p.clocks.push_back(x.clock);
        options->progress(p);
    }
}

}  // namespace orrery
