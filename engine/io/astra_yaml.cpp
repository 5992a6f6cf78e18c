#include "io/astra_yaml.h"

#include <cmath>

#include <yaml-cpp/yaml.h>

#include "common/diagnostics.h"
#include "scenario/load.h"

namespace orrery {

std::vector<AstraDimension> read_astra_yaml(const std::string& text, const std::string& source) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(source + ":" + std::to_string(e.mark.line + 1), "not valid YAML: " + e.msg);
    }
    if (!root.IsMap()) throw InputError(source, "expected a mapping with topology, npus_count, bandwidth and latency");
    auto where = [&](const YAML::Node& n) { return source + ":" + std::to_string(n.Mark().line + 1); };
    std::vector<YAML::Node> lists;
    for (const char* key : {"topology", "npus_count", "bandwidth", "latency"}) {
        YAML::Node n = root[key];
        if (!n) throw InputError(source, std::string("missing \"") + key + "\": expected a list with one entry per dimension");
        if (!n.IsSequence() || n.size() == 0) throw InputError(where(n), std::string("\"") + key + "\" must be a non-empty list, one entry per dimension");
        lists.push_back(n);
    }
    const size_t dims = lists[0].size();
    for (size_t i = 1; i < lists.size(); ++i)
        if (lists[i].size() != dims)
            throw InputError(where(lists[i]), "every list needs one entry per dimension: topology has " + std::to_string(dims) +
                                                  ", this one " + std::to_string(lists[i].size()));
    std::vector<AstraDimension> out(dims);
    for (size_t d = 0; d < dims; ++d) {
        const std::string dim = " of dimension " + std::to_string(d);
        auto scalar = [&](const YAML::Node& n, const char* what) {
            if (!n.IsScalar()) throw InputError(where(n), std::string("expected ") + what + dim);
            return n.Scalar();
        };
        out[d].topology = scalar(lists[0][d], "a topology name");
        if (out[d].topology != "Ring" && out[d].topology != "FullyConnected" && out[d].topology != "Switch")
            throw InputError(where(lists[0][d]), "unknown topology \"" + out[d].topology + "\"" + dim + "; ASTRA-sim knows Ring, FullyConnected and Switch");
        auto number = [&](const YAML::Node& n, const char* what) {
            std::string s = scalar(n, what);
            char* end = nullptr;
            double v = std::strtod(s.c_str(), &end);
            if (end != s.c_str() + s.size() || !std::isfinite(v)) throw InputError(where(n), std::string("expected ") + what + dim + ", found \"" + s + "\"");
            return v;
        };
        double npus = number(lists[1][d], "an NPU count");
        if (npus != std::floor(npus) || npus < 2 || npus > 1e6) throw InputError(where(lists[1][d]), "NPU count" + dim + " must be an integer > 1, found " + lists[1][d].Scalar());
        out[d].npus = int(npus);
        out[d].bandwidth_gib_per_s = number(lists[2][d], "a bandwidth in GB/s");
        if (out[d].bandwidth_gib_per_s <= 0) throw InputError(where(lists[2][d]), "bandwidth" + dim + " must be > 0 GB/s");
        out[d].latency_ns = number(lists[3][d], "a latency in ns");
        if (out[d].latency_ns < 0) throw InputError(where(lists[3][d]), "latency" + dim + " must be ≥ 0 ns");
    }
    double total = 1;
    for (const AstraDimension& d : out) total *= d.npus;
    if (total > 1e6) throw InputError(source, "the dimensions multiply to over 1,000,000 NPUs");
    return out;
}

Fabric astra_fabric(const std::vector<AstraDimension>& dims, const std::string& name) {
    Fabric f;
    f.name = name;
    f.hosts_forward = true;
    int total = 1;
    for (const AstraDimension& d : dims) total *= d.npus;
    for (int n = 0; n < total; ++n) add_node(f, NodeKind::host, 0);
    int stride = 1;
    for (size_t di = 0; di < dims.size(); ++di) {
        const AstraDimension& d = dims[di];
        // GB/s with GB = 2^30 bytes, per direction.
        const BitsPerSecond rate(std::llround(d.bandwidth_gib_per_s * 1073741824.0 * 8));
        const Picoseconds delay(std::llround(d.latency_ns * 1000));
        const int groups = total / d.npus;
        for (int g = 0; g < groups; ++g) {
            // Members of group g along this dimension: the ids whose digit di varies.
            const int base = (g / stride) * stride * d.npus + g % stride;
            auto member = [&](int i) { return NodeId(base + i * stride); };
            if (d.topology == "Ring") {
                for (int i = 0; i < d.npus; ++i)
                    if (d.npus > 2 || i == 0) add_link(f, member(i), member((i + 1) % d.npus), rate, delay);
            } else if (d.topology == "FullyConnected") {
                for (int i = 0; i < d.npus; ++i)
                    for (int j = i + 1; j < d.npus; ++j) add_link(f, member(i), member(j), rate, delay);
            } else {
                NodeId sw = add_node(f, NodeKind::network_switch, uint8_t(di + 1));
                for (int i = 0; i < d.npus; ++i) add_link(f, member(i), sw, rate, delay);
            }
        }
        stride *= d.npus;
    }
    finalize_ports(f);
    return f;
}

Fabric read_astra_yaml_file(const std::filesystem::path& file) {
    return astra_fabric(read_astra_yaml(read_text_file(file), file.string()), file.string());
}

}  // namespace orrery
