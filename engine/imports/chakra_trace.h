#pragma once
// Chakra execution traces (ASTRA-sim's workload input): one file per rank, PREFIX.<rank>.et, each a
// sequence of varint-length-prefixed protobuf messages — a GlobalMetadata, then Nodes (et_def.proto here);
// optionally gzipped. Compute nodes replay their recorded duration, collective nodes are matched across
// ranks in dependency order and run over all ranks with the scenario's algorithm, send/receive nodes
// become point-to-point transfers matched by (sender, receiver, tag). Errors name the file and node.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "workload/collectives.h"
#include "workload/graph.h"

namespace orrery {

struct ChakraNode {
    uint64_t id = 0;
    std::string name;
    int type = 0;                          // NodeType: 4 COMP, 5 SEND, 6 RECV, 7 COLL, …
    std::vector<uint64_t> deps;            // data and control dependencies
    uint64_t duration_us = 0;
    int64_t comm_type = -1;                // CollectiveCommType of a COLL node
    int64_t comm_size = 0;                 // bytes
    int64_t comm_src = -1, comm_dst = -1, comm_tag = 0;
    bool has_pg_name = false;
};

struct ChakraRank {
    std::string file;
    std::string version;                   // GlobalMetadata.version or its "schema" attribute
    std::vector<ChakraNode> nodes;
};

// One rank's file contents (gzipped or not). Throws InputError naming `source` and the message at fault.
ChakraRank read_chakra_trace(const std::string& bytes, const std::string& source, Diagnostics& warnings);
// PREFIX.0.et, PREFIX.1.et, … (or .et.gz) until the first missing rank.
std::vector<ChakraRank> read_chakra_traces(const std::filesystem::path& prefix, Diagnostics& warnings);

TaskGraph build_chakra_graph(const std::vector<ChakraRank>& ranks, const CollectiveContext& c, int iterations, Diagnostics& warnings);

}  // namespace orrery
