#include "scenario/scenario.h"

namespace orrery {

const char* fabric_file_format_name(FabricFileFormat f) {
    switch (f) {
        case FabricFileFormat::hpcc: return "hpcc";
        case FabricFileFormat::simai: return "simai";
        case FabricFileFormat::astra_yaml: return "astra-yaml";
        case FabricFileFormat::graphml: return "graphml";
        case FabricFileFormat::dot: return "dot";
    }
    return "?";
}

const char* cc_algorithm_name(CcAlgorithm a) {
    switch (a) {
        case CcAlgorithm::dcqcn: return "dcqcn";
        case CcAlgorithm::hpcc: return "hpcc";
        case CcAlgorithm::timely: return "timely";
        case CcAlgorithm::dctcp: return "dctcp";
    }
    return "?";
}

int hpcc_cc_mode(CcAlgorithm a) {
    switch (a) {
        case CcAlgorithm::dcqcn: return 1;
        case CcAlgorithm::hpcc: return 3;
        case CcAlgorithm::timely: return 7;
        case CcAlgorithm::dctcp: return 8;
    }
    return 0;
}

std::optional<EcnThreshold> ecn_for_rate(const Scenario& s, BitsPerSecond rate) {
    const std::vector<EcnThreshold>& table = !s.cc.ecn.empty() ? s.cc.ecn : s.network.ecn;
    if (!table.empty()) {
        for (const EcnThreshold& t : table)
            if (t.rate == rate) return t;
        return std::nullopt;
    }
    // The reference's run.py: kmin = 4 KB and kmax = 16 KB per Gb/s of port rate, pmax = 0.2.
    const int64_t gbit = rate.count / 1'000'000'000;
    return EcnThreshold{rate, Bytes(4000 * gbit), Bytes(16000 * gbit), 0.2};
}

}  // namespace orrery
