#include "scenario/applicability.h"

#include <set>

#include "scenario/scenario.h"

namespace orrery {
namespace {

constexpr Applies H = Applies::honoured, M = Applies::meaningless, R = Applies::refused;

const char* kNoQueues = "only the packet level has switch queues, packets and congestion control (the flow level shares links max-min "
                        "fair; the analytic and busbw levels time each transfer alone)";
const char* kBusbwCollectives = "SimAI's busbw formula has its own bus-bandwidth ratios per collective: NCCL's channels, algorithm, "
                                 "chunking and PXN do not enter it (remove the key, or time the job on a network)";
const char* kBusbwBandwidths = "SimAI's busbw formula takes its bandwidths from workload.collectives.busbw, not from the fabric's links";

bool prefix_of(std::string_view prefix, std::string_view path) {
    return path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
           (path.size() == prefix.size() || path[prefix.size()] == '.');
}

// The path of every value `v` holds under `path` (an empty object holds none), without array indices; an
// output.record entry as output.record.<entry>.
void walk(const nlohmann::json& v, const std::string& path, std::vector<std::string>& out) {
    if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) walk(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    } else if (v.is_array()) {
        for (const nlohmann::json& item : v) {
            if (path == "output.record" && item.is_string()) out.push_back(path + "." + item.get<std::string>());
            else if (item.is_object() || item.is_array()) walk(item, path, out);
            else out.push_back(path);
        }
    } else {
        out.push_back(path);
    }
}

}  // namespace

std::string timing_mode_phrase(TimingMode m) {
    switch (m) {
        case TimingMode::packet: return "at network_mode \"packet\"";
        case TimingMode::flow: return "at network_mode \"flow\"";
        case TimingMode::analytic: return "at network_mode \"analytic\"";
        case TimingMode::busbw: return "with \"collectives\": {\"model\": \"busbw\"}";
    }
    return "";
}

const char* timing_mode_name(TimingMode m) {
    switch (m) {
        case TimingMode::packet: return "packet";
        case TimingMode::flow: return "flow";
        case TimingMode::analytic: return "analytic";
        case TimingMode::busbw: return "busbw";
    }
    return "?";
}

const std::vector<KeyApplicability>& key_applicability() {
    // Columns: packet, flow, analytic, busbw.
    static const std::vector<KeyApplicability> table = {
        {"output.hpcc_files", {R, R, R, R}, "the reference-format FCT, PFC and queue files are written for flow workloads (\"kind\": \"flows\")"},
        {"output.record.fct", {H, H, H, M}, "SimAI's busbw formula times no transfers"},
        {"output.record.pfc", {H, M, M, M}, kNoQueues},
        {"output.record.queues", {H, M, M, M}, kNoQueues},
        {"output.record.flow_rates", {H, M, M, M}, kNoQueues},
        {"output.sample_interval", {H, M, M, M}, kNoQueues},
        {"output.queue_monitor", {H, M, M, M}, kNoQueues},
        {"cc.algorithm", {H, H, M, M},
         "the algorithm's header bytes (HPCC's INT stamps) load links at the packet and flow levels; the analytic and busbw levels count "
         "payload and the standard headers only"},
        {"cc", {H, M, M, M}, kNoQueues},
        {"network.ecn", {H, M, M, M}, kNoQueues},
        {"network.pfc", {H, M, M, M}, kNoQueues},
        {"network.buffer_per_switch", {H, M, M, M}, kNoQueues},
        {"network.loss_recovery", {H, M, M, M}, kNoQueues},
        {"network.error_rate_per_link", {H, M, M, M}, "only the packet level loses packets"},
        {"network.ack.switch_queue", {H, M, M, M}, kNoQueues},
        {"network.ack", {H, H, M, M}, "ACK bytes load links at the packet and flow levels; the analytic and busbw levels count payload and headers only"},
        {"network.nic", {H, M, M, M}, "only the packet level reorders and retransmits packets"},
        {"network.flowlet_gap", {H, M, M, M}, "the flow level spreads a flowlet-switched transfer over its equal-cost paths as it spreads a sprayed one; the analytic level times each transfer alone"},
        {"network.load_balancing", {H, H, M, M}, "the analytic level times each transfer alone on the fabric, where its NIC bounds it whichever paths it takes"},
        {"network", {H, H, H, M}, kBusbwBandwidths},
        {"skipping", {H, M, M, M}, "steady-state skipping fast-forwards the packet level; the other levels have no packet steps to skip"},
        {"topology.events", {H, H, H, R}, "SimAI's busbw formula takes no fabric: time the job on a network to see what a failure costs"},
        {"network.routing.convergence", {H, H, M, M}, "routing convergence applies to failures during the run, which the packet and flow levels simulate (the analytic level refuses them)"},
        {"network.routing.weights", {H, H, H, M}, kBusbwBandwidths},
        {"topology.link_defaults", {H, H, H, M}, kBusbwBandwidths},
        {"topology.links.rate", {H, H, H, M}, kBusbwBandwidths},
        {"topology.links.delay", {H, H, H, M}, kBusbwBandwidths},
        {"topology.links.error_rate", {H, M, M, M}, "only the packet level loses packets"},
        // Not warned of (the sweep writes every experiment's seed); test_settings checks it changes nothing there.
        {"seed", {H, M, M, M}, "the seed draws the packet level's random ECN marks; the other levels are deterministic"},
        {"workload.stop_time", {H, R, R, R}, "it stops the packet-level simulation; the other levels time the whole job (remove it)"},
        {"workload.iterations", {H, H, H, M}, "SimAI's busbw formula estimates one iteration"},
        {"workload.gpu", {H, H, H, M}, "SimAI's busbw formula takes compute times from the workload file and bandwidths from workload.collectives.busbw"},
        {"workload.framework_overhead", {H, H, H, M}, "SimAI's busbw formula checks no GPU memory"},
        {"workload.collectives.priority", {H, M, M, M}, "the switch queue (priority class) of collective traffic: only the packet level has queues"},
        {"workload.collectives.channels", {H, H, H, R}, kBusbwCollectives},
        {"workload.collectives.algorithm", {H, H, H, R}, kBusbwCollectives},
        {"workload.collectives.chunk", {H, H, H, R}, kBusbwCollectives},
        {"workload.collectives.pxn", {H, H, H, R}, kBusbwCollectives},
    };
    return table;
}

