#pragma once
// The state of one experiment's skipper and the helpers its parts share (skipper.cpp: the workflow and its
// map; skipper_*.cpp: its parts). Private to engine/wormhole.
#include <map>
#include <string>
#include <vector>

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
#include "wormhole/skipper.h"

namespace orrery::wormhole {


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

    const std::vector<uint32_t>& ports_of(uint32_t f);

    PartState& state(uint32_t id) {
        if (ps.size() <= id) ps.resize(id + 1);
        return ps[id];
    }

    // `flow_left`: the change is a flow that finished. The others' rate windows are kept (what they held is
    // their rates until then) and kFreshSamples samples show whether the leaving moved them; a flow that
    // joins has no samples, so its partition starts over.
    void changed(uint32_t id, int64_t now, bool flow_left = false);

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

    uint32_t window_length(uint32_t id) const;

    bool recovering(uint32_t id) const {
        for (uint32_t f : parts.get(id).flows) {
            const uint32_t row = x.flow_begin + f;
            if (b.dcqcn[row].t_rp != kNever && b.qp[row].rate < b.qp[row].max_rate) return true;
        }
        return false;
    }

    // The earliest known start of a flow not yet started that crosses a port of partition `id`.
    int64_t first_touching_start(uint32_t id);

    // How far a skip of partition `id` starting now may go: to the first known start touching it or the stop
    // time, whichever is sooner (kNever: neither).
    int64_t skip_limit(uint32_t id) {
        const int64_t limit = first_touching_start(id);
        return ep.stop_time != kNever ? std::min(limit, ep.stop_time) : limit;
    }

    void apply_shift(PartState& p, uint32_t id, int64_t dt, const std::vector<int64_t>& delta);

    uint64_t events_estimate(const std::vector<uint32_t>& flows, const std::vector<int64_t>& credit);

    void record_skip(PartState& p, uint32_t id, bool from_memo);

    // Freezes partition `id` at `now` for its flows at `rate` (bytes/ps), after `transient` (a memoized
    // transient of `base` bytes per flow, or none). Returns whether it froze.
    bool freeze(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient,
                const std::vector<int64_t>& base, bool extend_steady = true, double horizon = 1e300);

    // The rest of a completion skip of partition `id`, whose PartState has its flows, rates, base credits, t0
    // and steady_from: each flow finishes at its `fin` (ps), the partition's packets leave at the last.
    void freeze_to_completion(uint32_t id, std::vector<int64_t> fin, bool from_memo);

    void start_skip(PartState& p, uint32_t id, bool from_memo);

    // What flow `f` still has to get acknowledged after `base` bytes of a replayed transient. Its count
    // climbs an ACK (a packet) at a time: flows whose counts read the same at the freeze finish together, up
    // to a packet's time from the packet level's order. Tried and not kept (docs/history/wormhole-skipping.md,
    // "Completion skips"): half a packet off each count, and placing each flow within its ACK cycle from its
    // last samples' counts. GPT-3 13B's errors were the same either way and TIMELY handled 7.2-7.4 M events
    // instead of 5.3 M.
    double bytes_to_finish(uint32_t f, int64_t base) const;

    // Whether every flow of a partition about to freeze finishes, at its steady rate after the transient,
    // within a sampling interval of the others, before anything known touches the partition and while the
    // rates' drift stays within θ. `fin` gets each flow's finish (ps): when its rate brings the bytes it
    // has acknowledged to its size. The partition's last round trip is then not played: in lockstep flows
    // (a collective step's) the bottleneck drains at the rate it served them, so the last ACKs keep coming
    // at that rate until the last byte.
    bool completes_together(const std::vector<uint32_t>& flows, const std::vector<double>& rate, int64_t transient, const std::vector<int64_t>& base,
                            double horizon, int64_t limit, int64_t now, std::vector<int64_t>& fin) const;

    // Whole credit units per flow for a skip of `dt`; what is left over (`p.remainder`) is owed to the flow's
    // next credit, so that flooring at every skip does not make a flow late by half a unit each time.
    std::vector<int64_t> credits(PartState& p, int64_t dt) const;

