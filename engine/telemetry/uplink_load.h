#pragma once
// How evenly a run used each switch tier's uplinks, read from the batch's tables once an experiment ends: per
// tier, the busiest uplink's bytes per unit of capacity over the tier's mean (1: perfectly even). ECMP's hash
// collisions, a failed link's neighbours and adaptive routing's spreading show here before they show in FCTs.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"
#include "telemetry/results_store.h"

namespace orrery {

struct TierImbalance {
    int tier = 0;        // the switches' tier (1: leaves / ToRs, 2: spines / aggregation); uplinks go to tier + 1
    uint32_t uplinks = 0;
    double max_over_mean = 1;
};

// Tiers whose uplinks carried anything, lowest first. Bytes are what each switch port sent (PortTx::tx_bytes):
// with steady-state skipping, the stepped spans only (skipped spans credit flows, not ports).
std::vector<TierImbalance> uplink_imbalance(const Batch& b, uint32_t e);

// Each tier's uplinks (in port order) and the time each has spent sending so far, ns: what the live inspector
// turns into each uplink's utilization between two samples.
struct UplinkBusy {
    int tier = 0;
    std::vector<uint64_t> busy_ns;
};
std::vector<UplinkBusy> uplink_busy(const Batch& b, uint32_t e);

// Utilization of each uplink between two samples `dt_ps` apart, in thousandths (capped at 1000); the uplinks
// of `before` and `now` in the same order (an empty `before`: since the start, dt_ps from it).
std::vector<uint16_t> utilization_permille(const std::vector<uint64_t>& before, const std::vector<uint64_t>& now, int64_t dt_ps);

// What the fabric has lost and resent so far in experiment e (results_store.h: FabricCounters).
FabricCounters fabric_counters(const Batch& b, uint32_t e);

}  // namespace orrery
