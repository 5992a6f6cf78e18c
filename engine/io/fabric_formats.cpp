#include "io/fabric_formats.h"

#include <sstream>

#include "common/diagnostics.h"
#include "io/astra_yaml.h"
#include "io/fabric_json.h"
#include "io/graph_formats.h"
#include "io/hpcc_topology.h"

namespace orrery {
namespace {

std::string write_orrery(const Fabric& f, const std::filesystem::path& out) {
    const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", out.stem().string()},
                                {"description", "Fabric converted from " + f.name}, {"topology", fabric_to_topology_json(f)}};
    return doc.dump(2) + "\n";
}

std::string write_hpcc(const Fabric& f, const std::filesystem::path& out) {
    if (f.hosts_forward)
        throw InputError(out.string(), "this fabric forwards through its hosts (ASTRA-sim Ring/FullyConnected); the HPCC format has only switches forwarding");
    return write_hpcc_topology(f);
}

std::string write_graphml_file(const Fabric& f, const std::filesystem::path&) { return write_graphml(f); }
std::string write_dot_file(const Fabric& f, const std::filesystem::path&) { return write_dot(f); }

}  // namespace

const std::vector<FabricFormat>& fabric_formats() {
    static const std::vector<FabricFormat> table = {
        {"orrery", ".json", "an Orrery scenario holding the fabric", nullptr, write_orrery},
        {"hpcc", ".txt", "HPCC ns-3 topology.txt", read_hpcc_topology_file, write_hpcc},
        // Written as "hpcc": the HPCC writer gives a fabric with NVLink switches SimAI's header.
        {"simai", ".txt", "SimAI topology (HPCC's with GPUs per server and NVLink)", read_hpcc_topology_file, nullptr},
        {"astra-yaml", ".yml .yaml", "ASTRA-sim network YAML", read_astra_yaml_file, nullptr},
        {"graphml", ".graphml .xml", "GraphML", read_graphml_file, write_graphml_file},
        {"dot", ".dot .gv", "Graphviz DOT", read_dot_file, write_dot_file},
    };
    return table;
}

const FabricFormat* fabric_format_named(std::string_view name) {
    for (const FabricFormat& f : fabric_formats())
        if (name == f.name) return &f;
    return nullptr;
}

const FabricFormat* fabric_format_of_extension(const std::filesystem::path& file) {
    const std::string ext = file.extension().string();
    if (ext.empty()) return nullptr;
    for (const FabricFormat& f : fabric_formats()) {
        std::istringstream list(f.extensions);
        for (std::string e; list >> e;)
            if (e == ext) return &f;
    }
    return nullptr;
}

std::vector<std::string> fabric_format_names(bool readable) {
    std::vector<std::string> names;
    for (const FabricFormat& f : fabric_formats())
        if (readable ? f.read != nullptr : f.write != nullptr) names.push_back(f.name);
    return names;
}

std::string fabric_format_list(bool readable) {
    const std::vector<std::string> names = fabric_format_names(readable);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

}  // namespace orrery
