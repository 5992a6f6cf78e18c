#pragma once
// A custom collective algorithm (MSCCL XML or an MSCCL++ execution plan, read by engine/imports/msccl.*)
// reduced to what timing needs: per GPU of the algorithm, operations that either move a number of chunks to
// another GPU or only wait, each after the operations it depends on — the previous step of its thread
// block, an explicit dependency, and for a receive the matching send of the peer. Plain data; emitted for
// every collective of its kind whose group has `gpus` members (member i plays GPU i).
#include <cstdint>
#include <string>
#include <vector>

#include "workload/tables.h"

namespace orrery {

struct CustomOp {
    int32_t gpu = 0;                 // the GPU it runs on
    int32_t send_to = -1;            // ≥ 0: moves `chunks` chunks to this GPU; -1: waits only (receive, copy, reduce, nop)
    double chunks = 0;               // in units of the collective's bytes / chunks_per_loop
    std::vector<uint32_t> after;     // indices into CustomAlgorithm::ops this op starts after
};

struct CustomAlgorithm {
    std::string name;                // the algorithm's own name
    std::string source;              // the file it came from, for messages
    CollectiveKind kind = CollectiveKind::all_reduce;
    int gpus = 0;
    int chunks_per_loop = 1;
    std::vector<CustomOp> ops;       // every GPU's ops; `after` may point anywhere (the graph is checked acyclic)
};

}  // namespace orrery
