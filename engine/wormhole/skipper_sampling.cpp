// Sampling rates and judging steadiness; after_step, the order of a step's work (skipper.cpp's map).
#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

void Skipper::State::sample(int64_t now) {
    if (ps.size() < parts.id_limit()) ps.resize(parts.id_limit());
    for (uint32_t id = 0; id < parts.id_limit(); ++id) {
        const Partition& part = parts.get(id);
        if (!part.alive) continue;
        PartState& p = state(id);
        if (p.frozen) continue;
        for (uint32_t f : part.flows) {
            window[f].sample(now, b.qp[x.flow_begin + f].snd_una, inflight(x.flow_begin + f), b.qp[x.flow_begin + f].rate);
            ahead[f] = 0;  // it has run at the packet level since: its pipeline is as full as it gets
        }
        if (p.pending) checkpoint(p, now);
        if (++p.fresh < p.fresh_needed || measuring_tail(id)) continue;
        const uint32_t l = window_length(id);
        std::vector<uint32_t> flows;
        std::vector<double> rate;
        bool steady = true;
        double horizon = 1e300;  // ps: how far the rates may be extrapolated (their drift stays within θ)
        for (uint32_t f : part.flows) {
            const double r = window[f].steady_rate(l, x.skipping.theta);
            if (r < 0) {
                steady = false;
                break;
            }
            const double d = std::abs(window[f].drift(l, double(interval), drift_within_noise_is_noise));
            if (d > 0) horizon = std::min(horizon, x.skipping.theta * r / d);
            const double cc = std::abs(window[f].cc_relative_drift(l, double(interval), drift_within_noise_is_noise));
            if (cc > 0) horizon = std::min(horizon, x.skipping.theta / cc);
            flows.push_back(x.flow_begin + f);
            rate.push_back(r);
        }
        if (!steady) continue;
        average_within_classes(id, flows, rate, l);
        if (p.pending) {
            release_followers_steady(id, now, flows, rate, horizon);  // while the leader still counts as measuring
            store_transient(p, id, now, flows, rate);
        }
        if (pfc_touches(port_rows(id))) continue;
        freeze(id, now, flows, rate, 0, std::vector<int64_t>(flows.size(), 0), true, horizon);
    }
}

// Flows the conflict graph cannot tell apart (one Weisfeiler-Lehman colour: the same label and the same
// labelled neighbourhood) whose window means differ by no more than their sampling noise take their common
// mean. At the packet level such flows run in lockstep: a symmetric collective's flows finish together.
// Extrapolated each at its own noisy mean over milliseconds, they finished microseconds apart; the next
// step's flows then started apart, and HPCC, whose multiplicative decrease keeps the ratio of windows,
// held the unequal shares that made for milliseconds (GPT-3 13B: the 16 flows of one all-reduce at 46
// and 81 Gb/s, +50 % FCT, wherever a credit moved by a few bytes; docs/history/wormhole-skipping.md).
void Skipper::State::average_within_classes(uint32_t id, const std::vector<uint32_t>& flows, std::vector<double>& rate, uint32_t l) {
    if (flows.size() < 2 || flows.size() > kMemoMaxFlows) return;
    std::vector<uint32_t> vertex_flows;  // the partition's flows in the order `flows` has them
    const std::vector<uint64_t> colour = vertex_classes(conflict_structure(id, vertex_flows));
    std::map<uint64_t, std::vector<size_t>> classes;
    for (size_t i = 0; i < flows.size(); ++i) classes[colour[i]].push_back(i);
    for (const auto& [c, members] : classes) {
        if (members.size() < 2) continue;
        double lo = 1e300, hi = 0, sum = 0, noise = 0;
        for (size_t i : members) {
            lo = std::min(lo, rate[i]), hi = std::max(hi, rate[i]), sum += rate[i];
            noise = std::max(noise, window[flows[i] - x.flow_begin].standard_error(l));
        }
        if (hi - lo > 4 * noise) continue;  // apart by more than sampling noise: they really differ
        for (size_t i : members) rate[i] = sum / double(members.size());
    }
}

