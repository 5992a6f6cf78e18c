#pragma once
// ASTRA-sim's analytical network YAML (reference/formats/astra-network-yaml): one entry per dimension,
// innermost first, of topology (Ring, FullyConnected, Switch), npus_count, bandwidth (GB/s, GB = 2^30 B,
// per link and direction) and latency (ns per link).
//
// As a fabric: NPUs are hosts that forward (Ring and FullyConnected links join NPUs directly); a Switch
// dimension adds one switch per group of NPUs. NPU id = mixed radix over the dimensions, dimension 0 fastest.
#include <filesystem>
#include <string>
#include <vector>

#include "topology/fabric.h"

namespace orrery {

struct AstraDimension {
    std::string topology;  // "Ring", "FullyConnected" or "Switch"
    int npus = 0;
    double bandwidth_gib_per_s = 0;
    double latency_ns = 0;
};

std::vector<AstraDimension> read_astra_yaml(const std::string& text, const std::string& source);
Fabric astra_fabric(const std::vector<AstraDimension>& dims, const std::string& name);
Fabric read_astra_yaml_file(const std::filesystem::path& file);

}  // namespace orrery
