// Memo lookups, replays and stores; followers that wait on a leader's measurement and are mirrored from it.
#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

// A port's facts for the memo context: its rate and, at a switch, its ECN thresholds (fixed for the run).
const std::string& Skipper::State::port_fact(uint32_t p) {
    std::string& fact = port_facts[p];
    if (fact.empty()) {
        const uint32_t row = x.port_begin + p;
        std::ostringstream out;
        out << b.port[row].rate_bps;
        if (b.node_role[b.port[row].node] == kRoleSwitch) out << ":" << b.mmu[row].kmin << ":" << b.mmu[row].kmax << ":" << b.mmu[row].pmax;
        fact = out.str();
    }
    return fact;
}

// A partition's flows as labelled vertices and the ports they share as weighted edges: the conflict graph
// without its context or hash (what telling its flows apart needs).
FlowConflictGraph Skipper::State::conflict_structure(uint32_t id, std::vector<uint32_t>& vertex_flows) {
    const Partition& part = parts.get(id);
    FlowConflictGraph g;
    g.labels.reserve(part.flows.size());
    vertex_flows.reserve(part.flows.size());
    for (uint32_t f : part.flows) {
        const uint32_t row = x.flow_begin + f;
        const QpState& q = b.qp[row];
        const FlowInfo& info = b.flow[row];
        g.labels.push_back(vertex_label(q.max_rate ? double(q.rate) / double(q.max_rate) : 0.0, info.size - q.snd_una, x.max_bdp, info.base_rtt_ns,
                                        awaiting_first_feedback(row)));
        vertex_flows.push_back(row);
    }
    PartState& p = state(id);
    // A probe, a tail or a steady verdict since the last change may have found them already.
    if (!p.edges) p.edges = conflict_edges(edges_by_shape, parts, part, flow_ports, flow_data_ports);
    g.edges = *p.edges;
    return g;
}

FlowConflictGraph Skipper::State::conflict_graph(uint32_t id, std::vector<uint32_t>& vertex_flows) {
    const Partition& part = parts.get(id);
    FlowConflictGraph g = conflict_structure(id, vertex_flows);
    std::vector<const std::string*> facts;
    for (uint32_t p : part.ports) facts.push_back(&port_fact(p));
    std::sort(facts.begin(), facts.end(), [](const std::string* l, const std::string* r) { return *l < *r; });
    g.context = cc_context + " ports";
    for (const std::string* f : facts) g.context += " " + *f;
    finish_graph(g, graph_hashes);
    return g;
}