    // A flow starting at `start` touches frozen partition `id`: its skip now ends at `start`.
    void cut_back(uint32_t id, int64_t start, int64_t now);

    // Frozen partition `id` resumes at `start` (or the next whole ns), its flows credited what their rates
    // gave them until then.
    void resume_at(uint32_t id, int64_t start);

    // The earliest end of a completion skip (kNever: none).
    int64_t completion_due() const;

    // Completion skips that end by `end`: their flows finish at the times their rates gave, in that order,
    // and their packets leave the fabric (blocks into `cache`). Returns how many flows finished.
    uint32_t complete_due(int64_t end, BlockCache& cache);

    // touches_pfc with the experiment's PFC frames on links counted once per call from the runner (the counts
    // move only in steps, and a step is always followed by such a call).
    bool pfc_touches(const std::vector<uint32_t>& rows);

    // Whether partition `id` holds a tail being measured (tails.h): until the tail's last flow has finished it
    // takes no memo replay and no steady skip, so that the tails measured are those the packet level plays, not
    // only those no replay happened to interrupt. A memo miss still measures it at the packet level and
    // identical partitions may follow it (they end their own measurements). (Letting replays and skips end
    // measurements instead gave MoE 8x13B the same errors: docs/history/wormhole-skipping.md, "Tails to their completions".)
    bool measuring_tail(uint32_t id) const;

    // Partition `id` thawed at `now` with its first flow in its tail and its membership unchanged since. Too
    // large for a completion skip (kCompletionSkipMaxFlows), it finishes its flows at the times a measured
    // tail of an isomorphic graph took, or its tail is measured now (tails.h).
    void finish_tail(uint32_t id, int64_t now);

    // How far two measurements of one tail may finish apart, flow by flow, and count as the same tail: a
    // round trip (the packets' own order) or 2 % of the tail, whichever is more.
    int64_t tail_agreement_ps(int64_t tail_ps) const { return std::max<int64_t>(rtt, tail_ps / 50); }

    // A completion skip finishing each flow of partition `id` when its counterpart in the measured tail `hit`
    // finished, moved by the difference in bytes left at that flow's mean rate over the tail. Refused when
    // the bytes left differ beyond tail_bytes_tolerance or a known start touches the partition before its end.
    bool replay_tail(uint32_t id, int64_t now, const MemoEntry& hit, const std::vector<uint32_t>& vertex_flows, const std::vector<uint32_t>& mapping);

    void thaw(int64_t now);

    // A port's facts for the memo context: its rate and, at a switch, its ECN thresholds (fixed for the run).
    const std::string& port_fact(uint32_t p);

    // A partition's flows as labelled vertices and the ports they share as weighted edges: the conflict graph
    // without its context or hash (what telling its flows apart needs).
    FlowConflictGraph conflict_structure(uint32_t id, std::vector<uint32_t>& vertex_flows);

    FlowConflictGraph conflict_graph(uint32_t id, std::vector<uint32_t>& vertex_flows);

    // A replay freezes a partition for the stored transient in whole ns (dt is a multiple of 1 ns), and only a
    // transient of at least two round trips is replayed; probe and remember judge it by this one rule.
    static int64_t replayed_length(const MemoEntry& e) { return e.transient_ps / 1000 * 1000; }
    bool long_enough_to_replay(const MemoEntry& e) const { return replayed_length(e) >= 2 * rtt; }

    void probe(uint32_t id, int64_t now);

    // Whether the bytes a replay leaves out of the queues (`unplayed`, per flow: the original's bytes in flight
    // at its end beyond its pipeline and the flow's own, pipeline_refill) would, on any switch port the flows
    // cross, have filled its queue past the ECN threshold kmin (a round trip at line rate where a port has
    // none): the original ended with its congestion signal on, the replay would resume with it off, and
    // everything after differs. MoE 32x22B: a replayed all-to-all + pipeline transfer ended with 2.9 MB
    // queued per downlink (kmin 1.6 MB); resumed with empty queues, its 3 MB pipeline transfers were never
    // cut to DCQCN's minimum rate as at the packet level and took 146 us instead of 405 us; the iteration
    // went 1.2 % early (docs/history/wormhole-skipping.md). A flow's bytes count on every port of its data path:
    // where along it they queued the replay does not know.
    bool leaves_a_signalling_queue_out(const std::vector<uint32_t>& flows, const std::vector<double>& unplayed);

