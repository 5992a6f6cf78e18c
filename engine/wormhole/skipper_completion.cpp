// Completion skips (drain.h) and the tails of large partitions measured to their completions (tails.h).
#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

// The earliest end of a completion skip (kNever: none).
int64_t Skipper::State::completion_due() const {
    int64_t due = kNever;
    for (uint32_t id : frozen)
        if (ps[id].completes) due = std::min(due, ps[id].t_end);
    return due;
}

// Completion skips that end by `end`: their flows finish at the times their rates gave, in that order,
// and their packets leave the fabric (blocks into `cache`). Returns how many flows finished.
uint32_t Skipper::State::complete_due(int64_t end, BlockCache& cache) {
    ++steps_seen;  // called after a step, before after_step: the step's PFC counts are new here
    uint32_t finished = 0;
    for (size_t i = 0; i < frozen.size();) {
        const uint32_t id = frozen[i];
        PartState& p = state(id);
        if (!p.completes || p.t_end > end) {
            ++i;
            continue;
        }
        const std::vector<uint32_t> rows = port_rows(id);
        if (pfc_touches(rows)) {
            // Another partition's congestion sent a pause frame toward one of its ports while it was
            // frozen: taking the port's packets away could lose it. The flows resume at the packet
            // level instead, each with its last bytes to send (thaw takes it from here).
            resume_at(id, std::max(p.t_end, end));
            ++i;
            continue;
        }
        frozen.erase(frozen.begin() + long(i));
        p.frozen = false;
        p.completes = false;
        drop_partition_packets(b, rows, cache);
        std::vector<std::pair<int64_t, uint32_t>> order;
        for (size_t k = 0; k < p.flows.size(); ++k) order.push_back({p.fin[k], p.flows[k]});
        std::sort(order.begin(), order.end());
        for (const auto& [t, f] : order) finish_flow(b, f, t);
        // Its NICs have nothing left to send (every flow through them was the partition's): no retry.
        for (uint32_t row : rows) {
            const uint32_t node = b.port[row].node;
            if (b.node_role[node] != kRoleHost) continue;
            const NicState& nic = b.nic[node];
            bool sending = false;
            for (uint32_t k = 0; k < nic.qp_count; ++k) {
                const uint32_t f = b.nic_qps[nic.qp_offset + k];
                sending |= b.qp[f].phase == kActive;
            }
            if (!sending) {
                b.nic[node].next_send = kNever;
                mark_host_wrote(b, node);
            }
        }
        finished += uint32_t(order.size());
    }
    return finished;
}

// touches_pfc with the experiment's PFC frames on links counted once per call from the runner (the counts
// move only in steps, and a step is always followed by such a call).
bool Skipper::State::pfc_touches(const std::vector<uint32_t>& rows) {
    if (pfc_counted_at != steps_seen) pfc_on_links = pfc_frames_on_links(b, e), pfc_counted_at = steps_seen;
    return touches_pfc(b, rows, pfc_on_links);
}

// Whether partition `id` holds a tail being measured (tails.h): until the tail's last flow has finished it
// takes no memo replay and no steady skip, so that the tails measured are those the packet level plays, not
// only those no replay happened to interrupt. A memo miss still measures it at the packet level and
// identical partitions may follow it (they end their own measurements). (Letting replays and skips end
// measurements instead gave MoE 8x13B the same errors: docs/history/wormhole-skipping.md, "Tails to their completions".)
bool Skipper::State::measuring_tail(uint32_t id) const {
    for (uint32_t f : parts.get(id).flows)
        if (recording.recording(x.flow_begin + f)) return true;
    return false;
}

