#include "scenario/scenario.h"

#include <cmath>

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

EcnThreshold ecn_for_rate(const Scenario& s, BitsPerSecond rate, std::optional<EcnThreshold>* derived_from) {
    if (derived_from) derived_from->reset();
    const std::vector<EcnThreshold>& table = !s.cc.ecn.empty() ? s.cc.ecn : s.network.ecn;
    if (table.empty()) {
        // The reference's run.py: kmin = 4 KB and kmax = 16 KB per Gb/s of port rate, pmax = 0.2.
        const int64_t gbit = rate.count / 1'000'000'000;
        return EcnThreshold{rate, Bytes(4000 * gbit), Bytes(16000 * gbit), 0.2};
    }
    for (const EcnThreshold& t : table)
        if (t.rate == rate) return t;
    // Not in the table: the entry of the nearest rate (by ratio), scaled in proportion to rate, as run.py
    // scales its thresholds with the link rate.
    const EcnThreshold* nearest = &table.front();
    auto distance = [&](const EcnThreshold& t) { return std::abs(std::log(double(t.rate.count) / double(rate.count))); };
    for (const EcnThreshold& t : table)
        if (distance(t) < distance(*nearest)) nearest = &t;
    if (derived_from) *derived_from = *nearest;
    const long double scale = (long double)rate.count / (long double)nearest->rate.count;
    return EcnThreshold{rate, Bytes(int64_t(std::llround(nearest->kmin.count * scale))), Bytes(int64_t(std::llround(nearest->kmax.count * scale))), nearest->pmax};
}

}  // namespace orrery
