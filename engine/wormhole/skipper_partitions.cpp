// A flow's ports, a partition's membership changes and how long its windows must be.
#include "wormhole/skipper_state.h"

namespace orrery::wormhole {

const std::vector<uint32_t>& Skipper::State::ports_of(uint32_t f) {
    std::vector<uint32_t>& out = flow_ports[f - x.flow_begin];
    if (!out.empty()) return out;
    const FlowInfo& info = b.flow[f];
    out.reserve(12);  // both ways of a fat-tree's longest path: grown a port at a time it was 1 % of a MoE run
    auto walk = [&](uint32_t from, uint32_t to, uint32_t offset) {
        uint32_t node = from;
        for (uint32_t hop = 0; node != to && hop < 64; ++hop) {
            const uint32_t row = b.node_port_begin[node] + b.path_ports[offset + hop];
            out.push_back(row - x.port_begin);
            node = b.port[b.port[row].peer_port].node;
        }
    };
    walk(info.src, info.dst, b.flow_paths[f].data_path);
    std::vector<uint32_t>& data = flow_data_ports[f - x.flow_begin];
    data = out;
    std::sort(data.begin(), data.end());
    walk(info.dst, info.src, b.flow_paths[f].ack_path);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// `flow_left`: the change is a flow that finished. The others' rate windows are kept (what they held is
// their rates until then) and kFreshSamples samples show whether the leaving moved them; a flow that
// joins has no samples, so its partition starts over.
void Skipper::State::changed(uint32_t id, int64_t now, bool flow_left) {
    PartState& p = state(id);
    p = PartState{};
    p.changed_at = now;
    p.probed = !x.skipping.memo;
    if (!p.probed) to_probe.push_back(id);
    if (flow_left) p.fresh_needed = kFreshSamples;
    else reset_windows(id, now);
}

uint32_t Skipper::State::window_length(uint32_t id) const {
    if (x.skipping.window) return uint32_t(*x.skipping.window);
    const double bdp_packets = double(x.max_bdp) / double(ep.mtu);
    uint32_t l = window_for(bdp_packets, parts.max_flows_per_port(id), double(x.max_rtt_ns) * 1000, double(interval));
    // DCQCN raises its rate only when its rate-increase timer fires: a window shorter than that period
    // sees a recovering flow as flat. Appendix F's rule (cover one period) applied to that timer, for a
    // partition with a flow still recovering: below its line rate with the timer running. A flow at its
    // line rate is unchanged by the timer (rate ← (rate + target) / 2 with both at the line rate), and a cut
    // would show in its samples.
    if (ep.cc_mode == kDcqcn && recovering(id)) l = std::max<uint32_t>(l, uint32_t(std::min<int64_t>(kMaxWindow, ep.dcqcn.rp_timer / interval + 2)));
    return l;
}

// The earliest known start of a flow not yet started that crosses a port of partition `id`.
int64_t Skipper::State::first_touching_start(uint32_t id) {
    int64_t first = kNever;
    for (const auto& [start, f] : upcoming) {
        if (start >= first) continue;
        for (uint32_t p : ports_of(f))
            if (parts.of_port(p) == id) {
                first = start;
                break;
            }
    }
    return first;
}

}  // namespace orrery::wormhole
