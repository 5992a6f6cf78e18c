#include "scenario/build.h"

#include <set>

#include "common/quantity.h"
#include "common/sha256.h"
#include "io/fabric_formats.h"
#include "io/hpcc_flows.h"
#include "scenario/applicability.h"
#include "scenario/sweep.h"
#include "topology/routing.h"
#include "workload/build.h"
#include "workload/placement.h"

namespace orrery {

Fabric build_fabric(const TopologySpec& spec) {
    struct Visitor {
        Fabric operator()(const ThreeTierParams& p) const { return generate(p); }
        Fabric operator()(const RailOptimizedParams& p) const { return generate(p); }
        Fabric operator()(const LeafSpineParams& p) const { return generate(p); }
        Fabric operator()(const SingleSwitchParams& p) const { return generate(p); }
        Fabric operator()(const ExplicitTopology& t) const { return t.fabric; }
        Fabric operator()(const ImportedTopology& t) const {
            const FabricFormat* format = fabric_format_named(t.format);
            if (!format || !format->read) throw InputError(t.path.string(), "no fabric reader for the format \"" + t.format + "\"");
            return format->read(t.path);
        }
    };
    Fabric f = std::visit(Visitor{}, spec.source);
    if (f.name.empty()) f.name = spec.generator;
    return f;
}

std::vector<FlowSpec> workload_flows(const Scenario& s) {
    if (!s.workload.flow_file.empty()) return read_hpcc_flow_file(s.workload.flow_file);
    return s.workload.flows;
}

void check_llm_against_fabric(const Scenario& s, const Fabric& f, Diagnostics& diags) {
    if (s.workload.jobs) {  // a mix: each job's rules and where it sits, as a run checks them
        for (const std::string& p : check_jobs(*s.workload.jobs, f, topology_node_names(s.topology))) {
            const size_t colon = p.find(": ");
            diags.error(s.source + ": " + p.substr(0, colon), p.substr(colon + 2));
        }
        return;
    }
    if (!s.workload.llm || s.workload.llm->trace || s.workload.llm->collectives.model == CollectiveModel::busbw) return;
    const LlmWorkload& w = *s.workload.llm;
    // The job's own rules (layers over stages, heads over TP, EP, the world against the hosts), as a run
    // checks them before it builds anything: the editors show them as the user types.
    for (const std::string& p : check_llm_workload(w, &f)) {
        const size_t colon = p.find(": ");
        diags.error(s.source + ": " + p.substr(0, colon), p.substr(colon + 2));
    }
    // Tensor parallelism is meant to stay inside an NVLink domain: a TP group across servers puts every layer's
    // collectives on the network. Legal, and sometimes what is studied, so a warning.
    const int per_server = f.gpus_per_server;
    const int tp = w.parallel.tp;
    if (per_server > 1 && tp > 1) {
        if (tp > per_server)
            diags.warning(s.source + ": workload.parallel.tp",
                          "TP " + std::to_string(tp) + " spans servers of " + std::to_string(per_server) +
                              " GPUs: every layer's tensor-parallel collectives cross the network instead of NVLink (Megatron keeps TP inside a server)");
        else if (per_server % tp != 0)
            diags.warning(s.source + ": workload.parallel.tp", "TP " + std::to_string(tp) + " does not divide the " + std::to_string(per_server) +
                                                                   " GPUs of a server: some TP groups span two servers and cross the network every layer");
    }
}

void check_against_fabric(const Scenario& s, const Fabric& f, Diagnostics& diags) {
    const std::vector<FlowSpec> flows = workload_flows(s);
    bool need_routes = false;
    for (const FlowSpec& flow : flows) {
        for (NodeId end : {flow.src, flow.dst}) {
            if (end >= f.node_count()) {
                diags.error(flow.where, "node " + std::to_string(end) + " does not exist: the fabric has " +
                                            std::to_string(f.node_count()) + " nodes (0.." + std::to_string(f.node_count() - 1) + ")");
            } else if (!f.is_host(end)) {
                diags.error(flow.where, "node " + std::to_string(end) + " is a " + node_kind_name(f.node_kind[end]) +
                                            ", not a host: flows run between hosts");
            } else {
                need_routes = true;
            }
        }
    }
    if (need_routes && !diags.has_errors()) {
        Routes routes = build_routes(f);
        for (const FlowSpec& flow : flows)
            if (path_length(f, routes, flow.src, flow.dst) < 0)
                diags.error(flow.where, "host " + std::to_string(flow.dst) + " cannot be reached from host " + std::to_string(flow.src));
    }
    try {  // the links and switches the events name; the levels without packets take the fabric as it starts
        const std::vector<FabricEvent> events = resolve_fabric_events(s.topology.events, f, topology_node_names(s.topology));
        const TimingMode mode = timing_mode(s);
        for (size_t i = 0; i < s.topology.events.size() && mode == TimingMode::analytic; ++i) {
            const FabricEventSpec& ev = s.topology.events[i];
            if (ev.at.count > 0)
                diags.error(ev.where + ".at", std::string("the analytic level times each transfer alone on the fabric as it starts (events at \"0us\": "
                                                          "links down routed around, rates set); a failure during the run is simulated ") +
                                                  timing_mode_phrase(TimingMode::flow) + " or " + timing_mode_phrase(TimingMode::packet));
        }
        if (mode == TimingMode::flow || mode == TimingMode::analytic) {
            // Without packets there is no timeout to give up on: a host's link left down holds its transfers forever.
            const std::vector<uint8_t> down = links_down_after(events, f.link_count(), mode == TimingMode::flow ? INT64_MAX : 0);
            for (LinkId l = 0; l < f.link_count(); ++l)
                if (down[l] && (f.is_host(f.link_a[l]) || f.is_host(f.link_b[l])))
                    diags.error(s.source + ": topology.events", "link " + std::to_string(l) + " joins a host and stays down: its host's transfers could "
                                                                "never finish at " + timing_mode_name(mode) + " level (bring it back with a later "
                                                                "\"state\": \"up\", or simulate it at the packet level, where its flows time out)");
        }
    } catch (const InputError& e) {
        diags.append(e.diagnostics());
    }
    check_llm_against_fabric(s, f, diags);
    if (s.network.ecn_enabled && timing_mode(s) == TimingMode::packet) {
        std::set<int64_t> derived;
        for (NodeId n = 0; n < f.node_count(); ++n) {
            if (f.node_kind[n] != NodeKind::network_switch) continue;
            for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) derived.insert(f.link_rate[f.port_link[p]].count);
        }
        for (int64_t rate : derived) {
            std::optional<EcnThreshold> from;
            const EcnThreshold t = ecn_for_rate(s, BitsPerSecond(rate), &from);
            if (from)
                diags.warning(s.source + ": " + (s.cc.ecn.empty() ? "network.ecn.thresholds" : "cc.ecn"),
                              "no ECN threshold for " + describe_rate(BitsPerSecond(rate)) + " switch ports: using " + describe_rate(from->rate) +
                                  "'s scaled to the rate, as the reference's run.py scales them (kmin " + std::to_string(t.kmin.count) + " B, kmax " +
                                  std::to_string(t.kmax.count) + " B, pmax " + std::to_string(t.pmax).substr(0, 4) + ")");
        }
    }
    // A run with no stop time lasts until its last flow ends: say so when that is far away. A flow needs at
    // least its bytes at its host's link rate; each packet is a few events per hop.
    if (!s.workload.stop_time && !flows.empty() && !diags.has_errors()) {
        double longest_s = 0, packets = 0;
        std::string longest_where;
        for (const FlowSpec& flow : flows) {
            const int64_t rate = f.port_begin[flow.src + 1] > f.port_begin[flow.src] ? f.link_rate[f.port_link[f.port_begin[flow.src]]].count : 0;
            packets += double(flow.size.count) / double(std::max<int64_t>(1, s.network.packet_payload.count));
            const double seconds = rate > 0 ? double(flow.size.count) * 8.0 / double(rate) : 0;
            if (seconds > longest_s) longest_s = seconds, longest_where = flow.where;
        }
        if (longest_s > 1.0 || packets > 1e9)
            diags.warning(s.source + ": workload", "no stop time (workload.stop_time) and the flows carry about " + std::to_string((long long)packets) +
                                                       " packets; " + longest_where + " alone needs at least " + std::to_string(longest_s) +
                                                       " s of simulated time at its link's rate: this run may take very long (the engine handles some 10 million packet hops a second per core)");
    }
    // Steady-state skipping fast-forwards sending rates of a lossless fabric: it cannot know which packets
    // random loss or a full buffer would have taken, nor the go-back-N retransmissions that follow.
    if (s.skipping.enabled) {
        bool lossy_link = s.network.error_rate_per_link > 0;
        for (double e : f.link_error_rate) lossy_link = lossy_link || e > 0;
        if (lossy_link)
            diags.error(s.source + ": skipping.enabled", "steady-state skipping models a lossless fabric; this one loses packets at random "
                                                         "(network.error_rate_per_link or a link's error_rate): turn skipping off");
        if (!s.network.pfc_enabled)
            diags.error(s.source + ": skipping.enabled", "steady-state skipping models a lossless fabric; network.pfc.enabled false makes "
                                                         "switches drop what their buffers cannot hold: turn skipping off");
    }
}

std::string sha256_of_document(const nlohmann::json& resolved_document) {
    return sha256_hex(canonical_json(resolved_document));
}

}  // namespace orrery
