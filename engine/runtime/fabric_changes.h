#pragma once
// A fabric's events during a run (topology.events, topology/fabric_events.h), as the host applies them between
// steps: the stepper ends a step at each change's time and calls apply_fabric_changes. A link going down loses
// what is queued toward it and on its wire, clears PFC state on it and marks its two ports down (switches then
// lose what they would send there: net/switch.h, switch_egress); a host's end holds its NIC (nothing is sent on
// a dead link). Coming back up undoes the marks. A rate change sets both directions' rate. Routing follows a
// failure or a repair after the scenario's convergence delay: the experiment's routing table offset moves to the
// one compiled for the fabric as the event left it (runtime/batch_compile.cpp).
#include <cstdint>
#include <vector>

#include "net/blocks.h"

namespace orrery {

struct Batch;

struct FabricChange {
    enum Kind : uint8_t { link_down, link_up, link_rate, routing };
    int64_t at = 0;           // ps
    Kind kind = link_down;
    uint32_t rows[2] = {0, 0};  // link_*: the link's two ports (global rows)
    uint64_t rate_bps = 0;    // link_rate
    uint32_t table = 0;       // routing: the experiment's spray_table from then on
};

// One end of a link marked down or up (PortInfo::flags): a switch forgets the pauses it sent and received on it,
// a NIC holds everything while its link is down and looks at its queue pairs again at `now` when it returns.
void set_port_down(Batch& b, uint32_t row, bool down, int64_t now);
// One end of a link at a new rate, its serialization caches (its own and its peer's receive ring's) emptied.
void set_port_rate(Batch& b, uint32_t row, uint64_t rate_bps);

// Applies experiment e's changes due at or before `now` (a step's end) and returns the packets they lost.
// The experiment's tables must be on the host, packets included.
uint64_t apply_fabric_changes(Batch& b, uint32_t e, int64_t now, net::BlockCache& cache);

}  // namespace orrery
