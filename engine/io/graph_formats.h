#pragma once
// DOT and GraphML for fabrics, through Boost.Graph's readers and writers. Nodes carry kind, tier, server
// and group; links carry rate, delay, error_rate and their index, so a fabric read back has the same ports
// in the same order. Fabric-wide facts (gpus_per_server, gpu_type, hosts_forward) are graph attributes.
#include <filesystem>
#include <string>

#include "topology/fabric.h"

namespace orrery {

std::string write_graphml(const Fabric& f);
std::string write_dot(const Fabric& f);
Fabric read_graphml(const std::string& text, const std::string& source);
Fabric read_dot(const std::string& text, const std::string& source);
Fabric read_graphml_file(const std::filesystem::path& file);
Fabric read_dot_file(const std::filesystem::path& file);

// "h3", "s16", "nv2": the names exporters give nodes that have none.
std::string default_node_name(const Fabric& f, NodeId n);

}  // namespace orrery