    // Whether the leader partition a follower waits on is still measuring the transient it was probed with.
    bool leading(const PartState& f) const;

    // A memo miss at `now` whose conflict graph matches a leader that missed at the same instant (the
    // same collective step in several DP groups or pipeline pairs of a symmetric job): instead of measuring
    // the same transient again at the packet level, the partition freezes open-ended and waits for the
    // leader (Wormhole's reuse across partitions with matching contention patterns). Returns whether it did.
    bool follow(uint32_t id, int64_t now, const FlowConflictGraph& g, const std::vector<uint32_t>& vertex_flows);

    // Ends a follower's wait at `now`: its events resume there, each flow credited what its leader flow got
    // acknowledged since t0 plus the difference in bytes in flight (pipeline_refill, as a memo replay; the
    // follower's pipeline is as it was at t0), never more than leaves the flow its bytes in flight and one credit unit; its
    // congestion control takes the leader flow's rate state. The leader was simulated at the packet level
    // from the same state over the same span, so the follower is where it would have been, within the
    // quantization of the conflict graph's labels.
    void mirror(uint32_t id, int64_t now);

    // The leader `id` ended its transient steady at `now` with `rate` for its flows `flows`: its followers are
    // mirrored and go straight into a steady skip at their matching flows' rates.
    void release_followers_steady(uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate, double horizon);

    // Whether a leader flow has begun its last packets (fewer than two credit units left to send): the
    // follower then plays its own tail at the packet level, as a memo replay does.
    bool leader_in_tail(const PartState& p) const;

    // Followers whose leader stopped measuring (its first flow finished, or its membership changed), or
    // whose deadline would fall inside the next step, are mirrored now.
    void settle_followers(int64_t end, int64_t next);

    void sample(int64_t now);

    // Flows the conflict graph cannot tell apart (one Weisfeiler-Lehman colour: the same label and the same
    // labelled neighbourhood) whose window means differ by no more than their sampling noise take their common
    // mean. At the packet level such flows run in lockstep: a symmetric collective's flows finish together.
    // Extrapolated each at its own noisy mean over milliseconds, they finished microseconds apart; the next
    // step's flows then started apart, and HPCC, whose multiplicative decrease keeps the ratio of windows,
    // held the unequal shares that made for milliseconds (GPT-3 13B: the 16 flows of one all-reduce at 46
    // and 81 Gb/s, +50 % FCT, wherever a credit moved by a few bytes; docs/history/wormhole-skipping.md).
    void average_within_classes(uint32_t id, const std::vector<uint32_t>& flows, std::vector<double>& rate, uint32_t l);

    void store_transient(PartState& p, uint32_t id, int64_t now, const std::vector<uint32_t>& flows, const std::vector<double>& rate);

    // A measured transient into this experiment's memo (and its report), unless an isomorphic one is there or it is too
    // short ever to be replayed.
    void remember(MemoEntry entry, int64_t at, uint32_t id);

    // The first flow of a partition with a transient under measurement finished: the transient is stored up
    // to the last rate sample before the completion (a replay then leaves the last stretch, under one sampling
    // interval, to the packet level, which finishes the flow). A transient cut short by a flow joining is not
    // stored: storing it up to the last sample made MoE 8x13B's first run slower (DCQCN: 41.8 % -> 34.0 % of
    // events skipped, the same hits).
    void store_completion(uint32_t id);

    // A sample of a partition whose transient is under measurement: a checkpoint while every flow still has
    // at least two packets' worth to send.
    void checkpoint(PartState& p, int64_t now);

    int64_t after_step(int64_t end, int64_t next, uint32_t done);

    // The experiment's next event moved before the end of the earliest completion skip: a step must end
    // exactly there (the runner's window stops at completion_due()), so its flows finish before anything
    // after them is handled.
    int64_t wake(int64_t next) const;
};

}  // namespace orrery::wormhole
