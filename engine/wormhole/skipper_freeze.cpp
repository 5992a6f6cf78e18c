// Freezing a partition: its skip's length and credits, the shift, cut-backs (a release that touches it) and thaws.
#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

void Skipper::State::apply_shift(PartState& p, uint32_t id, int64_t dt, const std::vector<int64_t>& delta) {
    const std::vector<uint32_t> rows = port_rows(id);
    const ShiftPlan plan{&rows, &p.flows, &delta, dt};
    shift_partition(b, e, plan, scratch);
}

uint64_t Skipper::State::events_estimate(const std::vector<uint32_t>& flows, const std::vector<int64_t>& credit) {
    uint64_t events = 0;
    for (size_t i = 0; i < flows.size(); ++i) events += uint64_t(credit[i] / ep.mtu) * 2 * ports_of(flows[i]).size();
    return events;
}

void Skipper::State::record_skip(PartState& p, uint32_t id, bool from_memo) {
    SkipRecord r;
    r.partition = id;
    r.flows = uint32_t(p.flows.size());
    r.start_ps = p.t0;
    r.end_ps = p.t_end;
    std::vector<int64_t> bytes = p.credit;
    // A completion skip credits each flow everything it had left.
    if (p.completes)
        for (size_t i = 0; i < p.flows.size(); ++i) bytes[i] += int64_t(b.flow[p.flows[i]].size - b.qp[p.flows[i]].snd_una);
    for (int64_t c : bytes) r.bytes += uint64_t(c);
    r.events_saved = events_estimate(p.flows, bytes);
    r.completes = p.completes;
    r.from_memo = from_memo;
    report.bytes_credited += r.bytes;
    report.events_saved += r.events_saved;
    p.record = report.skips.size();
    report.skips.push_back(r);
}

// Freezes partition `id` at `now` for its flows at `rate` (bytes/ps), after `transient` (a memoized
// transient of `base` bytes per flow, or none). Returns whether it froze.
bool Skipper::State::freeze(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient,
            const std::vector<int64_t>& base, bool extend_steady, double horizon) {
    double steady_ps = extend_steady ? 1e300 : 0.0;
    for (size_t i = 0; i < flows.size() && extend_steady; ++i) {
        const QpState& q = b.qp[flows[i]];
        const double remaining = double(b.flow[flows[i]].size - q.snd_una) - double(base[i]);
        // The skip ends with the flow's bytes in flight and one more credit unit still to send, so its
        // last packets and acknowledgements are simulated packet by packet. (A further round trip of data,
        // as before, doubled the events left in GPT-3 13B: bench_skip, docs/history/wormhole-skipping.md.)
        const double margin = double(q.snd_nxt - q.snd_una) + double(unit);
        steady_ps = std::min(steady_ps, remaining > margin ? (remaining - margin) / rate[i] : 0.0);
    }
    const int64_t limit = skip_limit(id);
    // A rate still drifting is extrapolated only as far as its drift stays within θ of it.
    double total = double(transient) + std::min(steady_ps, horizon);
    if (limit != kNever) total = std::min(total, double(limit - now));
    // A partition whose flows all finish together is frozen to their ends (a completion skip), else until
    // its first flow is in its tail.
    std::vector<int64_t> fin;
    const bool completes = extend_steady && completes_together(flows, rate, transient, base, horizon, limit, now, fin);
    if (!completes && (total < double(transient) || total < 2.0 * double(rtt) || total > 9e18)) return false;
    PartState& p = state(id);
    p.frozen = true;
    p.t0 = now;
    p.steady_from = now + transient;
    p.flows = flows;
    p.rate = rate;
    p.round_ps.resize(flows.size());
    for (size_t i = 0; i < flows.size(); ++i) p.round_ps[i] = rate[i] > 0 ? double(inflight(flows[i])) / rate[i] : 0.0;
    p.base_credit = base;
    if (completes) {
        freeze_to_completion(id, std::move(fin), transient > 0);
        return true;
    }
    p.completes = false;
    p.room.clear();
    p.ends_on_drift = horizon < steady_ps && (limit == kNever || double(limit - now) > total);
    p.ends_in_tail = extend_steady && steady_ps <= horizon && (limit == kNever || double(limit - now) > total);
    p.dt = int64_t(total) / 1000 * 1000;
    p.t_end = now + p.dt;
    p.credit = credits(p, p.dt);
    start_skip(p, id, transient > 0);
    return true;
}

