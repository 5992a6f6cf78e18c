#include "wormhole/partitions.h"

#include <algorithm>
#include <stdexcept>

namespace orrery::wormhole {

Partitions::Partitions(uint32_t ports, uint32_t flows)
    : flow_part_(flows, kNoPartition), port_part_(ports, kNoPartition), port_flows_(ports), flow_ports_(flows, nullptr), seen_on_(flows, 0) {}

uint32_t Partitions::allocate() {
    if (free_ids_.empty()) {
        parts_.emplace_back();
        parts_.back().alive = true;
        return uint32_t(parts_.size() - 1);
    }
    const uint32_t id = free_ids_.take();
    parts_[id].alive = true;  // emptied by release, its lists' capacity kept
    return id;
}

// A released partition keeps its lists' capacity for the next one allocated in its place: freeing and
// growing them again was most of remove_flow's allocations (MoE 8x13B: 2.6 M per iteration).
void Partitions::release(uint32_t id) {
    parts_[id].flows.clear();
    parts_[id].ports.clear();
    parts_[id].alive = false;
    free_ids_.give(id);
}

uint32_t Partitions::add_flow(uint32_t flow, const std::vector<uint32_t>& ports, std::vector<uint32_t>& merged) {
    if (flow_part_[flow] != kNoPartition) throw std::logic_error("wormhole: flow " + std::to_string(flow) + " started twice");
    merged.clear();
    std::vector<uint32_t> touched;
    for (uint32_t p : ports)
        if (port_part_[p] != kNoPartition && std::find(touched.begin(), touched.end(), port_part_[p]) == touched.end()) touched.push_back(port_part_[p]);
    uint32_t target;
    if (touched.empty()) {
        target = allocate();
    } else {
        // Keep the largest partition (lowest id on ties) and move the others into it.
        target = touched.front();
        for (uint32_t id : touched)
            if (parts_[id].flows.size() > parts_[target].flows.size() || (parts_[id].flows.size() == parts_[target].flows.size() && id < target)) target = id;
        std::sort(touched.begin(), touched.end());
        for (uint32_t id : touched) {
            if (id == target) continue;
            Partition& from = parts_[id];
            Partition& to = parts_[target];
            for (uint32_t f : from.flows) flow_part_[f] = target, to.flows.push_back(f);
            for (uint32_t p : from.ports) port_part_[p] = target, to.ports.push_back(p);
            merged.push_back(id);
            release(id);
        }
    }
    Partition& part = parts_[target];
    part.flows.push_back(flow);
    flow_part_[flow] = target;
    flow_ports_[flow] = &ports;
    for (uint32_t p : ports) {
        if (port_part_[p] == kNoPartition) {
            port_part_[p] = target;
            part.ports.push_back(p);
        }
        port_flows_[p].push_back(flow);
    }
    return target;
}

std::vector<uint32_t> Partitions::remove_flow(uint32_t flow, const std::vector<uint32_t>& ports) {
    const uint32_t id = flow_part_[flow];
    if (id == kNoPartition) throw std::logic_error("wormhole: flow " + std::to_string(flow) + " finished without starting");
    flow_part_[flow] = kNoPartition;
    flow_ports_[flow] = nullptr;
    for (uint32_t p : ports) {
        std::vector<uint32_t>& on = port_flows_[p];
        on.erase(std::find(on.begin(), on.end(), flow));
    }
    // The partition stays whole, less the ports only the leaving flow crossed, when its neighbours stay joined.
    // It then takes the lowest free id, as the search below would, so that ids do not depend on which way was
    // taken: its own, or a lower one it moves to with its lists.
    if (parts_[id].flows.size() > 1 && neighbours_stay_joined(ports)) {
        {
            Partition& part = parts_[id];
            size_t kept = 0;
            for (uint32_t p : part.ports) {
                if (port_flows_[p].empty()) port_part_[p] = kNoPartition;
                else part.ports[kept++] = p;
            }
            part.ports.resize(kept);
            part.flows.erase(std::find(part.flows.begin(), part.flows.end(), flow));
        }
        if (free_ids_.empty() || free_ids_.lowest() > id) return {id};
        const uint32_t whole = allocate();  // a free id: no new row, so parts_ does not move
        std::swap(parts_[whole].ports, parts_[id].ports);
        std::swap(parts_[whole].flows, parts_[id].flows);
        release(id);
        for (uint32_t p : parts_[whole].ports) port_part_[p] = whole;
        for (uint32_t f : parts_[whole].flows) flow_part_[f] = whole;
        return {whole};
    }
    // The partition's flows and ports go to scratch tables kept between calls: allocating them per call was
    // a third of this function's time in a MoE 8x13B skip-on run, where every flow's finish splits a partition.
    std::vector<uint32_t>& rest = rest_;
    rest.clear();
    for (uint32_t f : parts_[id].flows)
        if (f != flow) rest.push_back(f);
    for (uint32_t p : parts_[id].ports) port_part_[p] = kNoPartition;
    for (uint32_t f : rest) flow_part_[f] = kNoPartition;
    release(id);
    if (rest.empty()) return {};
    // Connected components of what is left (appendix A's search, over this partition only).
    std::vector<uint32_t> result;
    std::vector<uint32_t>& stack = stack_;
    for (uint32_t start : rest) {
        if (flow_part_[start] != kNoPartition) continue;  // already in a component found this call
        const uint32_t comp = allocate();
        result.push_back(comp);
        Partition& part = parts_[comp];
        flow_part_[start] = comp;
        stack.assign(1, start);
        while (!stack.empty()) {
            const uint32_t f = stack.back();
            stack.pop_back();
            for (uint32_t p : *flow_ports_[f]) {
                if (port_part_[p] == comp) continue;
                port_part_[p] = comp;
                part.ports.push_back(p);
                for (uint32_t g : port_flows_[p])
                    if (flow_part_[g] != comp) {
                        flow_part_[g] = comp;
                        stack.push_back(g);
                    }
            }
        }
    }
    for (uint32_t f : rest) parts_[flow_part_[f]].flows.push_back(f);  // in their join order, as before the split
    return result;
}

// Whether the flows left on a leaving flow's ports reach one another through those ports alone: the flows on one
// port are all joined, and two ports are joined when one flow crosses both. Every other flow of the partition reached
// the leaving one through such a neighbour, so then nothing splits, and the search over the whole partition (of up to
// 64 flows and their ports: 4 K instructions a finish on MoE 8x13B) is not needed. False when this cannot show it.
bool Partitions::neighbours_stay_joined(const std::vector<uint32_t>& ports) {
    ++epoch_;
    joined_.resize(ports.size());
    uint32_t groups = 0;
    for (uint32_t i = 0; i < ports.size(); ++i) {
        joined_[i] = i;
        groups += !port_flows_[ports[i]].empty();
    }
    auto root = [&](uint32_t i) {
        while (joined_[i] != i) i = joined_[i] = joined_[joined_[i]];
        return i;
    };
    for (uint32_t i = 0; i < ports.size() && groups > 1; ++i)
        for (uint32_t g : port_flows_[ports[i]]) {
            uint64_t& seen = seen_on_[g];
            if (seen >> 32 != epoch_) {
                seen = epoch_ << 32 | i;
                continue;
            }
            const uint32_t a = root(i), c = root(uint32_t(seen));
            if (a == c) continue;
            joined_[a] = c;
            if (--groups == 1) return true;
        }
    return groups == 1;
}

uint32_t Partitions::max_flows_per_port(uint32_t id) const {
    uint32_t most = 0;
    for (uint32_t p : parts_[id].ports) most = std::max<uint32_t>(most, uint32_t(port_flows_[p].size()));
    return most;
}

}  // namespace orrery::wormhole
