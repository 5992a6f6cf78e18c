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

// A rate put into a flow, held to its own line rate and the experiment's minimum rate.
uint64_t held_rate(const ExperimentParams& ep, const QpState& q, uint64_t bps) {
    return std::clamp<uint64_t>(bps, std::min<uint64_t>(ep.min_rate, q.max_rate), q.max_rate);
}

void take_timer(int64_t due, int64_t scheduled, int64_t now, int64_t& in, int64_t& since) {
    in = due == kNever ? -1 : std::max<int64_t>(0, due - now);
    since = due == kNever ? 0 : std::max<int64_t>(0, now - scheduled);
}

void put_timer(int64_t in, int64_t since, int64_t resume, int64_t& due, int64_t& scheduled) {
    due = in < 0 ? kNever : resume + in;
    scheduled = resume - since;
}

const char* cc_name(uint8_t mode) { return cc_algorithm_name(CcAlgorithm(mode)); }

}  // namespace

CcSnapshot take_cc_snapshot(const Batch& b, uint32_t f, int64_t now) {
    CcSnapshot s;
    s.cc_mode = params_of(b, f).cc_mode;
    s.rate_bps = b.qp[f].rate;
    switch (s.cc_mode) {
        case kDcqcn: {
            const DcqcnState& d = b.dcqcn[f];
            s.alpha = d.alpha;
            s.target_bps = d.target_rate;
            s.stage = d.rp_stage;
            s.first_cnp = d.first_cnp, s.alpha_cnp = d.alpha_cnp, s.decrease_cnp = d.decrease_cnp;
            take_timer(d.t_alpha, d.s_alpha, now, s.timer_in_ps[0], s.timer_since_ps[0]);
            take_timer(d.t_decrease, d.s_decrease, now, s.timer_in_ps[1], s.timer_since_ps[1]);
            take_timer(d.t_rp, d.s_rp, now, s.timer_in_ps[2], s.timer_since_ps[2]);
            break;
        }
        case kHpcc:
            s.u = b.hpcc[f].u;
            s.stage = uint32_t(b.hpcc[f].inc_stage);
            s.cc_rate_bps = b.hpcc[f].cur_rate;
            break;
        case kTimely:
            s.rtt_diff = b.timely[f].rtt_diff;
            s.stage = b.timely[f].inc_stage;
            s.cc_rate_bps = b.timely[f].cur_rate;
            break;
        case kDctcp: s.alpha = b.dctcp[f].alpha; break;
    }
    return s;
}

void put_cc_snapshot(Batch& b, uint32_t f, const CcSnapshot& s, int64_t resume) {
    const ExperimentParams& ep = params_of(b, f);
    if (s.cc_mode != ep.cc_mode) throw std::logic_error("a congestion-control snapshot put into a flow of another CC");
    mark_host_wrote(b, b.flow[f].src);
    QpState& q = b.qp[f];
    auto held = [&](uint64_t bps) { return held_rate(ep, q, bps); };
    q.rate = held(s.rate_bps);
    switch (s.cc_mode) {
        case kDcqcn: {
            DcqcnState& d = b.dcqcn[f];
            d.alpha = s.alpha;
            d.target_rate = held(s.target_bps);
            d.rp_stage = s.stage;
            d.first_cnp = s.first_cnp, d.alpha_cnp = s.alpha_cnp, d.decrease_cnp = s.decrease_cnp;
            put_timer(s.timer_in_ps[0], s.timer_since_ps[0], resume, d.t_alpha, d.s_alpha);
            put_timer(s.timer_in_ps[1], s.timer_since_ps[1], resume, d.t_decrease, d.s_decrease);
            put_timer(s.timer_in_ps[2], s.timer_since_ps[2], resume, d.t_rp, d.s_rp);
            break;
        }
        case kHpcc:
            b.hpcc[f].u = s.u;
            b.hpcc[f].inc_stage = int32_t(s.stage);
            b.hpcc[f].cur_rate = held(s.cc_rate_bps);
            break;
        case kTimely:
            b.timely[f].rtt_diff = s.rtt_diff;
            b.timely[f].inc_stage = s.stage;
            b.timely[f].cur_rate = held(s.cc_rate_bps);
            break;
        case kDctcp: b.dctcp[f].alpha = s.alpha; break;
    }
}

void age_hpcc_through_steady(Batch& b, uint32_t f, double steady_ps, double round_ps, double share_bps, double theta) {
    const ExperimentParams& ep = params_of(b, f);
    if (ep.cc_mode != kHpcc || ep.multi_rate || !(round_ps > 0) || !(steady_ps > 0)) return;
    HpccState& h = b.hpcc[f];
    const double max_c = h.u / ep.target_util;
    const double r0 = double(h.cur_rate);
    // Within θ of η the flow is at HPCC's equilibrium and u only jitters around it: compounded over the 210
    // rounds of a 0.9 ms skip, a u of 1.002 η cut two lockstep flows to their shares and split their finishes by
    // 1 µs (test_wormhole: flows_alike_keep_their_lockstep).
    if (!(max_c > 1 + theta) || !(r0 > share_bps)) return;
    // Rounds counted whole put the forwarded flows 0.4 % early (the skip's last part round left out); as a
    // fraction, the expected decay over the skip.
    const double keep = 1 / max_c, kept = std::pow(keep, steady_ps / round_ps);
    const double aged = std::max(share_bps, kept * r0 + double(ep.rate_ai) * (1 - kept) / (1 - keep));
    if (aged >= r0) return;
    QpState& q = b.qp[f];
    mark_host_wrote(b, b.flow[f].src);
    q.rate = held_rate(ep, q, uint64_t(double(q.rate) * aged / r0));  // the per-ACK rate keeps its ratio to the reference rate
    h.cur_rate = held_rate(ep, q, uint64_t(aged));
}

nlohmann::json cc_snapshot_json(const CcSnapshot& s) {
    nlohmann::json j = {{"cc", cc_name(s.cc_mode)}, {"rate_bps", s.rate_bps}};
    switch (s.cc_mode) {
        case kDcqcn:
            j["alpha"] = s.alpha, j["target_bps"] = s.target_bps, j["stage"] = s.stage;
            j["first_cnp"] = s.first_cnp, j["alpha_cnp"] = s.alpha_cnp, j["decrease_cnp"] = s.decrease_cnp;
            j["timer_in_ps"] = s.timer_in_ps, j["timer_since_ps"] = s.timer_since_ps;
            break;
        case kHpcc: j["u"] = s.u, j["stage"] = s.stage, j["cc_rate_bps"] = s.cc_rate_bps; break;
        case kTimely: j["rtt_diff"] = s.rtt_diff, j["stage"] = s.stage, j["cc_rate_bps"] = s.cc_rate_bps; break;
        case kDctcp: j["alpha"] = s.alpha; break;
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
        case kDcqcn:
            field("alpha", s.alpha), field("target_bps", s.target_bps), field("stage", s.stage);
            field("first_cnp", s.first_cnp), field("alpha_cnp", s.alpha_cnp), field("decrease_cnp", s.decrease_cnp);
            field("timer_in_ps", s.timer_in_ps), field("timer_since_ps", s.timer_since_ps);
            break;
        case kHpcc: field("u", s.u), field("stage", s.stage), field("cc_rate_bps", s.cc_rate_bps); break;
        case kTimely: field("rtt_diff", s.rtt_diff), field("stage", s.stage), field("cc_rate_bps", s.cc_rate_bps); break;
        case kDctcp: field("alpha", s.alpha); break;
    }
    return s;
}

}  // namespace orrery::wormhole
