// Map: after_step → thaw partitions whose skip ended → take releases (skip-back where they touch a frozen
// partition) → flows that started (merge partitions) → flows that finished (split) → at sampling times:
// rate samples, memo probes of partitions that just formed, steadiness checks → freeze (shift_partition).
#include "wormhole/skipper.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <sstream>

#include "wormhole/cc_snapshot.h"
#include "wormhole/conflict_edges.h"
#include "wormhole/drain.h"
#include "wormhole/graph_match.h"
#include "wormhole/rate_windows.h"
#include "wormhole/shift.h"
#include "wormhole/tails.h"

namespace orrery::wormhole {
namespace {

using namespace net;

constexpr size_t kMemoMaxFlows = 256;  // larger conflict graphs are neither stored nor looked up
// Samples a partition whose windows were kept (one of its flows finished, or an HPCC skip ended on a drift)
// takes before its rates may be judged steady again: a change reaches the rates within a round trip (a
// sample), and two more show whether it moved them.
constexpr uint32_t kFreshSamples = 3;

struct PartState {
    int64_t changed_at = 0;
    uint32_t fresh = 0, fresh_needed = 0;  // samples since the membership changed, and how many a steady verdict needs
    bool probed = true;                // the memo was consulted for the current membership
    bool frozen = false;
    bool ends_on_drift = false;        // the skip ends where a drifting rate would have moved by θ
    bool ends_in_tail = false;         // the skip ends with its first flow in its tail (neither a drift nor a known start)
    int64_t t0 = 0, t_end = 0, dt = 0;
    std::vector<uint32_t> flows;       // global rows, as frozen
    std::vector<double> rate;          // bytes/ps per flow, as frozen
    std::vector<double> round_ps;      // per flow: its round trip in the steady state (bytes in flight / rate), HPCC's update period
    std::vector<int64_t> base_credit;  // bytes per flow credited before the steady part (memo transients)
    std::vector<int64_t> credit;       // bytes per flow credited in all
    std::vector<int64_t> remainder;    // bytes per flow owed beyond `credit` (whole units only are credited)
    int64_t steady_from = 0;           // t0 + memo transient
    // A completion skip (drain.h): every flow finishes at `fin` (ps) and the partition's packets leave the
    // fabric at t_end, the last of them; its events wait open-ended until then. `room`: the most a credit
    // may give each flow and still leave it its bytes in flight and one credit unit to send, should a
    // release cut the skip back and the flows resume at the packet level.
    bool completes = false;
    std::vector<int64_t> fin, room;
    size_t record = 0;
    // a transient being measured for the memo
    bool pending = false;
    FlowConflictGraph key;
    std::vector<uint32_t> key_flows;   // global rows in vertex order
    std::vector<uint64_t> key_acked;
    std::vector<uint64_t> key_inflight;
    int64_t key_time = 0;
    // the latest sample at which every flow still had data to send: where a transient cut short by a
    // completion is stored up to
    int64_t check_time = 0;
    std::vector<uint64_t> check_acked, check_inflight;
    std::vector<CcSnapshot> check_cc;
    std::vector<double> check_rate;
    // A follower: an identical partition probed at the same instant as a leader that missed the memo. It
    // waits frozen, open-ended, while the leader's transient is measured, and is then mirrored: credited
    // what the leader's matching flows got through since then (mirror()).
    bool follower = false;
    uint32_t leader = 0;
    std::vector<uint32_t> leader_flows;  // parallel to `flows`: the leader's matching flow rows
    std::vector<uint64_t> leader_acked;  // their bytes acknowledged at t0
    std::vector<uint64_t> leader_inflight;  // and in flight at t0
    int64_t deadline = 0;                // the follower must be mirrored before this (a known start touching it, the stop time)
    // The conflict graph's edges as conflict_structure last found them (null until then): they depend on the
    // partition's membership alone, and every change of it resets this state (changed()).
    std::shared_ptr<const std::vector<FlowConflictGraph::Edge>> edges;
};

// Partitions of more flows than this end their skips a round trip early, never by a completion skip. Every
// completion skip of GPT-3 13B has 4, 8 or 16 flows; those of MoE 8x13B and 32x22B are 96- to 192-flow
// all-to-alls, where DCQCN cuts some flows in their tails and not others: finishing every instance of such a
// partition at its predicted time moved MoE 32x22B's later starts by a median 180 us and took its mean FCT
// error over 1 % (docs/history/wormhole-skipping.md, "Completion skips").
constexpr size_t kCompletionSkipMaxFlows = 32;
// Partitions of more flows than this play their tails at the packet level every time (tails.h measures and
// replays those of kCompletionSkipMaxFlows to this many). MoE 8x13B's all-to-alls with PXN are 48-flow
// partitions (two all-to-alls 7 us apart on one rail); MoE 32x22B's are 96 to 192 flows beside the pipeline
// transfers and data-parallel rings of other micro-batches, and with their tails replayed its iteration went
// 0.57 % and 1.42 % late (seeds 1 and 2) instead of 0.85 % and 0.51 % early, its data-parallel ring pieces 4.9 %
// late on average instead of 0.4 %. Those pieces are in no tail (every tail replayed was one all-to-all's, 3.6 us
// long): they are what moves with small changes upstream (docs/history/wormhole-skipping.md, "Tails to their completions").
constexpr size_t kTailMaxFlows = 64;
// What a replayed or mirrored flow is credited besides the bytes its original got acknowledged: the original's
// bytes in flight at the end less the flow's own, which the freeze kept where they were, so that the flow
// resumes as far as the original had sent. Positive after a start (a round trip of pipeline the original had
// filled: without it the next acknowledgements came a round trip late). Negative where the original's bytes in
// flight shrank during the transient, as when flows joining a NIC cut each one's share: crediting nothing then
// left the flow that surplus ahead (MoE 8x13B with PXN: 12 all-to-all flows per NIC, 1.8 % early at the median;
// test_wormhole: memo_replay_leaves_each_flow_as_far_as_it_had_sent).
//
// Only the original's pipeline counts, not its queue: bytes in flight beyond a base round trip at its end rate
// (`original_pipe`) were waiting in queues, not yet through them, and credited they crossed a bottleneck
// instantly: MoE 32x22B's 3 MB pipeline transfers joining an all-to-all on one NIC were credited 1.2 MB each
// in 52 us beside the all-to-all's own, 1.8x what the downlink carries (docs/history/wormhole-skipping.md).
inline double pipeline_refill(double original_inflight, double own_inflight, double original_pipe) {
    return std::min(original_inflight - own_inflight, std::max(0.0, original_pipe - own_inflight));
}

// What a replayed or mirrored flow is credited on top of those for having had more bytes in flight at the key
// than its original (negative: fewer). The bytes the original got acknowledged count its bytes in flight at the
// key as progress; a copy keyed with fewer in flight had not sent them. After a mirror or replay a flow's
// acknowledged count runs ahead of its pipeline (pipeline_refill), so a flow mirrored once and then keyed as a
// leader passed that lead on as a deficit: MoE 8x13B's all-to-all flows were mirrored 5 KB (1.3 us) behind,
// and how far depended on where in its first round trip the earlier key had been taken, which is why the
// moment of the lookup moved the iteration's errors (docs/history/wormhole-skipping.md, "Bytes in flight at the key").
// Credited the difference, the copy's sending point moves as far as the original's did.
//
// Except when neither had anything acknowledged at the key: both are in their first round trip, sending at
// `key_rate` (bytes/ps) since they started, and the difference is how much later the copy started. It keeps
// that lag in time, which at the original's end rate `end_rate` is fewer bytes (an incast keyed 1.3-1.9 us after
// its start replaying one keyed at 1 us: 0.15-0.53 % early with the whole difference, within 0.07 % so;
// test_wormhole: a_replay_keyed_later_in_its_first_round_trip_keeps_its_lag).
inline double key_inflight_credit(uint64_t own_acked, uint64_t original_acked, double own_inflight, double original_inflight, double key_rate,
                                  double end_rate) {
    const double gap = own_inflight - original_inflight;
    if (own_acked == 0 && original_acked == 0 && key_rate > 0) return gap * std::min(1.0, end_rate / key_rate);
    return gap;
}

constexpr int64_t kOpenEnded = 1'000'000'000'000'000;  // ps (1,000 s): how far a follower's events wait until it is mirrored

}  // namespace

std::string memo_domain(const Batch& b, uint32_t e) {
    const ExperimentParams& ep = b.params[e];
    std::ostringstream c;
    c.precision(17);
    // How vertex_label quantizes comes first: keys written under another quantization never match.
    c << "labels rate/16 size/quarter-octave-to-" << kLabelledBdps << "-bdp rtt/100ns first-feedback edges/data-ports cc " << int(ep.cc_mode) << " mtu " << ep.mtu << " ecn " << ep.ecn_enabled << " rate_bound " << ep.rate_bound << " var_win " << ep.var_win
      << " fast_react " << ep.fast_react << " multi_rate " << ep.multi_rate << " sample_feedback " << ep.sample_feedback << " clamp "
      << ep.clamp_target_rate << " ack_interval " << ep.ack_interval << " chunk " << ep.chunk << " int_multi " << ep.int_multi << " mi "
      << ep.mi_thresh << " frt " << ep.fast_recovery_times << " min_rate " << ep.min_rate << " ai " << ep.rate_ai << " hai " << ep.rate_hai
      << " dctcp_ai " << ep.dctcp_rate_ai << " g " << ep.g << " eta " << ep.target_util << " first_cnp " << ep.rate_on_first_cnp << " timers "
      << ep.alpha_resume_ps << "," << ep.rate_decrease_ps << "," << ep.rp_timer_ps << " timely " << ep.timely_alpha << "," << ep.timely_beta << ","
      << ep.timely_tlow_ns << "," << ep.timely_thigh_ns << "," << ep.timely_min_rtt_ns;
    return c.str();
}

struct Skipper::State {
    Batch& b;
    uint32_t e;
    const ExperimentSlice& x;
    const ExperimentParams& ep;
    const MemoTable* shared;
    MemoTable own;
    GraphHashCache graph_hashes;  // conflict graphs' hashes by their content: most graphs recur vertex for vertex
    Partitions parts;
    std::vector<PartState> ps;
    std::vector<std::vector<uint32_t>> flow_ports;   // by local flow: local egress ports of its data and ACK paths, sorted
    std::vector<std::vector<uint32_t>> flow_data_ports;  // by local flow: those of its data path alone, sorted
    RateWindows window;                              // by local flow, while it runs
    std::vector<std::vector<uint32_t>> host_active;  // by local node: flows it sends that have started
    std::vector<uint32_t> completions_seen;          // by local node
    std::vector<std::pair<int64_t, uint32_t>> upcoming;  // min-heap (start, flow) of flows not yet started
    std::vector<int64_t> scratch;
    ConflictEdges edges_by_shape;                    // conflict graphs' edges, counted once per partition shape
    std::vector<int64_t> carry;                      // by local flow: bytes owed by earlier skips, less than a credit unit
    // By local flow: bytes a memo replay or a mirror credited for a pipeline the flow has not filled (the
    // original's bytes in flight), to be earned back at the packet level while it fills; until the flow has
    // run for a sampling interval. A completion skip plays no such refill, so its finish leaves them out.
    // Negative where the flow's own pipeline was the fuller one: its credit fell short of what its original
    // got acknowledged by bytes it already has in flight, which a completion skip must not count as still to
    // send (test_wormhole: a_replay_finishes_from_its_originals_acknowledged_bytes).
    std::vector<int64_t> ahead;
    std::vector<uint32_t> frozen;                    // partition ids
    std::vector<uint32_t> followers;                 // partition ids waiting on a leader (frozen too)
    MemoTable probing;                               // keys of the leaders that missed at `probing_at`
    std::map<const MemoEntry*, uint32_t> probing_leader;
    int64_t probing_at = -1;
    int64_t resume_hint = kNever;                    // the earliest resumption of a partition mirrored since the last step
    uint32_t done_seen = 0;
    int64_t interval = 0, next_sample = 0;
    int64_t rtt = 0;                                 // ps: the experiment's largest base RTT (at least 1 µs)
    int64_t settle = 0;                              // ps: how long a partition's membership holds before its memo lookup
    std::vector<uint32_t> to_probe;                  // partitions whose memo lookup is due once they have settled
    int64_t unit = 1000;                             // credit granularity: the MTU (and the go-back chunk when ACKs go back to zero)
    std::string cc_context;
    // Whether a rate drift within its window's scatter is taken for noise (drift_of in steady.h). HPCC sets its
    // window from the utilization its INT reports every round trip, DCTCP from the share of marks over a window
    // of data, DCQCN from the marks and its timers (a recovering DCQCN flow's window spans the timer: l):
    // a slope within their sample scatter is that loop's jitter. TIMELY integrates its RTT gradient and can
    // climb slowly for a millisecond while its share of the link is flat (test_wormhole:
    // two_flow_incast_within_theta_under_every_cc: -23 % with its drift taken for noise), so every drift counts.
    bool drift_within_noise_is_noise = false;
    // Whether a skip that ended on a drift keeps its flows' rate windows (HPCC). Its flows resume in the state
    // they froze in, so their samples still describe them, and a few fresh ones show where the drift has gone.
    // HPCC's drifts are its slow convergence to fair shares: GPT-3 13B 38.8 M -> 22.3 M events, FCT error
    // 0.132 -> 0.136 % mean. Under DCQCN a recovering flow's drift is a timer's steps and it took the two-flow
    // incast from -0.7 % to -4.8 %: its windows start over.
    bool keep_windows_after_drift = false;
    std::vector<std::string> port_facts;  // by local port, filled as first needed (port_fact)
    TailMemo tails;                       // tails measured to their completions (tails.h)
    TailRecordings recording;
    // Calls from the runner after its steps (complete_due, after_step), and the one pfc_on_links was counted in.
    uint64_t steps_seen = 0, pfc_counted_at = ~uint64_t(0);
    bool pfc_on_links = false;
    std::vector<uint32_t> thawed_in_tail; // partitions thawed in this step with their first flow in its tail
    SkipReport report;

