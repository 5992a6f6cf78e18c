#pragma once
// How evenly a run used each switch tier's uplinks, read from the batch's tables once an experiment ends: per
// tier, the busiest uplink's bytes per unit of capacity over the tier's mean (1: perfectly even). ECMP's hash
// collisions, a failed link's neighbours and adaptive routing's spreading show here before they show in FCTs.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"

namespace orrery {

struct TierImbalance {
    int tier = 0;        // the switches' tier (1: leaves / ToRs, 2: spines / aggregation); uplinks go to tier + 1
    uint32_t uplinks = 0;
    double max_over_mean = 1;
};

// Tiers whose uplinks carried anything, lowest first. Bytes are what each switch port sent (PortTx::tx_bytes):
// with steady-state skipping, the stepped spans only (skipped spans credit flows, not ports).
std::vector<TierImbalance> uplink_imbalance(const Batch& b, uint32_t e);

}  // namespace orrery