// The rest of a completion skip of partition `id`, whose PartState has its flows, rates, base credits, t0
// and steady_from: each flow finishes at its `fin` (ps), the partition's packets leave at the last.
void Skipper::State::freeze_to_completion(uint32_t id, std::vector<int64_t> fin, bool from_memo) {
    PartState& p = state(id);
    p.completes = true;
    p.ends_on_drift = false;
    p.ends_in_tail = false;
    p.fin = std::move(fin);
    p.t_end = *std::max_element(p.fin.begin(), p.fin.end());
    p.room.clear();
    for (uint32_t f : p.flows) p.room.push_back(std::max<int64_t>(0, int64_t(b.flow[f].size - b.qp[f].snd_nxt) - unit));
    p.credit = credits(p, p.t_end - p.t0);
    p.dt = kOpenEnded;
    ++report.completion_skips;
    start_skip(p, id, from_memo);
}

void Skipper::State::start_skip(PartState& p, uint32_t id, bool from_memo) {
    for (uint32_t f : p.flows) recording.drop(f);  // a tail being measured is no longer the packet level's
    apply_shift(p, id, p.dt, p.credit);
    frozen.push_back(id);
    record_skip(p, id, from_memo);
}

// What flow `f` still has to get acknowledged after `base` bytes of a replayed transient. Its count
// climbs an ACK (a packet) at a time: flows whose counts read the same at the freeze finish together, up
// to a packet's time from the packet level's order. Tried and not kept (docs/history/wormhole-skipping.md,
// "Completion skips"): half a packet off each count, and placing each flow within its ACK cycle from its
// last samples' counts. GPT-3 13B's errors were the same either way and TIMELY handled 7.2-7.4 M events
// instead of 5.3 M.
double Skipper::State::bytes_to_finish(uint32_t f, int64_t base) const {
    const uint32_t local = f - x.flow_begin;
    return double(b.flow[f].size - b.qp[f].snd_una) - double(base) - double(carry[local]) + double(ahead[local]);
}

// Whether every flow of a partition about to freeze finishes, at its steady rate after the transient,
// within a sampling interval of the others, before anything known touches the partition and while the
// rates' drift stays within θ. `fin` gets each flow's finish (ps): when its rate brings the bytes it
// has acknowledged to its size. The partition's last round trip is then not played: in lockstep flows
// (a collective step's) the bottleneck drains at the rate it served them, so the last ACKs keep coming
// at that rate until the last byte.
bool Skipper::State::completes_together(const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient, const std::vector<int64_t>& base,
                        double horizon, int64_t limit, int64_t now, std::vector<int64_t>& fin) const {
    if (flows.size() > kCompletionSkipMaxFlows) return false;
    double first = 1e300, last = 0;
    std::vector<double> at(flows.size());  // ps from now
    for (size_t i = 0; i < flows.size(); ++i) {
        if (!(rate[i] > 0)) return false;
        const double steady = std::max(0.0, bytes_to_finish(flows[i], base[i])) / rate[i];
        if (steady > horizon) return false;
        at[i] = double(transient) + steady;
        first = std::min(first, at[i]), last = std::max(last, at[i]);
    }
    // Together: within a sampling interval. (Within 0.1 % of the skip or two ACKs of the slowest flow, as
    // tried for MoE 32x22B's short all-to-alls, left 89 of GPT-3 13B's HPCC partitions to play their
    // tails while the same collective's other partitions finished at once: 1 % of flows then ended more
    // than 10 % off, up to 50 %, docs/history/wormhole-skipping.md.)
    if (last - first > double(interval) || last < 2.0 * double(rtt) || last > 9e18) return false;
    const int64_t end = now + (int64_t(std::ceil(last)) + 999) / 1000 * 1000;
    if (limit != kNever && end >= limit) return false;
    fin.clear();
    for (double t : at) fin.push_back(std::min(end, now + int64_t(std::llround(t))));
    return true;
}

