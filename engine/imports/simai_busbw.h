#pragma once
// SimAI's analytical estimate (SimAI_analytical, "busbw" mode), for a SimAI user to reproduce their SimAI
// numbers in Orrery before seeing what contention changes. It is a closed form, not a simulation: per
// layer record of an AICB workload, each collective takes
//     bytes / (busbw · ratio) · factor      (factor 2(n−1)/n for all-reduce, (n−1)/n otherwise)
// where busbw comes from the NVLink and NIC bus bandwidths, GPUs and NICs per server and the group's span
// over servers (SimAI's calbusbw rules), and ratio is SimAI's measured efficiency at that message size
// (data/simai_busbw_ratios.json); messages of 1 B – 1 MiB take SimAI's fixed latency by group size. The
// iteration is the sum over records of compute + exposed collectives (the dp/tp/ep overlap switches hide
// that share of them), plus the pipeline bubble (PP − 1)/(GA · vpp) of the forward and backward work, plus
// the exposed pipeline transfers (pp overlap). Bandwidths are in SimAI's GB/s, GB = 2^30 bytes.
#include <string>
#include <vector>

#include "imports/simai_workload.h"
#include "workload/spec.h"

namespace orrery {

class PresetLibrary;

// SimAI's ratio tables: per table, rows of [bytes, column 1 … 11].
struct BusbwRatios {
    std::vector<std::vector<double>> nic, nvlink, all_to_all;
};
BusbwRatios load_busbw_ratios(const PresetLibrary& presets);

struct BusbwEstimate {
    double exposed_dp_s = 0, exposed_dp_ep_s = 0, exposed_tp_s = 0, exposed_ep_s = 0, exposed_pp_s = 0;
    double bubble_s = 0, compute_s = 0, exposed_s = 0, total_s = 0;
};

// Throws InputError naming the file when a message is larger than SimAI's tables reach (16 GiB; SimAI
// itself aborts there) or the world does not split into the header's TP × PP.
BusbwEstimate simai_busbw_estimate(const SimaiWorkload& w, int world, const BusbwParams& p, const BusbwRatios& ratios);

// The estimate of an experiment's SimAI import: reads the file, completes its parallelism from the scenario
// (import_job.h) on a fabric of `hosts` GPUs, estimates. What `run` and `validate` both do.
BusbwEstimate estimate_simai_import(const LlmWorkload& w, uint32_t hosts, const BusbwRatios& ratios, Diagnostics& warnings);

// The estimate as an LLM outcome (one breakdown standing for every rank: SimAI's is per iteration, not per
// rank), with the world size taken from the fabric's hosts.
struct LlmOutcome;
LlmOutcome busbw_outcome(const BusbwEstimate& e);

}  // namespace orrery
