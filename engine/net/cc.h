#pragma once
// The congestion controls' hooks, dispatched on the experiment's CC by one switch per hook, generated from
// net/cc_list.h: no per-packet virtual call, and the same code for the CPU, Thrust and CUDA.
#include "net/cc_dcqcn.h"
#include "net/cc_dctcp.h"
#include "net/cc_fixed.h"
#include "net/cc_hpcc.h"
#include "net/cc_timely.h"

namespace orrery::net {

ORRERY_HD inline void cc_start(NetView& v, uint32_t flow, const ExperimentParams& ep, uint64_t line) {
    switch (ep.cc_mode) {
#define ORRERY_CC_START(Name, name, ...) \
    case k##Name: name##_start(v, flow, ep, line); break;
        ORRERY_CC_LIST(ORRERY_CC_START)
#undef ORRERY_CC_START
    }
}

ORRERY_HD inline void cc_ack(NetView& v, uint32_t node, uint32_t flow, const ExperimentParams& ep, const Packet& ack, bool cnp, int64_t now) {
    switch (ep.cc_mode) {
#define ORRERY_CC_ACK(Name, name, ...) \
    case k##Name: name##_ack(v, node, flow, ack, cnp, now); break;
        ORRERY_CC_LIST(ORRERY_CC_ACK)
#undef ORRERY_CC_ACK
    }
}

ORRERY_HD inline void cc_finish(NetView& v, uint32_t flow, const ExperimentParams& ep) {
    switch (ep.cc_mode) {
#define ORRERY_CC_FINISH(Name, name, ...) \
    case k##Name: name##_finish(v, flow); break;
        ORRERY_CC_LIST(ORRERY_CC_FINISH)
#undef ORRERY_CC_FINISH
    }
}

}  // namespace orrery::net
