#pragma once
// The HPCC ns-3 topology.txt and its SimAI variant (reference/ns3-hpcc README §3.1,
// reference/formats/simai-topology README). The header decides the variant:
//   HPCC:  N S L                                   then S switch ids, then L links "a b rate delay err"
//   SimAI: N gpus_per_server V S L gpu_type         then V NVSwitch ids and S switch ids, then L links
#include <filesystem>
#include <string>

#include "topology/fabric.h"

namespace orrery {

Fabric read_hpcc_topology(const std::string& text, const std::string& source);
Fabric read_hpcc_topology_file(const std::filesystem::path& file);

// Writes the SimAI variant when the fabric has NVSwitches, the HPCC one otherwise. Rates and delays are
// written exactly ("100Gbps", "1000ns"), so reading the file back gives the same fabric.
std::string write_hpcc_topology(const Fabric& f);

}  // namespace orrery
