#pragma once
// SimAI / AICB workload files (.txt): line 1 the parallelism header (policy, then `key: value` pairs —
// the legacy AICB header carries only model_parallel_NPU_group), line 2 the record count, then records of 12
// whitespace-separated fields (name, placeholder, then compute ns / collective / bytes for forward,
// input-gradient and weight-gradient, then the delay after each collective in ns). Syntax and semantics as
// SimAI's reader has them (see engine/imports/README.md); where real files are inconsistent the reader
// warns and does what a careful user expects (a count that does not match: the records that are there).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "workload/collectives.h"
#include "workload/graph.h"

namespace orrery {

enum class SimaiGroup : uint8_t { none, tp, dp, ep, dp_ep };

struct SimaiComm {
    SimaiGroup group = SimaiGroup::none;   // none: no communication
    CollectiveKind kind = CollectiveKind::all_reduce;
    int64_t bytes = 0;
};

struct SimaiRecord {
    std::string name;
    int line = 0;
    int64_t forward_ns = 0, input_grad_ns = 0, weight_grad_ns = 0, delay_ns = 0;
    SimaiComm forward, input_grad, weight_grad;
};

struct SimaiWorkload {
    std::string source;
    std::string policy;                    // HYBRID_TRANSFORMER_FWD_IN_BCKWD, MICRO, …
    int tp = 1, ep = 1, pp = 1, vpp = 0, ga = 1, all_gpus = 0;  // all_gpus 0: not in the header
    int64_t pp_comm = 0;                   // bytes between pipeline stages per pass
    std::map<std::string, int64_t> header_keys;  // the `key: value` pairs line 1 really has
    std::vector<SimaiRecord> records;
};

// Throws InputError naming file:line for what cannot be read; warnings for what SimAI would mishandle.
SimaiWorkload read_simai_workload(const std::string& text, const std::string& source, Diagnostics& warnings);

// The task graph of `iterations` iterations on `world` ranks (rank = tp + TP·(dp + DP·pp), TP inside a
// server). Throws InputError when the header's sizes do not fit the world. `lockstep`: one lane per
// pipeline stage (TaskGraph::lockstep), each collective one task over all the stage's groups.
TaskGraph build_simai_graph(const SimaiWorkload& w, const CollectiveContext& c, uint32_t world, int iterations, bool lockstep = false);

}  // namespace orrery
