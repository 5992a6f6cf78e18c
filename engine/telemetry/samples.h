#pragma once
// Telemetry samples of one experiment at one moment, read from the batch's tables on the host: the
// egress occupancy of every switch port (the bytes queued in priorities 1–7, as the reference monitors
// them), its max / p99 / median per switch tier, and the current rate of every active flow.
#include <vector>

#include "runtime/batch.h"
#include "telemetry/results_store.h"

namespace orrery {

struct SampleSet {
    std::vector<QueueSample> queues;  // ports with bytes queued only (the others are empty)
    std::vector<TierSample> tiers;    // every switch port counts, empty ones too
    std::vector<RateSample> rates;    // active flows
};

SampleSet take_samples(const Batch& b, uint32_t experiment, bool queues, bool rates);

}  // namespace orrery