    State(Batch& batch, uint32_t experiment, const MemoTable* memo)
        : b(batch), e(experiment), x(batch.experiments[experiment]), ep(batch.params[experiment]), shared(memo),
          parts(x.port_end - x.port_begin, x.flow_end - x.flow_begin), flow_ports(x.flow_end - x.flow_begin),
          flow_data_ports(x.flow_end - x.flow_begin),
          window(x.flow_end - x.flow_begin), host_active(x.node_end - x.node_begin), completions_seen(x.node_end - x.node_begin, 0),
          scratch(x.flow_end - x.flow_begin, 0), carry(x.flow_end - x.flow_begin, 0),
          ahead(x.flow_end - x.flow_begin, 0), recording(x.flow_begin, x.flow_end - x.flow_begin) {
        port_facts.resize(x.port_end - x.port_begin);
        const SkippingSpec& k = x.skipping;
        rtt = std::max<int64_t>(1'000'000, int64_t(x.max_rtt_ns) * 1000);
        interval = k.sample_interval ? k.sample_interval->count : rtt;
        settle = std::min<int64_t>(rtt, 1'000'000);
        interval = std::max<int64_t>(1000, interval / 1000 * 1000);
        next_sample = x.clock + interval;
        report.sample_interval_ps = interval;
        unit = ep.mtu;
        // ACKs come every packet (or every network.ack.interval_packets, counted from where the receiver's
        // milestone stands, which the shift moves with the credit), so a credit of whole packets leaves snd_una
        // where an ACK could have put it. Going back to zero rounds ACKs down to the go-back chunk: then credits
        // are whole chunks too.
        // (Whole chunks always, as before, put each flow up to 4 KB behind or ahead at every skip: MoE 32x22B's
        // all-to-all flows of 393 KB ended 0.35 % late at the median, GPT-3 13B handled 9.07 M events instead
        // of 7.06 M under DCQCN; docs/history/wormhole-skipping.md.)
        if (ep.chunk != 0 && ep.back_to_zero) unit = std::lcm<int64_t>(unit, ep.chunk);
        for (uint32_t f = x.flow_begin; f < x.flow_end; ++f)
            if (b.flow[f].start != kNever && b.qp[f].phase == kWaiting) upcoming.push_back({b.flow[f].start, f});
        std::make_heap(upcoming.begin(), upcoming.end(), std::greater<>());
        cc_context = memo_domain(b, e);
        drift_within_noise_is_noise = ep.cc_mode != kTimely;
        keep_windows_after_drift = ep.cc_mode == kHpcc;
    }