void Skipper::State::probe(uint32_t id, int64_t now) {
    PartState& p = state(id);
    p.probed = true;
    const Partition& part = parts.get(id);
    if (part.flows.size() > kMemoMaxFlows) return;
    std::vector<uint32_t> vertex_flows;
    FlowConflictGraph g = conflict_graph(id, vertex_flows);
    std::vector<uint32_t> mapping;
    // A partition whose tail is being measured takes no replay (it would end the measurement); a miss
    // measures it at the packet level as it would anyway, and identical partitions may follow it.
    const bool tail = measuring_tail(id);
    const MemoEntry* hit = shared && !tail ? shared->find(g, mapping) : nullptr;
    if (!hit && !tail) hit = own.find(g, mapping);
    MemoRecord rec{now, id, uint32_t(part.flows.size()), MemoRecord::kMiss};
    if (hit) {
        // The stored flow i is our flow vertex_flows[mapping[i]]; every flow must outlast the transient.
        std::vector<uint32_t> flows(vertex_flows.size());
        std::vector<double> rate(vertex_flows.size());
        std::vector<int64_t> base(vertex_flows.size());
        bool usable = true;
        const int64_t transient = replayed_length(*hit);
        if (!long_enough_to_replay(*hit)) usable = false;
        std::vector<double> unplayed(mapping.size(), 0.0);
        for (size_t i = 0; i < mapping.size(); ++i) {
            const uint32_t f = vertex_flows[mapping[i]];
            flows[i] = f;
            rate[i] = hit->end_rate[i];
            const QpState& q = b.qp[f];
            // The replay leaves the flow's packets in flight as they were at the key, so it resumes as far
            // as the original had *sent* only if the credit also holds the difference between the
            // original's bytes in flight at its end and the flow's own now (pipeline_refill).
            const double own_inflight = double(inflight(f));
            const double refill = pipeline_refill(double(hit->end_inflight[i]), own_inflight, hit->end_rate[i] * base_rtt_ps(f));
            unplayed[i] = std::max(0.0, double(hit->end_inflight[i]) - own_inflight - refill);
            const double gap = key_inflight_credit(q.snd_una, hit->key_acked[i], own_inflight, double(hit->key_inflight[i]), double(q.rate) / 8e12, hit->end_rate[i]);
            base[i] = std::max<int64_t>(0, int64_t(double(hit->bytes[i]) + refill + gap));  // credits() takes whole units of it and carries the rest
            ahead[f - x.flow_begin] = int64_t(refill);
            if (b.flow[f].size - q.snd_una <= uint64_t(base[i]) + (q.snd_nxt - q.snd_una) + uint64_t(unit)) usable = false;
        }
        if (usable && leaves_a_signalling_queue_out(flows, unplayed)) usable = false;
        if (usable && freeze(id, now, flows, rate, transient, base, hit->ends_steady)) {
            // Each flow resumes with its stored counterpart's congestion control as it stood at the
            // transient's end (cc_snapshot.h: the rate alone held cut DCQCN flows for milliseconds). A
            // skip cut back inside the transient keeps that state too: the flows have been through the
            // contention it describes.
            for (size_t i = 0; i < flows.size(); ++i) put_cc_snapshot(b, flows[i], hit->end_cc[i], state(id).t_end);
            // Its flows hold the bytes in flight of the key, not of the stored steady state.
            for (size_t i = 0; i < flows.size(); ++i)
                if (rate[i] > 0) state(id).round_ps[i] = double(hit->end_inflight[i]) / rate[i];
            rec.kind = MemoRecord::kHit;
            ++report.memo_hits;
            report.memo.push_back(rec);
            return;
        }
        for (uint32_t f : flows) ahead[f - x.flow_begin] = 0;
    }
    if (follow(id, now, g, vertex_flows)) {
        rec.kind = MemoRecord::kFollow;
        ++report.memo_follows;
        report.memo.push_back(rec);
        return;
    }
    ++report.memo_misses;
    report.memo.push_back(rec);
    if (probing_at != now) {
        probing = MemoTable{};
        probing_leader.clear();
        probing_at = now;
    }
    MemoEntry lead;
    lead.key = g;
    probing_leader[&probing.entries.emplace(g.hash, std::move(lead))->second] = id;
    p.pending = true;
    p.key = std::move(g);
    p.key_flows = vertex_flows;
    p.key_time = now;
    for (uint32_t f : vertex_flows) {
        p.key_acked.push_back(b.qp[f].snd_una);
        p.key_inflight.push_back(inflight(f));
    }
}

// Whether the bytes a replay leaves out of the queues (`unplayed`, per flow: the original's bytes in flight
// at its end beyond its pipeline and the flow's own, pipeline_refill) would, on any switch port the flows
// cross, have filled its queue past the ECN threshold kmin (a round trip at line rate where a port has
// none): the original ended with its congestion signal on, the replay would resume with it off, and
// everything after differs. MoE 32x22B: a replayed all-to-all + pipeline transfer ended with 2.9 MB
// queued per downlink (kmin 1.6 MB); resumed with empty queues, its 3 MB pipeline transfers were never
// cut to DCQCN's minimum rate as at the packet level and took 146 us instead of 405 us; the iteration
// went 1.2 % early (docs/history/wormhole-skipping.md). A flow's bytes count on every port of its data path:
// where along it they queued the replay does not know.
bool Skipper::State::leaves_a_signalling_queue_out(const std::vector<uint32_t>& flows, const std::vector<double>& unplayed) {
    std::map<uint32_t, double> queued;
    for (size_t i = 0; i < flows.size(); ++i)
        if (unplayed[i] > 0)
            for (uint32_t port : flow_data_ports[flows[i] - x.flow_begin]) queued[port] += unplayed[i];
    for (const auto& [port, bytes] : queued) {
        const uint32_t row = x.port_begin + port;
        if (b.node_role[b.port[row].node] != kRoleSwitch) continue;
        const double threshold = b.mmu[row].kmin > 0 ? double(b.mmu[row].kmin) : double(x.max_bdp);
        if (bytes > threshold) return true;
    }
    return false;
}

// Whether the leader partition a follower waits on is still measuring the transient it was probed with.
bool Skipper::State::leading(const PartState& f) const {
    if (f.leader >= ps.size() || !parts.get(f.leader).alive) return false;
    const PartState& l = ps[f.leader];
    return l.pending && l.key_time == f.t0 && !l.frozen;
}