const KeyApplicability* applicability_of(std::string_view key) {
    for (const KeyApplicability& row : key_applicability())
        if (prefix_of(row.key, key)) return &row;
    return nullptr;
}

bool is_llm(const Scenario& s) { return s.workload.trains(); }

TimingMode timing_mode(const Scenario& s) {
    const std::vector<const LlmWorkload*> jobs = s.workload.llm_workloads();
    if (jobs.empty()) return TimingMode::packet;
    const LlmWorkload& w = *jobs[0];  // a mix's jobs share the experiment's network mode
    if (w.collectives.model == CollectiveModel::busbw) return TimingMode::busbw;
    return w.network_mode == NetworkMode::flow ? TimingMode::flow : w.network_mode == NetworkMode::analytic ? TimingMode::analytic : TimingMode::packet;
}

std::optional<TimingMode> timing_mode_of(const nlohmann::json& doc) {
    if (!doc.is_object() || !doc.contains("workload") || !doc["workload"].is_object()) return std::nullopt;
    const nlohmann::json& w = doc["workload"];
    if (!w.contains("kind") || (w["kind"] != "llm" && w["kind"] != "jobs")) return std::nullopt;
    if (w.contains("collectives") && w["collectives"].is_object() && w["collectives"].contains("model") && w["collectives"]["model"] == "busbw")
        return TimingMode::busbw;
    const nlohmann::json mode = w.contains("network_mode") ? w["network_mode"] : nlohmann::json("packet");
    return mode == "flow" ? TimingMode::flow : mode == "analytic" ? TimingMode::analytic : TimingMode::packet;
}

std::string applicability_note(std::string_view key, TimingMode mode) {
    const KeyApplicability* row = applicability_of(key);
    if (!row || row->in[size_t(mode)] == Applies::honoured) return "";
    return std::string(row->in[size_t(mode)] == Applies::refused ? "refused " : "no effect ") + timing_mode_phrase(mode) + ": " + row->why;
}

void check_applicability(const nlohmann::json& doc, const Scenario& s, const std::string& source, Diagnostics& diags) {
    if (!is_llm(s)) return;
    const TimingMode mode = timing_mode(s);
    std::vector<std::string> keys;
    walk(doc, "", keys);
    std::set<const KeyApplicability*> said;  // one message per row: "cc" once, not once per CC parameter
    for (const std::string& found : keys) {
        // A job of a mix (workload.jobs[i].…) is read as one job's workload: its keys answer to the same rows.
        const std::string jobs = "workload.jobs.";
        const bool in_job = found.rfind(jobs, 0) == 0;
        const std::string key = in_job ? "workload." + found.substr(jobs.size()) : found;
        const KeyApplicability* row = applicability_of(key);
        // Every experiment's document carries its seed (the sweep writes it): not the user's choice to warn of.
        if (key == "seed" || !row || row->in[size_t(mode)] == Applies::honoured || !said.insert(row).second) continue;
        std::string shown = key.rfind("output.record.", 0) == 0 ? "output.record \"" + key.substr(14) + "\"" : std::string(row->key);
        if (in_job) shown = "workload.jobs[…]." + shown.substr(std::string("workload.").size());
        if (row->in[size_t(mode)] == Applies::refused) diags.error(source + ": " + shown, std::string("refused ") + timing_mode_phrase(mode) + ": " + row->why);
        else diags.warning(source + ": " + shown, std::string("has no effect ") + timing_mode_phrase(mode) + ": " + row->why);
    }
}

}  // namespace orrery
