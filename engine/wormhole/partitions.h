#pragma once
// Port-level network partitions (Wormhole §3.1.1, appendices A and B): flows that share a directed port,
// with the ports they cross, form one partition. Kept up to date incrementally: a starting flow merges the
// partitions it touches; a finishing flow splits its partition only when it was the link between parts,
// found by a search over that partition alone, and only when its neighbours are not seen to stay joined
// through its own ports (most finishes: then the partition is kept whole without the search).
//
// Ports are local indices inside one experiment (row − its port_begin); flows are local indices too.
#include <cstdint>
#include <vector>

#include "wormhole/free_slots.h"

namespace orrery::wormhole {

inline constexpr uint32_t kNoPartition = 0xffffffffu;

struct Partition {
    std::vector<uint32_t> flows;   // in the order they joined (deterministic)
    std::vector<uint32_t> ports;   // every port one of its flows crosses
    bool alive = false;
};

class Partitions {
public:
    Partitions(uint32_t ports, uint32_t flows);

    // A flow starts crossing `ports`: returns the partition it is now in (the merged one).
    // `merged` receives the ids of the partitions it absorbed (no longer alive).
    uint32_t add_flow(uint32_t flow, const std::vector<uint32_t>& ports, std::vector<uint32_t>& merged);
    // A flow has finished: returns the partitions its old partition became (none when it was alone).
    std::vector<uint32_t> remove_flow(uint32_t flow, const std::vector<uint32_t>& ports);

    uint32_t of_flow(uint32_t flow) const { return flow_part_[flow]; }
    uint32_t of_port(uint32_t port) const { return port_part_[port]; }
    uint32_t flows_on_port(uint32_t port) const { return uint32_t(port_flows_[port].size()); }
    const std::vector<uint32_t>& flows_crossing(uint32_t port) const { return port_flows_[port]; }
    const Partition& get(uint32_t id) const { return parts_[id]; }
    uint32_t id_limit() const { return uint32_t(parts_.size()); }
    uint32_t port_count() const { return uint32_t(port_part_.size()); }
    // Largest number of flows sharing one port of the partition (the N of Wormhole appendix F).
    uint32_t max_flows_per_port(uint32_t id) const;

private:
    uint32_t allocate();
    void release(uint32_t id);
    bool neighbours_stay_joined(const std::vector<uint32_t>& ports);

    std::vector<Partition> parts_;
    FreeSlots free_ids_;                             // reused lowest-first, so ids are deterministic
    std::vector<uint32_t> flow_part_, port_part_;
    std::vector<std::vector<uint32_t>> port_flows_;  // active flows per port
    std::vector<const std::vector<uint32_t>*> flow_ports_;  // while active: the caller's list of the flow's ports
    std::vector<uint32_t> rest_, stack_;             // remove_flow's scratch
    std::vector<uint64_t> seen_on_;                  // by flow: epoch_ << 32 | the index of the port it was last seen on
    std::vector<uint32_t> joined_;                   // neighbours_stay_joined's union-find over the leaving flow's ports
    uint64_t epoch_ = 0;
};

}  // namespace orrery::wormhole