// A memo miss at `now` whose conflict graph matches a leader that missed at the same instant (the
// same collective step in several DP groups or pipeline pairs of a symmetric job): instead of measuring
// the same transient again at the packet level, the partition freezes open-ended and waits for the
// leader (Wormhole's reuse across partitions with matching contention patterns). Returns whether it did.
bool Skipper::State::follow(uint32_t id, int64_t now, const FlowConflictGraph& g, const std::vector<uint32_t>& vertex_flows) {
    if (probing_at != now) return false;
    std::vector<uint32_t> mapping;
    const MemoEntry* match = probing.find(g, mapping);
    if (!match) return false;
    const uint32_t leader = probing_leader.at(match);
    const PartState& l = state(leader);
    const int64_t deadline = skip_limit(id);
    if (deadline != kNever && deadline - now < 2 * rtt) return false;  // it would be mirrored before anything was gained
    PartState& p = state(id);
    for (uint32_t f : vertex_flows) recording.drop(f);  // frozen now: no longer a tail the packet level plays
    p.follower = true;
    p.leader = leader;
    p.deadline = deadline;
    for (size_t i = 0; i < mapping.size(); ++i) {
        p.flows.push_back(vertex_flows[mapping[i]]);
        p.leader_flows.push_back(l.key_flows[i]);
        p.leader_acked.push_back(l.key_acked[i]);
        p.leader_inflight.push_back(l.key_inflight[i]);
    }
    p.frozen = true;
    p.t0 = now;
    p.dt = kOpenEnded;
    p.t_end = now + kOpenEnded;
    p.credit.assign(p.flows.size(), 0);
    apply_shift(p, id, p.dt, p.credit);
    frozen.push_back(id);
    followers.push_back(id);
    return true;
}

// Ends a follower's wait at `now`: its events resume there, each flow credited what its leader flow got
// acknowledged since t0 plus the difference in bytes in flight (pipeline_refill, as a memo replay; the
// follower's pipeline is as it was at t0), never more than leaves the flow its bytes in flight and one credit unit; its
// congestion control takes the leader flow's rate state. The leader was simulated at the packet level
// from the same state over the same span, so the follower is where it would have been, within the
// quantization of the conflict graph's labels.
void Skipper::State::mirror(uint32_t id, int64_t now) {
    PartState& p = state(id);
    const int64_t dt = std::max<int64_t>(0, (now - p.t0 + 999) / 1000 * 1000);
    std::vector<int64_t> c(p.flows.size());
    for (size_t i = 0; i < p.flows.size(); ++i) {
        const uint32_t f = p.flows[i], g = p.leader_flows[i];
        // The leader flow's pipeline at its sending rate. (At what it got through over the span instead,
        // tighter where it overdrove a bottleneck, MoE 32x22B's iteration went from 1.2 % early to 2.1 % late.)
        const double acked = double(b.qp[g].snd_una - p.leader_acked[i]);
        const double refill = pipeline_refill(double(inflight(g)), double(inflight(f)), double(b.qp[g].rate) / 8e12 * base_rtt_ps(g));
        // The follower has been frozen since t0: its counts and rate now are those at the key.
        const double span_rate = now > p.t0 ? acked / double(now - p.t0) : 0.0;
        const double got = acked + refill + key_inflight_credit(b.qp[f].snd_una, p.leader_acked[i], double(inflight(f)), double(p.leader_inflight[i]),
                                                                double(b.qp[f].rate) / 8e12, span_rate);
        const double room = double(b.flow[f].size) - double(b.qp[f].snd_una) - double(inflight(f)) - double(unit);
        const int64_t owed = carry[f - x.flow_begin];
        const int64_t bytes = int64_t(std::max(0.0, std::min(got + double(owed), room)));
        c[i] = bytes / unit * unit;
        carry[f - x.flow_begin] = bytes - c[i];
        ahead[f - x.flow_begin] = std::min<int64_t>(int64_t(refill), c[i]);
    }
    apply_shift(p, id, dt - p.dt, c);
    p.dt = dt;
    p.t_end = p.t0 + dt;
    // Its congestion control takes the leader flow's state (sequence numbers stay its own: they moved with
    // the shift).
    for (size_t i = 0; i < p.flows.size(); ++i) put_cc_snapshot(b, p.flows[i], take_cc_snapshot(b, p.leader_flows[i], now), p.t_end);
    p.credit = c;
    p.base_credit = c;
    p.rate.assign(p.flows.size(), 0.0);
    p.steady_from = p.t_end;
    p.follower = false;
    p.frozen = false;
    frozen.erase(std::find(frozen.begin(), frozen.end(), id));
    followers.erase(std::find(followers.begin(), followers.end(), id));
    record_skip(p, id, true);
    reset_windows(id, now);
    resume_hint = std::min(resume_hint, p.t_end);
}

