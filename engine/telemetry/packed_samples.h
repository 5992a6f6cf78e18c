#pragma once
// A sample time's port occupancies and flow rates packed into one blob each (results store schema 2:
// `queue_sample_sets`, `flow_rate_sets`), instead of a row and an index entry per port or flow. Entries are
// sorted by id and written as unsigned LEB128 varints — the id as the difference from the previous entry's
// (ports: node difference, then ifindex), then the value — so a port or a flow costs a few bytes.
#include <cstddef>
#include <string>
#include <vector>

#include "telemetry/results_store.h"

namespace orrery {

std::string pack_queue_samples(std::vector<QueueSample> ports);
std::string pack_rate_samples(std::vector<RateSample> rates);
// The entries in id order. std::runtime_error for a blob that is not one of the above (cut short, a varint
// longer than 64 bits, an id that overflows): the caller names the store.
std::vector<QueueSample> unpack_queue_samples(const std::string& blob);
std::vector<RateSample> unpack_rate_samples(const std::string& blob);

}  // namespace orrery