    uint64_t inflight(uint32_t f) const { return b.qp[f].snd_nxt - b.qp[f].snd_una; }
    double base_rtt_ps(uint32_t f) const { return double(b.flow[f].base_rtt_ns) * 1e3; }

    // HPCC changes no rate before the ACK that ends a flow's first round trip (vertex_label). TIMELY does the
    // same, but labelled so its MoE 8x13B replays went 1.8 % late on average (0.04 % early without): not kept.
    bool awaiting_first_feedback(uint32_t f) const { return b.params[e].cc_mode == kHpcc && b.hpcc[f].last_update_seq == 0; }

    const std::vector<uint32_t>& ports_of(uint32_t f) {
        std::vector<uint32_t>& out = flow_ports[f - x.flow_begin];
        if (!out.empty()) return out;
        const FlowInfo& info = b.flow[f];
        out.reserve(12);  // both ways of a fat-tree's longest path: grown a port at a time it was 1 % of a MoE run
        auto walk = [&](uint32_t from, uint32_t to, uint32_t offset) {
            uint32_t node = from;
            for (uint32_t hop = 0; node != to && hop < 64; ++hop) {
                const uint32_t row = b.node_port_begin[node] + b.path_ports[offset + hop];
                out.push_back(row - x.port_begin);
                node = b.port[b.port[row].peer_port].node;
            }
        };
        walk(info.src, info.dst, b.flow_paths[f].data_path);
        std::vector<uint32_t>& data = flow_data_ports[f - x.flow_begin];
        data = out;
        std::sort(data.begin(), data.end());
        walk(info.dst, info.src, b.flow_paths[f].ack_path);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    PartState& state(uint32_t id) {
        if (ps.size() <= id) ps.resize(id + 1);
        return ps[id];
    }

    // `flow_left`: the change is a flow that finished. The others' rate windows are kept (what they held is
    // their rates until then) and kFreshSamples samples show whether the leaving moved them; a flow that
    // joins has no samples, so its partition starts over.
    void changed(uint32_t id, int64_t now, bool flow_left = false) {
        PartState& p = state(id);
        p = PartState{};
        p.changed_at = now;
        p.probed = !x.skipping.memo;
        if (!p.probed) to_probe.push_back(id);
        if (flow_left) p.fresh_needed = kFreshSamples;
        else reset_windows(id, now);
    }

    // Rate windows of a partition's flows start over: after a membership change or a thaw.
    void reset_windows(uint32_t id, int64_t now) {
        for (uint32_t f : parts.get(id).flows) window[f].reset(now, b.qp[x.flow_begin + f].snd_una, inflight(x.flow_begin + f));
    }

    // A partition's ports as the batch's global rows.
    std::vector<uint32_t> port_rows(uint32_t id) const {
        std::vector<uint32_t> rows;
        for (uint32_t port : parts.get(id).ports) rows.push_back(x.port_begin + port);
        return rows;
    }

    uint32_t window_length(uint32_t id) const {
        if (x.skipping.window) return uint32_t(*x.skipping.window);
        const double bdp_packets = double(x.max_bdp) / double(ep.mtu);
        uint32_t l = window_for(bdp_packets, parts.max_flows_per_port(id), double(x.max_rtt_ns) * 1000, double(interval));
        // DCQCN raises its rate only when its rate-increase timer fires: a window shorter than that period
        // sees a recovering flow as flat. Appendix F's rule (cover one period) applied to that timer, for a
        // partition with a flow still recovering: below its line rate with the timer running. A flow at its
        // line rate is unchanged by the timer (rate ← (rate + target) / 2 with both at the line rate), and a cut
        // would show in its samples.
        if (ep.cc_mode == kDcqcn && recovering(id)) l = std::max<uint32_t>(l, uint32_t(std::min<int64_t>(kMaxWindow, ep.rp_timer_ps / interval + 2)));
        return l;
    }

    bool recovering(uint32_t id) const {
        for (uint32_t f : parts.get(id).flows) {
            const uint32_t row = x.flow_begin + f;
            if (b.dcqcn[row].t_rp != kNever && b.qp[row].rate < b.qp[row].max_rate) return true;
        }
        return false;
    }

    // The earliest known start of a flow not yet started that crosses a port of partition `id`.
    int64_t first_touching_start(uint32_t id) {
        int64_t first = kNever;
        for (const auto& [start, f] : upcoming) {
            if (start >= first) continue;
            for (uint32_t p : ports_of(f))
                if (parts.of_port(p) == id) {
                    first = start;
                    break;
                }
        }
        return first;
    }

    // How far a skip of partition `id` starting now may go: to the first known start touching it or the stop
    // time, whichever is sooner (kNever: neither).
    int64_t skip_limit(uint32_t id) {
        const int64_t limit = first_touching_start(id);
        return ep.stop_time != kNever ? std::min(limit, ep.stop_time) : limit;
    }

    void apply_shift(PartState& p, uint32_t id, int64_t dt, const std::vector<int64_t>& delta) {
        const std::vector<uint32_t> rows = port_rows(id);
        const ShiftPlan plan{&rows, &p.flows, &delta, dt};
        shift_partition(b, e, plan, scratch);
    }

    uint64_t events_estimate(const std::vector<uint32_t>& flows, const std::vector<int64_t>& credit) {
        uint64_t events = 0;
        for (size_t i = 0; i < flows.size(); ++i) events += uint64_t(credit[i] / ep.mtu) * 2 * ports_of(flows[i]).size();
        return events;
    }

    void record_skip(PartState& p, uint32_t id, bool from_memo) {
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
    bool freeze(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient,
                const std::vector<int64_t>& base, bool extend_steady = true, double horizon = 1e300) {
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
    void freeze_to_completion(uint32_t id, std::vector<int64_t> fin, bool from_memo) {
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

    void start_skip(PartState& p, uint32_t id, bool from_memo) {
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
    double bytes_to_finish(uint32_t f, int64_t base) const {
        const uint32_t local = f - x.flow_begin;
        return double(b.flow[f].size - b.qp[f].snd_una) - double(base) - double(carry[local]) + double(ahead[local]);
    }

    // Whether every flow of a partition about to freeze finishes, at its steady rate after the transient,
    // within a sampling interval of the others, before anything known touches the partition and while the
    // rates' drift stays within θ. `fin` gets each flow's finish (ps): when its rate brings the bytes it
    // has acknowledged to its size. The partition's last round trip is then not played: in lockstep flows
    // (a collective step's) the bottleneck drains at the rate it served them, so the last ACKs keep coming
    // at that rate until the last byte.
    bool completes_together(const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient, const std::vector<int64_t>& base,
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
    std::vector<int64_t> credits(PartState& p, int64_t dt) const {
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
    void cut_back(uint32_t id, int64_t start, int64_t now) {
        PartState& p = state(id);
        if (!p.frozen || p.t_end <= start) return;
        if (p.follower) return mirror(id, now);
        resume_at(id, start);
    }

    // Frozen partition `id` resumes at `start` (or the next whole ns), its flows credited what their rates
    // gave them until then.
    void resume_at(uint32_t id, int64_t start) {
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

    // The earliest end of a completion skip (kNever: none).
    int64_t completion_due() const {
        int64_t due = kNever;
        for (uint32_t id : frozen)
            if (ps[id].completes) due = std::min(due, ps[id].t_end);
        return due;
    }

    // Completion skips that end by `end`: their flows finish at the times their rates gave, in that order,
    // and their packets leave the fabric (blocks into `cache`). Returns how many flows finished.
    uint32_t complete_due(int64_t end, BlockCache& cache) {
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
    bool pfc_touches(const std::vector<uint32_t>& rows) {
        if (pfc_counted_at != steps_seen) pfc_on_links = pfc_frames_on_links(b, e), pfc_counted_at = steps_seen;
        return touches_pfc(b, rows, pfc_on_links);
    }

    // Whether partition `id` holds a tail being measured (tails.h): until the tail's last flow has finished it
    // takes no memo replay and no steady skip, so that the tails measured are those the packet level plays, not
    // only those no replay happened to interrupt. A memo miss still measures it at the packet level and
    // identical partitions may follow it (they end their own measurements). (Letting replays and skips end
    // measurements instead gave MoE 8x13B the same errors: docs/history/wormhole-skipping.md, "Tails to their completions".)
    bool measuring_tail(uint32_t id) const {
        for (uint32_t f : parts.get(id).flows)
            if (recording.recording(x.flow_begin + f)) return true;
        return false;
    }

    // Partition `id` thawed at `now` with its first flow in its tail and its membership unchanged since. Too
    // large for a completion skip (kCompletionSkipMaxFlows), it finishes its flows at the times a measured
    // tail of an isomorphic graph took, or its tail is measured now (tails.h).
    void finish_tail(uint32_t id, int64_t now) {
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

    // How far two measurements of one tail may finish apart, flow by flow, and count as the same tail: a
    // round trip (the packets' own order) or 2 % of the tail, whichever is more.
    int64_t tail_agreement_ps(int64_t tail_ps) const { return std::max<int64_t>(rtt, tail_ps / 50); }

    // A completion skip finishing each flow of partition `id` when its counterpart in the measured tail `hit`
    // finished, moved by the difference in bytes left at that flow's mean rate over the tail. Refused when
    // the bytes left differ beyond tail_bytes_tolerance or a known start touches the partition before its end.
    bool replay_tail(uint32_t id, int64_t now, const MemoEntry& hit, const std::vector<uint32_t>& vertex_flows, const std::vector<uint32_t>& mapping) {
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

    void thaw(int64_t now) {
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

    // A port's facts for the memo context: its rate and, at a switch, its ECN thresholds (fixed for the run).
    const std::string& port_fact(uint32_t p) {
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
    FlowConflictGraph conflict_structure(uint32_t id, std::vector<uint32_t>& vertex_flows) {
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

    FlowConflictGraph conflict_graph(uint32_t id, std::vector<uint32_t>& vertex_flows) {
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

    // A replay freezes a partition for the stored transient in whole ns (dt is a multiple of 1 ns), and only a
    // transient of at least two round trips is replayed; probe and remember judge it by this one rule.
    static int64_t replayed_length(const MemoEntry& e) { return e.transient_ps / 1000 * 1000; }
    bool long_enough_to_replay(const MemoEntry& e) const { return replayed_length(e) >= 2 * rtt; }

    void probe(uint32_t id, int64_t now) {
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
    bool leaves_a_signalling_queue_out(const std::vector<uint32_t>& flows, const std::vector<double>& unplayed) {
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
    bool leading(const PartState& f) const {
        if (f.leader >= ps.size() || !parts.get(f.leader).alive) return false;
        const PartState& l = ps[f.leader];
        return l.pending && l.key_time == f.t0 && !l.frozen;
    }

    // A memo miss at `now` whose conflict graph matches a leader that missed at the same instant (the
    // same collective step in several DP groups or pipeline pairs of a symmetric job): instead of measuring
    // the same transient again at the packet level, the partition freezes open-ended and waits for the
    // leader (Wormhole's reuse across partitions with matching contention patterns). Returns whether it did.
    bool follow(uint32_t id, int64_t now, const FlowConflictGraph& g, const std::vector<uint32_t>& vertex_flows) {
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
    void mirror(uint32_t id, int64_t now) {
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
    void release_followers_steady(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, double horizon) {
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
    bool leader_in_tail(const PartState& p) const {
        for (uint32_t g : p.leader_flows)
            if (b.qp[g].snd_nxt + 2 * uint64_t(unit) > b.flow[g].size) return true;
        return false;
    }

    // Followers whose leader stopped measuring (its first flow finished, or its membership changed), or
    // whose deadline would fall inside the next step, are mirrored now.
    void settle_followers(int64_t end, int64_t next) {
        const int64_t next_step_end = std::max(end, next) + x.lookahead;
        for (size_t k = 0; k < followers.size();) {
            const PartState& p = state(followers[k]);
            if (leading(p) && (p.deadline == kNever || p.deadline >= next_step_end) && !leader_in_tail(p)) ++k;
            else mirror(followers[k], end);
        }
    }

    void sample(int64_t now) {
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
    void average_within_classes(uint32_t id, const std::vector<uint32_t>& flows, std::vector<double>& rate, uint32_t l) {
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

    void store_transient(PartState& p, uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate) {
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
    void remember(MemoEntry entry, int64_t at, uint32_t id) {
        const uint32_t flows = uint32_t(entry.key.labels.size());
        // Stored, a transient never replayed would keep its key from the longer transient a later miss measures.
        if (!long_enough_to_replay(entry)) return;
        if (!own.add(entry)) return;
        report.learned.push_back(std::move(entry));
        report.memo.push_back({at, id, flows, MemoRecord::kStored});
    }

    // The first flow of a partition with a transient under measurement finished: the transient is stored up
    // to the last rate sample before the completion (a replay then leaves the last stretch, under one sampling
    // interval, to the packet level, which finishes the flow). A transient cut short by a flow joining is not
    // stored: storing it up to the last sample made MoE 8x13B's first run slower (DCQCN: 41.8 % -> 34.0 % of
    // events skipped, the same hits).
    void store_completion(uint32_t id) {
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

    // A sample of a partition whose transient is under measurement: a checkpoint while every flow still has
    // at least two packets' worth to send.
    void checkpoint(PartState& p, int64_t now) {
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

    int64_t after_step(int64_t end, int64_t next, uint32_t done) {
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
    int64_t wake(int64_t next) const {
        const int64_t due = completion_due();
        return due == kNever ? next : std::min(next, due - 1);
    }
};

Skipper::Skipper(Batch& b, uint32_t experiment, const MemoTable* shared) : s_(std::make_unique<State>(b, experiment, shared)) {}
Skipper::~Skipper() = default;
int64_t Skipper::after_step(int64_t end, int64_t next, uint32_t flows_done) { return s_->after_step(end, next, flows_done); }
int64_t Skipper::completion_due() const { return s_->completion_due(); }
uint32_t Skipper::complete_due(int64_t end, net::BlockCache& cache) { return s_->complete_due(end, cache); }
int64_t Skipper::wake(int64_t next) const { return s_->wake(next); }
SkipReport Skipper::take_report() { return std::move(s_->report); }

}  // namespace orrery::wormhole
