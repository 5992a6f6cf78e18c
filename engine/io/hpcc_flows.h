#pragma once
// The HPCC flow.txt (reference/ns3-hpcc README §3.2):
//   F
//   src dst pg dport size start_s        F lines, sorted by start time
// Start times are read as the reference reads them: floor(double(start_s) · 1e9) ns.
#include <filesystem>
#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace orrery {

std::vector<FlowSpec> read_hpcc_flows(const std::string& text, const std::string& source);
std::vector<FlowSpec> read_hpcc_flow_file(const std::filesystem::path& file);

// Throws InputError when a start time has no exact nanosecond (the format's resolution).
std::string write_hpcc_flows(const std::vector<FlowSpec>& flows);

}  // namespace orrery