// Partition `id` thawed at `now` with its first flow in its tail and its membership unchanged since. Too
// large for a completion skip (kCompletionSkipMaxFlows), it finishes its flows at the times a measured
// tail of an isomorphic graph took, or its tail is measured now (tails.h).
void Skipper::State::finish_tail(uint32_t id, int64_t now) {
    const Partition& part = parts.get(id);
    if (part.flows.size() <= kCompletionSkipMaxFlows || part.flows.size() > kTailMaxFlows || measuring_tail(id)) return;
    if (pfc_touches(port_rows(id))) return;
    std::vector<uint32_t> vertex_flows;
    FlowConflictGraph g = conflict_graph(id, vertex_flows);
    std::vector<uint32_t> mapping;
    if (const MemoEntry* hit = tails.replayable.find(g, mapping)) {
        replay_tail(id, now, *hit, vertex_flows, mapping);
        return;
    }
    if (!tails.open(g)) return;
    TailRecording r;
    r.key = std::move(g);
    r.flows = vertex_flows;
    r.t0 = now;
    for (uint32_t f : vertex_flows) r.remaining.push_back(b.flow[f].size - b.qp[f].snd_una);
    recording.start(std::move(r));
}

// A completion skip finishing each flow of partition `id` when its counterpart in the measured tail `hit`
// finished, moved by the difference in bytes left at that flow's mean rate over the tail. Refused when
// the bytes left differ beyond tail_bytes_tolerance or a known start touches the partition before its end.
bool Skipper::State::replay_tail(uint32_t id, int64_t now, const MemoEntry& hit, const std::vector<uint32_t>& vertex_flows, const std::vector<uint32_t>& mapping) {
    const size_t n = mapping.size();
    std::vector<uint32_t> flows(n);
    std::vector<double> rate(n);
    std::vector<int64_t> fin(n);
    int64_t last = now;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t f = vertex_flows[mapping[i]];
        const double stored = double(hit.bytes[i]);
        const double diff = double(b.flow[f].size - b.qp[f].snd_una) - stored;
        if (hit.finish_ps[i] <= 0 || !(stored > 0) || std::abs(diff) > tail_bytes_tolerance(hit.bytes[i], unit)) return false;
        flows[i] = f;
        rate[i] = stored / double(hit.finish_ps[i]);
        fin[i] = now + std::max<int64_t>(1, std::llround(double(hit.finish_ps[i]) + diff / rate[i]));
        last = std::max(last, fin[i]);
    }
    const int64_t end = (last + 999) / 1000 * 1000;
    const int64_t limit = skip_limit(id);
    if (limit != kNever && end >= limit) return false;
    for (int64_t& t : fin) t = std::min(t, end);
    PartState& p = state(id);
    p.frozen = true;
    p.t0 = now;
    p.steady_from = now;
    p.flows = std::move(flows);
    p.rate = std::move(rate);
    p.round_ps.assign(n, 0.0);  // a completion skip: cut back and thawed, it ages nothing
    p.base_credit.assign(n, 0);
    ++report.tail_replays;
    freeze_to_completion(id, std::move(fin), true);
    return true;
}

// The first flow of a partition with a transient under measurement finished: the transient is stored up
// to the last rate sample before the completion (a replay then leaves the last stretch, under one sampling
// interval, to the packet level, which finishes the flow). A transient cut short by a flow joining is not
// stored: storing it up to the last sample made MoE 8x13B's first run slower (DCQCN: 41.8 % -> 34.0 % of
// events skipped, the same hits).
void Skipper::State::store_completion(uint32_t id) {
    PartState& p = state(id);
    if (!p.pending) return;
    p.pending = false;
    if (p.check_time <= p.key_time) return;
    MemoEntry entry;
    entry.key = p.key;
    entry.transient_ps = p.check_time - p.key_time;
    entry.ends_steady = false;
    for (size_t v = 0; v < p.key_flows.size(); ++v) {
        entry.bytes.push_back(p.check_acked[v] - p.key_acked[v]);
        entry.end_rate.push_back(p.check_rate[v]);
        entry.end_inflight.push_back(p.check_inflight[v]);
        entry.key_inflight.push_back(p.key_inflight[v]);
        entry.key_acked.push_back(p.key_acked[v]);
        entry.end_cc.push_back(p.check_cc[v]);
    }
    remember(std::move(entry), p.check_time, id);
}

}  // namespace orrery::wormhole
