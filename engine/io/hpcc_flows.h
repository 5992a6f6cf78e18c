#pragma once
// The HPCC flow.txt (reference/ns3-hpcc README §3.2):
//   F
//   src dst pg dport size start_s        F lines, sorted by start time
// Start times are read as the reference reads them: Seconds(double(start_s)) in ns-3's 64.64 fixed point,
// truncated to ns — so "2.000000026" starts at 2000000025 ns, as in the reference's FCT file.
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