int64_t Skipper::State::after_step(int64_t end, int64_t next, uint32_t done) {
    ++steps_seen;
    thaw(end);
    // Releases: a flow that will cross a frozen partition before its skip ends cuts the skip back.
    std::vector<uint32_t>& released = b.released[e];
    for (uint32_t f : released) {
        const int64_t start = b.flow[f].start;
        upcoming.push_back({start, f});
        std::push_heap(upcoming.begin(), upcoming.end(), std::greater<>());
        for (uint32_t port : ports_of(f)) {
            const uint32_t id = parts.of_port(port);
            if (id != kNoPartition && state(id).frozen && state(id).t_end > start) {
                cut_back(id, start, end);
                next = std::min(next, state(id).t_end);
            }
        }
    }
    released.clear();
    thaw(end);  // a skip cut back to now has ended
    // Flows that started in the step.
    std::vector<uint32_t> merged;
    while (!upcoming.empty() && upcoming.front().first < end) {
        std::pop_heap(upcoming.begin(), upcoming.end(), std::greater<>());
        const uint32_t f = upcoming.back().second;
        upcoming.pop_back();
        const uint32_t local = f - x.flow_begin;
        for (uint32_t port : ports_of(f)) {
            const uint32_t id = parts.of_port(port);
            if (id != kNoPartition && state(id).frozen) cut_back(id, end, end);  // cannot happen: skips end at known starts
        }
        thaw(end);
        window.open(local);
        const uint32_t id = parts.add_flow(local, flow_ports[local], merged);
        for (uint32_t g : parts.get(id).flows) recording.drop(x.flow_begin + g);  // its tail is no longer the one keyed
        host_active[b.flow[f].src - x.node_begin].push_back(f);
        changed(id, end);
        // The settle counts from the flow's start, not from this step's end: how long after its start the key
        // is taken then no longer depends on where the steps happened to end (MoE 8x13B DCQCN: 50.5 M -> 35.2 M
        // events, per-flow FCT error 0.50 % -> 0.46 % mean; docs/history/wormhole-skipping.md).
        state(id).changed_at = b.flow[f].start;
    }
    // Flows that finished in the step.
    if (done != done_seen) {
        done_seen = done;
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
            if (b.out[n].completions == completions_seen[n - x.node_begin]) continue;
            completions_seen[n - x.node_begin] = b.out[n].completions;
            std::vector<uint32_t>& active = host_active[n - x.node_begin];
            for (size_t i = 0; i < active.size();) {
                const uint32_t f = active[i];
                if (b.qp[f].phase != kDone) {
                    ++i;
                    continue;
                }
                active[i] = active.back();
                active.pop_back();
                const uint32_t local = f - x.flow_begin;
                store_completion(parts.of_flow(local));
                if (std::optional<MemoEntry> tail = recording.finished(f, b.qp[f].finish)) {
                    ++report.tails_measured;
                    const int64_t tolerance = tail_agreement_ps(tail->transient_ps);
                    tails.add(std::move(*tail), tolerance);
                }
                for (uint32_t id : parts.remove_flow(local, flow_ports[local])) changed(id, end, true);
                window.close(local);
            }
        }
    }
    for (uint32_t id : thawed_in_tail) {
        PartState& p = state(id);
        if (!parts.get(id).alive || p.frozen || !p.ends_in_tail) continue;
        p.ends_in_tail = false;
        finish_tail(id, end);
    }
    thawed_in_tail.clear();
    // Memo lookups of partitions whose membership has held for one round trip (flows of one collective
    // step start within a few microseconds of each other: the key is taken once they all have).
    for (size_t i = 0; i < to_probe.size();) {
        const uint32_t id = to_probe[i];
        PartState& p = state(id);
        if (!parts.get(id).alive || p.probed || p.frozen) {
            to_probe[i] = to_probe.back();
            to_probe.pop_back();
            continue;
        }
        if (end - p.changed_at < settle) {
            ++i;
            continue;
        }
        to_probe[i] = to_probe.back();
        to_probe.pop_back();
        probe(id, end);
    }
    if (end >= next_sample) {
        sample(end);
        next_sample = end + interval;
    }
    settle_followers(end, next);
    next = std::min(next, resume_hint);
    resume_hint = kNever;
    return wake(next);
}

// The experiment's next event moved before the end of the earliest completion skip: a step must end
// exactly there (the runner's window stops at completion_due()), so its flows finish before anything
// after them is handled.
int64_t Skipper::State::wake(int64_t next) const {
    const int64_t due = completion_due();
    return due == kNever ? next : std::min(next, due - 1);
}

}  // namespace orrery::wormhole
