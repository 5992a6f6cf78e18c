#pragma once
// The reference's output files (reference/ns3-hpcc README §3.3–§3.5), written from a run's results so a
// user of HPCC/SimAI can compare line by line.
#include <string>

#include "runtime/batch.h"
#include "runtime/cpu_runner.h"

namespace orrery {

// fct.txt: "sip dip sport dport size start_ns fct_ns standalone_fct_ns", one line per finished flow, in
// completion order.
std::string format_hpcc_fct(const Batch& b, const ExperimentResult& r);
// pfc.txt: "time_ns node node_type ifindex type", one line per PFC frame received.
std::string format_hpcc_pfc(const ExperimentResult& r);
// qlen.txt: "time: T" blocks of "switch ifindex c0 c1 …" (1 KB buckets, cumulative).
std::string format_hpcc_qlen(const ExperimentResult& r);

}  // namespace orrery
