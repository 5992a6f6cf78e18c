// Map: after_step → thaw partitions whose skip ended → take releases (skip-back where they touch a frozen
// partition) → flows that started (merge partitions) → flows that finished (split) → at sampling times:
// rate samples, memo probes of partitions that just formed, steadiness checks → freeze (shift_partition).
#include "wormhole/skipper.h"

#include <memory>
#include <sstream>

#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

std::string memo_domain(const Batch& b, uint32_t e) {
    const ExperimentParams& ep = b.params[e];
    std::ostringstream c;
    c.precision(17);
    // How vertex_label quantizes comes first: keys written under another quantization never match.
    c << "labels rate/16 size/quarter-octave-to-" << kLabelledBdps << "-bdp rtt/100ns first-feedback edges/data-ports cc " << int(ep.cc_mode) << " mtu " << ep.mtu << " ecn " << ep.ecn_enabled << " rate_bound " << ep.rate_bound << " var_win " << ep.var_win
      << " ack_interval " << ep.ack_interval << " chunk " << ep.chunk << " min_rate " << ep.min_rate << " first_cnp " << ep.rate_on_first_cnp;
    if (ep.ack_switch_class != 0xFF) c << " acks in class " << int(ep.ack_switch_class);  // after the rest: keys stored before it still match
    // The retransmission timeout is not in it: skipping runs lossless, in-order fabrics, where it never fires.
    // Every CC's parameters (net/cc_params.h), by name.
#define ORRERY_CC_PARAM_DOMAIN(cc, type, member, ...) c << " " #cc "." #member " " << ep.cc.member;
    ORRERY_CC_PARAMS(ORRERY_CC_PARAM_DOMAIN)
#undef ORRERY_CC_PARAM_DOMAIN
    return c.str();
}


Skipper::Skipper(Batch& b, uint32_t experiment, const MemoTable* shared) : s_(std::make_unique<State>(b, experiment, shared)) {}
Skipper::~Skipper() = default;
int64_t Skipper::after_step(int64_t end, int64_t next, uint32_t flows_done) { return s_->after_step(end, next, flows_done); }
int64_t Skipper::completion_due() const { return s_->completion_due(); }
uint32_t Skipper::complete_due(int64_t end, net::BlockCache& cache) { return s_->complete_due(end, cache); }
int64_t Skipper::wake(int64_t next) const { return s_->wake(next); }
SkipReport Skipper::take_report() { return std::move(s_->report); }

}  // namespace orrery::wormhole