// The leader `id` ended its transient steady at `now` with `rate` for its flows `flows`: its followers are
// mirrored and go straight into a steady skip at their matching flows' rates.
void Skipper::State::release_followers_steady(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, double horizon) {
    for (size_t k = 0; k < followers.size();) {
        const uint32_t fid = followers[k];
        PartState& p = state(fid);
        if (p.leader != id || !leading(p)) {
            ++k;
            continue;
        }
        mirror(fid, now);  // removes it from `followers`
        PartState& q = state(fid);
        std::vector<double> mapped(q.flows.size());
        for (size_t i = 0; i < q.flows.size(); ++i) mapped[i] = rate[size_t(std::find(flows.begin(), flows.end(), q.leader_flows[i]) - flows.begin())];
        const std::vector<uint32_t> follower_flows = q.flows;
        if (!pfc_touches(port_rows(fid))) freeze(fid, now, follower_flows, mapped, 0, std::vector<int64_t>(mapped.size(), 0), true, horizon);
    }
}

// Whether a leader flow has begun its last packets (fewer than two credit units left to send): the
// follower then plays its own tail at the packet level, as a memo replay does.
bool Skipper::State::leader_in_tail(const PartState& p) const {
    for (uint32_t g : p.leader_flows)
        if (b.qp[g].snd_nxt + 2 * uint64_t(unit) > b.flow[g].size) return true;
    return false;
}

// Followers whose leader stopped measuring (its first flow finished, or its membership changed), or
// whose deadline would fall inside the next step, are mirrored now.
void Skipper::State::settle_followers(int64_t end, int64_t next) {
    const int64_t next_step_end = std::max(end, next) + x.lookahead;
    for (size_t k = 0; k < followers.size();) {
        const PartState& p = state(followers[k]);
        if (leading(p) && (p.deadline == kNever || p.deadline >= next_step_end) && !leader_in_tail(p)) ++k;
        else mirror(followers[k], end);
    }
}

void Skipper::State::store_transient(PartState& p, uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate) {
    p.pending = false;
    MemoEntry entry;
    entry.key = p.key;
    entry.transient_ps = now - p.key_time;
    for (size_t v = 0; v < p.key_flows.size(); ++v) {
        const uint32_t f = p.key_flows[v];
        entry.bytes.push_back(b.qp[f].snd_una - p.key_acked[v]);
        const size_t at = size_t(std::find(flows.begin(), flows.end(), f) - flows.begin());
        entry.end_rate.push_back(rate[at]);
        entry.end_inflight.push_back(inflight(f));
        entry.key_inflight.push_back(p.key_inflight[v]);
        entry.key_acked.push_back(p.key_acked[v]);
        entry.end_cc.push_back(take_cc_snapshot(b, f, now));
    }
    remember(std::move(entry), now, id);
}

// A measured transient into this experiment's memo (and its report), unless an isomorphic one is there or it is too
// short ever to be replayed.
void Skipper::State::remember(MemoEntry entry, int64_t at, uint32_t id) {
    const uint32_t flows = uint32_t(entry.key.labels.size());
    // Stored, a transient never replayed would keep its key from the longer transient a later miss measures.
    if (!long_enough_to_replay(entry)) return;
    if (!own.add(entry)) return;
    report.learned.push_back(std::move(entry));
    report.memo.push_back({at, id, flows, MemoRecord::kStored});
}

// A sample of a partition whose transient is under measurement: a checkpoint while every flow still has
// at least two packets' worth to send.
void Skipper::State::checkpoint(PartState& p, int64_t now) {
    for (uint32_t f : p.key_flows)
        if (b.qp[f].snd_nxt + 2 * uint64_t(unit) > b.flow[f].size) return;
    p.check_time = now;
    p.check_acked.clear(), p.check_inflight.clear(), p.check_rate.clear(), p.check_cc.clear();
    for (uint32_t f : p.key_flows) {
        const RateWindow& w = window[f - x.flow_begin];
        p.check_acked.push_back(b.qp[f].snd_una);
        p.check_inflight.push_back(inflight(f));
        p.check_cc.push_back(take_cc_snapshot(b, f, now));
        p.check_rate.push_back(w.count ? w.rate[(w.count - 1) % kMaxWindow] : 0.0);
    }
}

}  // namespace orrery::wormhole
