#pragma once
// A flow's congestion-control state, taken from one flow and put into another (Wormhole §4: a memo replay
// or a mirrored follower resumes "where the stored flow was"). The rate alone is not that state: DCQCN
// raises a cut rate only from its rate-increase timer toward its target rate, so a flow given a stored flow's
// low rate without its target and running timer (a flow that never saw a CNP has none) keeps that rate until
// a CNP comes, for milliseconds (GPT-3 175B: 3 MB pipeline transfers 134 µs → 1.2 ms; docs/history/wormhole-skipping.md).
//
// What each CC keeps of its state, and how, is its own code (net/cc_snapshot.h, each net/cc_<name>.h); here are the
// functions the skipper calls, dispatched on the flow's CC through net/cc_list.h.
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "net/cc.h"
#include "runtime/batch.h"

namespace orrery::wormhole {

using net::CcSnapshot;

// The state of flow row `f` at time `now`.
CcSnapshot take_cc_snapshot(const Batch& b, uint32_t f, int64_t now);
// Flow row `f` takes `s` as its state, resuming at `resume`: its timers run from there. The rates are held
// to the flow's own line rate and the experiment's minimum rate.
void put_cc_snapshot(Batch& b, uint32_t f, const CcSnapshot& s, int64_t resume);

// HPCC's state of flow row `f` aged through `steady_ps` of a skip in which the flow kept the throughput
// `share_bps` (on the wire: its payload rate with the packets' headers). At the packet level, while the hop it reports stays over the target utilization (u/η > 1), HPCC
// divides its reference rate by u/η and adds its additive step once a round trip (`round_ps`); a flow held to its
// share by its NIC's round robin keeps its throughput meanwhile, so the rate falls toward the share without
// the samples showing it. A skip that left the rate where it froze resumed such flows with a window too wide
// for their share (MoE 8x13B: the forwarded half of each all-to-all 1 % early). The rate falls by that rule, never
// below the share; nothing changes for other CCs, for HPCC with per-hop rates, or where u/η is within θ of 1
// (HPCC's equilibrium, where u only jitters).
void age_hpcc_through_steady(Batch& b, uint32_t f, double steady_ps, double round_ps, double share_bps, double theta);

// The memo file's form: a JSON object with the fields of its CC only. Throws std::runtime_error naming a
// missing or malformed field.
nlohmann::json cc_snapshot_json(const CcSnapshot& s);
CcSnapshot cc_snapshot_from_json(const nlohmann::json& j);

}  // namespace orrery::wormhole