// Whole credit units per flow for a skip of `dt`; what is left over (`p.remainder`) is owed to the flow's
// next credit, so that flooring at every skip does not make a flow late by half a unit each time.
std::vector<int64_t> Skipper::State::credits(PartState& p, int64_t dt) const {
    std::vector<int64_t> c(p.flows.size());
    p.remainder.assign(p.flows.size(), 0);
    const double steady = double(std::max<int64_t>(0, p.t0 + dt - p.steady_from));
    // Inside a memoized transient the flows are credited its bytes in proportion to the time elapsed.
    const double transient_share = p.steady_from > p.t0 ? std::min(1.0, double(dt) / double(p.steady_from - p.t0)) : 1.0;
    for (size_t i = 0; i < p.flows.size(); ++i) {
        const int64_t bytes = (p.t0 + dt >= p.steady_from ? p.base_credit[i] + int64_t(p.rate[i] * steady) : int64_t(double(p.base_credit[i]) * transient_share)) +
                              carry[p.flows[i] - x.flow_begin];
        c[i] = bytes / unit * unit;
        // A completion skip cut back resumes its flows at the packet level: each keeps its last bytes.
        if (!p.room.empty() && c[i] > p.room[i]) {
            c[i] = p.room[i] / unit * unit;
            p.remainder[i] = 0;
        } else {
            p.remainder[i] = bytes - c[i];
        }
    }
    return c;
}

// A flow starting at `start` touches frozen partition `id`: its skip now ends at `start`.
void Skipper::State::cut_back(uint32_t id, int64_t start, int64_t now) {
    PartState& p = state(id);
    if (!p.frozen || p.t_end <= start) return;
    if (p.follower) return mirror(id, now);
    resume_at(id, start);
}

// Frozen partition `id` resumes at `start` (or the next whole ns), its flows credited what their rates
// gave them until then.
void Skipper::State::resume_at(uint32_t id, int64_t start) {
    PartState& p = state(id);
    const int64_t dt = std::max<int64_t>(0, (start - p.t0 + 999) / 1000 * 1000);  // resume at or after `start`, never before
    std::vector<int64_t> c = credits(p, dt);
    std::vector<int64_t> delta(c.size());
    for (size_t i = 0; i < c.size(); ++i) delta[i] = c[i] - p.credit[i];
    apply_shift(p, id, dt - p.dt, delta);
    if (p.completes) --report.completion_skips;
    p.completes = false;
    p.ends_in_tail = false;
    SkipRecord& r = report.skips[p.record];
    r.completes = false;
    report.bytes_credited -= r.bytes;
    report.events_saved -= r.events_saved;
    p.dt = dt;
    p.t_end = p.t0 + dt;
    p.credit = c;
    r.end_ps = p.t_end;
    r.bytes = 0;
    for (int64_t v : c) r.bytes += uint64_t(v);
    r.events_saved = events_estimate(p.flows, c);
    report.bytes_credited += r.bytes;
    report.events_saved += r.events_saved;
}

void Skipper::State::thaw(int64_t now) {
    for (size_t i = 0; i < frozen.size();) {
        PartState& p = state(frozen[i]);
        if (p.t_end > now || p.completes) {
            ++i;
            continue;
        }
        const uint32_t id = frozen[i];
        p.frozen = false;
        frozen.erase(frozen.begin() + long(i));
        if (p.ends_in_tail) thawed_in_tail.push_back(id);
        // The CC state the flows froze with (or a replay put in) is that of the skip's steady start; HPCC's
        // rate kept falling meanwhile at the packet level (age_hpcc_through_steady, cc_snapshot.h).
        if (ep.cc_mode == kHpcc && p.round_ps.size() == p.flows.size()) {
            const double steady_ps = double(p.t_end - std::max(p.t0, p.steady_from));
            const double wire_per_byte = 8e12 * double(ep.mtu + net::kDataHeaderBytes) / double(ep.mtu);  // bit/s per byte/ps of payload
            for (size_t k = 0; k < p.flows.size(); ++k)
                age_hpcc_through_steady(b, p.flows[k], steady_ps, p.round_ps[k], p.rate[k] * wire_per_byte, x.skipping.theta);
        }
        for (size_t k = 0; k < p.remainder.size(); ++k) carry[p.flows[k] - x.flow_begin] = p.remainder[k];
        if (p.ends_on_drift && keep_windows_after_drift) {
            // The credited bytes are not a rate the flows had: the next sample counts from now.
            p.fresh = 0;
            p.fresh_needed = kFreshSamples;
            for (uint32_t f : parts.get(id).flows) window[f].restart_interval(now, b.qp[x.flow_begin + f].snd_una);
        } else {
            reset_windows(id, now);
        }
    }
}

}  // namespace orrery::wormhole
