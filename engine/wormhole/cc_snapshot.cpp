#include "wormhole/cc_snapshot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace orrery::wormhole {
namespace {

using namespace net;

const ExperimentParams& params_of(const Batch& b, uint32_t f) { return b.params[b.node_experiment[b.flow[f].src]]; }

const char* cc_name(uint8_t mode) { return cc_algorithm_name(CcAlgorithm(mode)); }

}  // namespace

CcSnapshot take_cc_snapshot(const Batch& b, uint32_t f, int64_t now) {
    CcSnapshot s;
    s.cc_mode = params_of(b, f).cc_mode;
    s.rate_bps = b.qp[f].rate;
    switch (s.cc_mode) {
#define ORRERY_CC_SNAPSHOT(Name, name, ...) \
    case k##Name: name##_snapshot(b.name[f], now, s); break;
        ORRERY_CC_LIST(ORRERY_CC_SNAPSHOT)
#undef ORRERY_CC_SNAPSHOT
    }
    return s;
}

void put_cc_snapshot(Batch& b, uint32_t f, const CcSnapshot& s, int64_t resume) {
    const ExperimentParams& ep = params_of(b, f);
    if (s.cc_mode != ep.cc_mode) throw std::logic_error("a congestion-control snapshot put into a flow of another CC");
    mark_host_wrote(b, b.flow[f].src);
    QpState& q = b.qp[f];
    q.rate = held_rate(ep, q, s.rate_bps);
    switch (s.cc_mode) {
#define ORRERY_CC_RESTORE(Name, name, ...) \
    case k##Name: name##_restore(b.name[f], s, resume, ep, q); break;
        ORRERY_CC_LIST(ORRERY_CC_RESTORE)
#undef ORRERY_CC_RESTORE
    }
}

void age_hpcc_through_steady(Batch& b, uint32_t f, double steady_ps, double round_ps, double share_bps, double theta) {
    const ExperimentParams& ep = params_of(b, f);
    if (ep.cc_mode != kHpcc || ep.hpcc.multi_rate || !(round_ps > 0) || !(steady_ps > 0)) return;
    HpccState& h = b.hpcc[f];
    const double max_c = h.u / ep.hpcc.eta;
    const double r0 = double(h.cur_rate);
    // Within θ of η the flow is at HPCC's equilibrium and u only jitters around it: compounded over the 210
    // rounds of a 0.9 ms skip, a u of 1.002 η cut two lockstep flows to their shares and split their finishes by
    // 1 µs (test_wormhole: flows_alike_keep_their_lockstep).
    if (!(max_c > 1 + theta) || !(r0 > share_bps)) return;
    // Rounds counted whole put the forwarded flows 0.4 % early (the skip's last part round left out); as a
    // fraction, the expected decay over the skip.
    const double keep = 1 / max_c, kept = std::pow(keep, steady_ps / round_ps);
    const double aged = std::max(share_bps, kept * r0 + double(ep.hpcc.rate_ai) * (1 - kept) / (1 - keep));
    if (aged >= r0) return;
    QpState& q = b.qp[f];
    mark_host_wrote(b, b.flow[f].src);
    q.rate = held_rate(ep, q, uint64_t(double(q.rate) * aged / r0));  // the per-ACK rate keeps its ratio to the reference rate
    h.cur_rate = held_rate(ep, q, uint64_t(aged));
}

nlohmann::json cc_snapshot_json(const CcSnapshot& s) {
    nlohmann::json j = {{"cc", cc_name(s.cc_mode)}, {"rate_bps", s.rate_bps}};
    auto field = [&](const char* name, const auto& value) { j[name] = value; };
    switch (s.cc_mode) {
#define ORRERY_CC_TO_JSON(Name, name, ...) \
    case k##Name: name##_snapshot_fields(s, field); break;
        ORRERY_CC_LIST(ORRERY_CC_TO_JSON)
#undef ORRERY_CC_TO_JSON
    }
    return j;
}

CcSnapshot cc_snapshot_from_json(const nlohmann::json& j) {
    CcSnapshot s;
    const std::string cc = j.at("cc").get<std::string>();
    if (const auto algorithm = cc_algorithm_named(cc)) s.cc_mode = uint8_t(*algorithm);
    else throw std::runtime_error("congestion-control state names an unknown CC \"" + cc + "\"");
    auto field = [&](const char* name, auto& out) {
        if (!j.contains(name)) throw std::runtime_error(std::string("congestion-control state (") + cc + ") lacks \"" + name + "\"");
        j.at(name).get_to(out);
    };
    field("rate_bps", s.rate_bps);
    switch (s.cc_mode) {
#define ORRERY_CC_FROM_JSON(Name, name, ...) \
    case k##Name: name##_snapshot_fields(s, field); break;
        ORRERY_CC_LIST(ORRERY_CC_FROM_JSON)
#undef ORRERY_CC_FROM_JSON
    }
    return s;
}

}  // namespace orrery::wormhole
