#pragma once
// A fabric as an Orrery scenario's explicit topology section ({"nodes": [...], "links": [...]}).
#include <nlohmann/json.hpp>

#include "topology/fabric.h"

namespace orrery {
nlohmann::json fabric_to_topology_json(const Fabric& f);
}
