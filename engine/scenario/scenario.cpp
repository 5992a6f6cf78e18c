#include "scenario/scenario.h"

#include <cmath>

namespace orrery {

const char* cc_algorithm_name(CcAlgorithm a) {
    switch (a) {
#define ORRERY_CC_NAME(Name, name, ...) \
    case CcAlgorithm::name: return #name;
        ORRERY_CC_LIST(ORRERY_CC_NAME)
#undef ORRERY_CC_NAME
    }
    return "?";
}

std::optional<CcAlgorithm> cc_algorithm_named(std::string_view text) {
#define ORRERY_CC_NAMED(Name, name, ...) \
    if (text == #name) return CcAlgorithm::name;
    ORRERY_CC_LIST(ORRERY_CC_NAMED)
#undef ORRERY_CC_NAMED
    return std::nullopt;
}

const std::vector<std::string>& cc_algorithm_names() {
#define ORRERY_CC_NAME_ITEM(Name, name, ...) #name,
    static const std::vector<std::string> names = {ORRERY_CC_LIST(ORRERY_CC_NAME_ITEM)};
#undef ORRERY_CC_NAME_ITEM
    return names;
}

int hpcc_cc_mode(CcAlgorithm a) {
    switch (a) {
#define ORRERY_CC_REFERENCE(Name, name, id, reference, ...) \
    case CcAlgorithm::name: return reference;
        ORRERY_CC_LIST(ORRERY_CC_REFERENCE)
#undef ORRERY_CC_REFERENCE
    }
    return 0;
}

bool cc_windowed_by_default(CcAlgorithm a) {
    switch (a) {
#define ORRERY_CC_WINDOWED(Name, name, id, reference, State, extra, ack, hops, send_time, windowed) \
    case CcAlgorithm::name: return windowed;
        ORRERY_CC_LIST(ORRERY_CC_WINDOWED)
#undef ORRERY_CC_WINDOWED
    }
    return false;
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

const std::vector<std::string>& topology_node_names(const TopologySpec& t) {
    static const std::vector<std::string> none;
    const ExplicitTopology* e = std::get_if<ExplicitTopology>(&t.source);
    return e ? e->node_names : none;
}

}  // namespace orrery
