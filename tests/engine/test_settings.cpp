// No dead keys, by construction: every key the scenario reader asks for (recorded by the reader itself,
// Diagnostics::record_keys) is given other values, one at a time, and each must either change the compiled
// experiment (a digest of the engine's parameters and tables, the LLM task graph, and the output and
// skipping settings the run takes) or be refused with a message. A key added to the reader later is walked
// without any change here; only keys that are not settings at all are listed below, each with its reason.
#include <QtTest>

#include <cstring>
#include <functional>
#include <fstream>
#include <iterator>
#include <sstream>
#include <map>
#include <set>

#include "common/sha256.h"
#include "runtime/batch.h"
#include "runtime/hpcc_job.h"
#include "scenario/applicability.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/read.h"
#include "scenario/sweep.h"
#include "topology/routing.h"
#include "workload/flow_mode.h"
#include "workload/flow_network.h"
#include "workload/llm_job.h"
#ifdef ORRERY_TEST_IMPORTS
#include "imports/import_job.h"
#include "imports/simai_busbw.h"
#endif

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

// Keys that are not engine settings, and why. Matched on the path with array indices removed.
const std::map<std::string, std::string> kNotSettings = {
    {"format", "the file's format name; any other value is refused"},
    {"version", "the format version; any other value is refused"},
    {"name", "a label shown in reports"},
    {"description", "a label shown in reports"},
    {"output.store", "the results file's name (orrery-cli run --out)"},
    {"output.hpcc_files.fct", "a file name the reference-format FCTs are written to"},
    {"output.hpcc_files.pfc", "a file name the reference-format PFC lines are written to"},
    {"output.hpcc_files.qlen", "a file name the reference-format queue histogram is written to"},
    {"skipping.memo_file", "the file the memo persists in (test_wormhole: a second run reuses it)"},
    {"workload.model.name", "a label: the model's size comes from its layers, hidden, heads and the rest"},
    {"topology.nodes.group", "the workbench's level-of-detail grouping (pods, rails) of boxes on the canvas"},
    {"topology.gpu_type", "kept to write a SimAI topology file back; the simulated GPU is workload.gpu"},
};

std::string without_indices(const std::string& path) {
    std::string out;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '[') {
            while (i < path.size() && path[i] != ']') ++i;
            continue;
        }
        out += path[i];
    }
    return out;
}

// Bytes of a column of plain rows; structs holding pointers are copied with the pointers cleared first.
template <class T, class Alloc>
void feed(std::string& out, const std::vector<T, Alloc>& rows) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(T));
}

// Fields of rows whose structs carry padding (their alignas(64) and bools): their bytes would differ from
// compile to compile, so the fields compile sets are taken one by one.
template <class... T>
void fields(std::string& out, const T&... v) {
    ((out += std::to_string(v) + ","), ...);
}

// The batch as the engine starts it. The flow states (QP, receiver, CC) are left out: compile fills them
// with the same starting values for every experiment; what differs per flow is in `flow`.
std::string batch_bytes(const Batch& b) {
    std::string out;
    for (const net::ExperimentParams& p : b.params) {
        fields(out, p.cc_mode, p.ecn_enabled, p.rate_bound, p.var_win, p.back_to_zero, p.pfc_enabled, p.ack_pause_class, p.ack_switch_class, p.mtu,
               p.ack_interval, p.chunk, p.min_rate, p.rate_on_first_cnp, p.nack_interval_ps, p.seed, p.qlen_start, p.qlen_end,
               p.qlen_interval, p.stop_time, p.sample_interval,
               p.load_balancing, p.group_count, p.flowlet_gap, p.out_of_order);
#define ORRERY_CC_PARAM_BYTES(cc, type, member, ...) fields(out, p.cc.member);
        ORRERY_CC_PARAMS(ORRERY_CC_PARAM_BYTES)
#undef ORRERY_CC_PARAM_BYTES
    }
    feed(out, b.node_role);
    feed(out, b.node_port_begin);
    for (const net::NicState& n : b.nic) fields(out, n.port, n.qp_offset, n.starts_offset, n.starts_count);
    for (const net::SwitchMmu& s : b.sw)
        fields(out, s.buffer_size, s.total_hdrm, s.total_rsrv, s.port_reserve, s.resume_offset, s.static_threshold, s.next_sample);
    for (const net::PortInfo& p : b.port) fields(out, p.node, p.peer_port, p.local, p.rate_bps, p.delay_ps);
    feed(out, b.port_loss);
    for (const net::PortMmu& m : b.mmu) fields(out, m.pfc_shift, m.headroom, m.kmin, m.kmax, m.pmax);
    for (const net::FlowInfo& f : b.flow)
        fields(out, f.src, f.dst, f.sip, f.dip, f.sport, f.dport, f.pg, f.size, f.start, f.win, f.base_rtt_ns,
               f.standalone_fct_ns);
    for (const net::FlowPaths& p : b.flow_paths) fields(out, p.data_path, p.ack_path);
    feed(out, b.path_ports);
    feed(out, b.nic_starts);
    feed(out, b.qlen_offset);
    feed(out, b.qlen_buckets);
    feed(out, b.node_forwarder);
    feed(out, b.node_dest_group);
    feed(out, b.spray_set);
    feed(out, b.set_ports);
    for (const ExperimentSlice& x : b.experiments) fields(out, x.lookahead, x.max_rtt_ns, x.max_bdp);
    return out;
}

// What the run takes besides the batch: the recorder's and the skipper's settings.
std::string run_settings(const Scenario& s) {
    const OutputSpec& o = s.output;
    const SkippingSpec& k = s.skipping;
    std::string out = std::to_string(o.sample_interval.count) + "," + std::to_string(o.record_fct) + std::to_string(o.record_pfc) +
                      std::to_string(o.record_queues) + std::to_string(o.record_flow_rates) + "," +
                      std::to_string(o.queue_monitor_start ? o.queue_monitor_start->count : -1) + "," +
                      std::to_string(o.queue_monitor_end ? o.queue_monitor_end->count : -1) + "," + std::to_string(o.queue_monitor_interval.count);
    out += "|" + std::to_string(k.enabled) + "," + std::to_string(k.theta) + "," + std::to_string(k.window.value_or(-1)) + "," +
           std::to_string(k.sample_interval ? k.sample_interval->count : -1) + "," + std::to_string(k.memo) + "," +
           std::to_string(k.share_memo);
    return out;
}

// The digest of an experiment as the engine would run it, or the refusal's message.
struct Compiled {
    std::string digest;
    std::string refusal;
};

Compiled compile(const nlohmann::json& doc) {
    try {
        const LoadedScenario loaded = load_scenario_document(doc, "settings.json", ORRERY_SOURCE_DIR, kPresets);
        const Scenario& s = loaded.scenarios.at(0);
        const Fabric f = build_fabric(s.topology);
        std::string bytes = run_settings(s);
        // Fabric facts the run reads besides its links: tiers (queue telemetry per tier), servers (placement, NVLink).
        for (size_t n = 0; n < f.node_count(); ++n) fields(bytes, f.node_tier[n], f.node_server[n]);
        fields(bytes, f.gpus_per_server, f.hosts_forward);
        std::vector<FlowSpec> flows;
        if (s.workload.llm) {
            const LlmJob job = prepare_llm_job(*s.workload.llm, f, load_workload_tables(kPresets));
            if (!job.oom_message.empty()) return {"", job.oom_message};
            bytes += "|" + std::to_string(int(s.workload.llm->network_mode)) + "|" + std::to_string(job.graph.world);
            for (const Op& op : job.graph.ops)
                bytes += std::to_string(int(op.kind)) + "," + std::to_string(op.rank) + "," + std::to_string(op.peer) + "," +
                         std::to_string(op.bytes) + "," + std::to_string(op.duration) + "," + std::to_string(op.collective) + ";";
            for (const auto& deps : job.graph.deps)
                for (uint32_t d : deps) bytes += std::to_string(d) + ",";
            bytes += "|mem" + std::to_string(job.memory.worst().total()) + "," + std::to_string(job.memory.available);
            flows = llm_flows(job, s.workload.llm->collectives.priority);
        } else {
            flows = workload_flows(s);
        }
        const Batch b = compile_batch({{"e0000", &s, &f, flows}});
        bytes += batch_bytes(b);
        return {sha256_hex(bytes), ""};
    } catch (const InputError& e) {
        return {"", e.what()};
    } catch (const std::exception& e) {
        return {"", std::string("not an input error: ") + e.what()};
    }
}

// Other values for a key of the given kind: at least two distinct ones, so one of them differs from
// whatever the key holds now.
std::vector<nlohmann::json> candidates(const KeyUse& k) {
    if (k.kind == "boolean") return {true, false};
    if (k.kind == "choice") {
        std::vector<nlohmann::json> out;
        for (const std::string& c : k.choices) out.push_back(c);
        return out;
    }
    if (k.kind == "integer") {
        const int64_t lo = int64_t(k.min), hi = k.max < 1e15 ? int64_t(k.max) : int64_t(1) << 50;  // INT64_MAX as a double does not convert back
        std::set<int64_t> v{lo, lo + 1, lo + 2, lo + 5};
        if (hi <= 64) v.insert(hi);
        std::vector<nlohmann::json> out;
        for (int64_t x : v)
            if (x <= hi) out.push_back(x);
        return out;
    }
    if (k.kind == "number") {
        const double hi = std::min(k.max, k.min + 1.0);
        return {k.min, hi, k.min + (hi - k.min) * 0.37};
    }
    if (k.kind == "rate") return {"25Gbps", "400Gbps", "1Gbps"};
    if (k.kind == "time") return {"2500ns", "3us", "40us"};
    if (k.kind == "size") return {"1500B", "3000KB", "64KB"};
    return {"x", "a-string-no-key-takes"};
}

struct Base {
    std::string label;
    nlohmann::json doc;
};

// Scenarios that between them visit every branch of the reader: each object present (empty where its keys
// are optional) so that its optional keys are asked for.
std::vector<Base> bases() {
    const nlohmann::json network = {{"ecn", nlohmann::json::object()}, {"pfc", nlohmann::json::object()},
                                    {"ack", nlohmann::json::object()}, {"loss_recovery", nlohmann::json::object()},
                                    {"nic", nlohmann::json::object()}};
    const nlohmann::json flows = {{"kind", "flows"},
                                  {"flows", {{{"src", 0}, {"dst", 5}, {"size", "200KB"}, {"start", "1us"}},
                                             {{"src", 1}, {"dst", 6}, {"size", "100KB"}}}}};
    const nlohmann::json output = {{"queue_monitor", {{"start", "0ns"}, {"end", "1ms"}}}, {"hpcc_files", nlohmann::json::object()}};
    std::vector<Base> out;
    for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) {
        nlohmann::json d = {{"format", "orrery-scenario"}, {"version", 1},
                            {"topology", {{"generator", "fat-tree"}, {"k", 4}, {"link_defaults", nlohmann::json::object()}}},
                            {"network", network},
                            {"cc", {{"algorithm", cc}, {std::string(cc), nlohmann::json::object()}}},
                            {"workload", flows},
                            {"output", output},
                            {"skipping", nlohmann::json::object()}};
        out.push_back({std::string("fat-tree ") + cc, d});
    }
    const std::vector<std::pair<std::string, nlohmann::json>> generators = {
        {"three-tier", {{"generator", "three-tier"}, {"pods", 2}, {"tors_per_pod", 2}, {"aggs_per_pod", 2}, {"hosts_per_tor", 4}, {"cores", 2}}},
        {"rail-optimized", {{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}}},
        {"leaf-spine", {{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 8}}},
        {"single-switch", {{"generator", "single-switch"}, {"hosts", 8}}}};
    for (const auto& [label, topology] : generators) {
        nlohmann::json d = out[0].doc;
        d["topology"] = topology;
        d["topology"]["link_defaults"] = nlohmann::json::object();
        out.push_back({label, d});
    }
    nlohmann::json skip = out[0].doc;
    skip["skipping"] = {{"enabled", true}};
    out.push_back({"skipping on", skip});
    nlohmann::json static_pfc = out[0].doc;
    static_pfc["network"]["pfc"] = {{"dynamic_threshold", false}};
    out.push_back({"static PFC threshold", static_pfc});
    nlohmann::json flowlet = out[0].doc;
    flowlet["network"]["load_balancing"] = "flowlet";
    out.push_back({"flowlet switching", flowlet});
    nlohmann::json explicit_fabric = out[0].doc;
    explicit_fabric["topology"] = {{"nodes", {{{"name", "h0"}, {"kind", "host"}}, {{"name", "h1"}, {"kind", "host"}}, {{"name", "s0"}, {"kind", "switch"}}}},
                                   {"links", {{{"a", "h0"}, {"b", "s0"}}, {{"a", "h1"}, {"b", "s0"}}}}};
    explicit_fabric["workload"] = {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 1}, {"size", "100KB"}}}}};
    out.push_back({"explicit fabric", explicit_fabric});
    nlohmann::json llm = out[0].doc;
    llm["topology"] = {{"generator", "single-switch"}, {"hosts", 8}};
    llm["workload"] = {{"kind", "llm"}, {"network_mode", "packet"},
                       {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1024}}},
                       {"parallel", {{"tp", 2}, {"dp", 2}, {"pp", 2}, {"micro_batches", 2}}},
                       {"collectives", nlohmann::json::object()}};
    out.push_back({"llm", llm});
    nlohmann::json moe = llm;
    moe["workload"]["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"ffn", 4096}, {"seq", 512}, {"vocab", 1024},
                                {"experts", 8}, {"top_k", 2}, {"moe_every", 1}, {"dense_layers", 1}, {"dense_ffn", 4096}, {"shared_experts", 1}};
    moe["workload"]["parallel"] = {{"tp", 2}, {"ep", 2}, {"dp", 4}, {"micro_batches", 2}};
    out.push_back({"llm moe", moe});
    nlohmann::json rails = llm;
    rails["topology"] = {{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}};
    rails["workload"]["parallel"] = {{"tp", 2}, {"dp", 8}, {"micro_batches", 1}};  // data-parallel rings cross rails: through the spines
    out.push_back({"llm on rails", rails});
    nlohmann::json servers = explicit_fabric;  // explicit nodes grouped into servers, for an LLM job's placement
    servers["topology"] = {{"nodes", {{{"name", "g0"}, {"kind", "host"}, {"server", 0}}, {{"name", "g1"}, {"kind", "host"}, {"server", 0}},
                                      {{"name", "g2"}, {"kind", "host"}, {"server", 1}}, {{"name", "g3"}, {"kind", "host"}, {"server", 1}},
                                      {{"name", "s0"}, {"kind", "switch"}, {"tier", 1}}}},
                           {"links", {{{"a", "g0"}, {"b", "s0"}}, {{"a", "g1"}, {"b", "s0"}}, {{"a", "g2"}, {"b", "s0"}}, {{"a", "g3"}, {"b", "s0"}}}}};
    servers["workload"] = llm["workload"];
    servers["workload"]["parallel"] = {{"tp", 2}, {"dp", 2}, {"micro_batches", 1}};
    out.push_back({"llm on explicit servers", servers});
    return out;
}

// What an LLM experiment computes in a mode without packets, as a digest: on the flow and analytic levels the
// outcome (iteration time, every rank's breakdown, the timeline, each transfer's times) and the flow table the
// run stores (output.record "fct"); with the busbw model SimAI's estimate. At packet level: compile().
Compiled mode_outcome(const nlohmann::json& doc, TimingMode mode) {
    if (mode == TimingMode::packet) return compile(doc);
    try {
        const LoadedScenario loaded = load_scenario_document(doc, "settings.json", ORRERY_SOURCE_DIR, kPresets);
        const Scenario& s = loaded.scenarios.at(0);
        const Fabric f = build_fabric(s.topology);
        LlmWorkload w = *s.workload.llm;
        std::string bytes;
        auto number = [&](double x) { bytes += std::to_string(x) + ","; };
        if (mode == TimingMode::busbw) {
#ifdef ORRERY_TEST_IMPORTS
            Diagnostics warnings;
            const BusbwEstimate e = estimate_simai_import(w, uint32_t(f.count(NodeKind::host)), load_busbw_ratios(kPresets), warnings);
            for (double x : {e.exposed_dp_s, e.exposed_dp_ep_s, e.exposed_tp_s, e.exposed_ep_s, e.exposed_pp_s, e.bubble_s, e.compute_s, e.total_s}) number(x);
            return {sha256_hex(bytes), ""};
#else
            return {"", "no importers in this build"};
#endif
        }
        const WorkloadTables tables = load_workload_tables(kPresets);
        Diagnostics warnings;
#ifdef ORRERY_TEST_IMPORTS
        const LlmJob job = prepare_any_llm_job(w, f, tables, warnings);
#else
        const LlmJob job = prepare_llm_job(w, f, tables);
#endif
        if (!job.oom_message.empty()) return {"", job.oom_message};
        number(double(job.memory.worst().total()));  // the memory check every mode makes (an experiment that does not fit ends "oom")
        const FlowNetwork net = flow_network(s, f);  // as the session prepares it
        const Routes routes = net.routes ? *net.routes : build_routes(f);
        const LlmOutcome o = mode == TimingMode::flow ? run_llm_flow(job, net.fabric(f), routes, wire_format(s), tables, {}, 0, net.split)
                                                      : run_llm_analytic(job, net.fabric(f), routes, uint32_t(s.network.packet_payload.count));
        number(o.iteration_time_s);
        for (const RankBreakdown& r : o.ranks)
            for (double x : {r.compute_s, r.optimizer_s, r.exposed_tp_s, r.exposed_pp_s, r.exposed_dp_s, r.exposed_ep_s, r.exposed_embedding_s, r.bubble_s}) number(x);
        for (const TimelineSpan& t : o.timeline)
            bytes += std::to_string(t.rank) + t.stream + t.name + t.kind + std::to_string(t.start_ps) + "-" + std::to_string(t.end_ps) + t.peers + ";";
        for (const auto& [start, end] : o.transfer_times) bytes += std::to_string(start) + "-" + std::to_string(end) + ",";
        bytes += "|stored flows " + std::to_string(s.output.record_fct);
        return {sha256_hex(bytes), ""};
    } catch (const InputError& e) {
        return {"", e.what()};
    } catch (const std::exception& e) {
        return {"", std::string("not an input error: ") + e.what()};
    }
}

// Each value of key `k` in turn on `doc`: "live" at the first that changes the outcome from `reference`, else
// "refused: …" when a value was refused, else `dead`. A refusal that is not an input error lands in `wrong`.
std::string verdict_of_key(const nlohmann::json& doc, const KeyUse& k, const std::string& reference,
                           const std::function<Compiled(const nlohmann::json&)>& outcome, std::string dead, size_t& tried, std::string& wrong) {
    for (const nlohmann::json& value : candidates(k)) {
        nlohmann::json changed = doc;
        std::string why;
        if (k.path.rfind("sweep", 0) == 0 || !set_at_path(changed, k.path, value, &why)) continue;
        ++tried;
        const Compiled c = outcome(changed);
        if (!c.refusal.empty()) {
            if (c.refusal.find("not an input error") != std::string::npos) wrong += "\n  " + k.path + ": " + c.refusal;
            if (dead.rfind("dead", 0) == 0) dead = "refused: " + c.refusal;
        } else if (c.digest != reference) {
            return "live";
        }
    }
    return dead;
}

// Keys each mode's walk leaves alone: the mode itself, and the fabric's shape (its generators and node lists are
// walked at packet level above, where a changed fabric changes the experiment); its links' rates, delays and
// losses are walked in every mode.
bool walked_elsewhere(const std::string& key) {
    if (key == "workload.network_mode" || key == "workload.collectives.model") return true;
    if (key.rfind("topology.", 0) != 0) return false;
    return key.rfind("topology.link_defaults", 0) != 0 && key != "topology.links.rate" && key != "topology.links.delay" && key != "topology.links.error_rate";
}

}  // namespace

class TestSettings : public QObject {
    Q_OBJECT
private slots:
    void every_key_changes_the_experiment_or_is_refused() {
        std::map<std::string, std::string> verdict;  // key (no indices) → "live", "refused: ..." or "dead: ..."
        size_t tried = 0;
        for (const Base& base : bases()) {
            const Compiled reference = compile(base.doc);
            QVERIFY2(reference.refusal.empty(), (base.label + ": " + reference.refusal).c_str());
            QCOMPARE(compile(base.doc).digest, reference.digest);  // the digest is stable: no stray bytes
            Diagnostics diags;
            diags.record_keys(true);
            const nlohmann::json resolved = resolve_presets(base.doc, kPresets, "settings.json", diags);
            read_scenario(resolved, {"settings.json", ORRERY_SOURCE_DIR}, diags);
            QVERIFY(!diags.keys_used().empty());
            std::set<std::string> seen;
            for (const KeyUse& k : diags.keys_used()) {
                const std::string key = without_indices(k.path);
                if (kNotSettings.count(key) || !seen.insert(k.path).second) continue;
                if (verdict[key] == "live") continue;
                std::string internal;
                const std::string outcome = verdict_of_key(base.doc, k, reference.digest, compile,
                                                           "dead in \"" + base.label + "\": every value compiled to the same experiment", tried, internal);
                QVERIFY2(internal.empty(), internal.c_str());
                std::string& v = verdict[key];
                if (v.empty() || v.rfind("dead", 0) == 0 || outcome == "live") v = outcome;
            }
        }
        QVERIFY(verdict.size() > 60);
        std::string dead;
        size_t live = 0;
        for (const auto& [key, v] : verdict) {
            if (v == "live") ++live;
            if (v.rfind("dead", 0) == 0) {
                dead += " " + key;
                qWarning("accepted and ignored: %s: %s", key.c_str(), v.c_str());
            }
        }
        qInfo("%zu keys walked (%zu values compiled): %zu change the experiment, %zu refuse every other value", verdict.size(), tried, live,
              verdict.size() - live);
        QVERIFY2(dead.empty(), ("keys accepted and ignored:" + dead).c_str());
    }
    void every_key_under_every_llm_mode_is_honoured_or_the_table_says_so() {
        // An LLM job on the flow and analytic networks and under SimAI's busbw formula: every key the reader asks
        // for is given other values one at a time. A key that changes what the mode computes must be "honoured"
        // in scenario/applicability's table; one that changes nothing must be "meaningless" there (and validate
        // and run then warn of it) or refused; a key the table calls meaningless must indeed change nothing.
        std::vector<std::pair<TimingMode, Base>> cases;
        for (const Base& b : bases()) {
            if (!b.doc["workload"].contains("model")) continue;  // the LLM bases
            for (TimingMode m : {TimingMode::flow, TimingMode::analytic}) {
                Base x = b;
                x.doc["workload"]["network_mode"] = timing_mode_name(m);
                x.label = b.label + " (" + timing_mode_name(m) + ")";
                cases.push_back({m, x});
            }
        }
#ifdef ORRERY_TEST_IMPORTS
        Base busbw = bases()[0];
        busbw.label = "SimAI import, busbw";
        // GPT-3 13B, TP 8 over 16 servers: its data-parallel all-reduces cross the NICs.
        busbw.doc["topology"] = {{"generator", "rail-optimized"}, {"gpus", 128}, {"gpus_per_server", 8}, {"link_defaults", nlohmann::json::object()}};
        busbw.doc["workload"] = {{"kind", "llm"}, {"gpu", "A100"},
                                 {"import", {{"format", "simai"}, {"path", std::string(ORRERY_TEST_DIR) + "/reference/formats/simai-workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt"}}},
                                 {"collectives", {{"model", "busbw"}, {"busbw", nlohmann::json::object()}}}};
        cases.push_back({TimingMode::busbw, busbw});
#endif
        std::map<std::pair<std::string, TimingMode>, std::string> verdict;  // (key, mode) → live, refused: …, dead: …
        size_t tried = 0;
        for (const auto& [mode, base] : cases) {
            const Compiled reference = mode_outcome(base.doc, mode);
            QVERIFY2(reference.refusal.empty(), (base.label + ": " + reference.refusal).c_str());
            QCOMPARE(mode_outcome(base.doc, mode).digest, reference.digest);
            Diagnostics diags;
            diags.record_keys(true);
            const nlohmann::json resolved = resolve_presets(base.doc, kPresets, "settings.json", diags);
            read_scenario(resolved, {"settings.json", ORRERY_SOURCE_DIR}, diags);
            std::set<std::string> seen;
            for (const KeyUse& k : diags.keys_used()) {
                const std::string key = without_indices(k.path);
                if (kNotSettings.count(key) || walked_elsewhere(key) || !seen.insert(k.path).second || k.path.rfind("sweep", 0) == 0) continue;
                std::string& v = verdict[{key, mode}];
                if (v == "live") continue;
                std::string internal;
                const std::string outcome = verdict_of_key(base.doc, k, reference.digest, [mode = mode](const nlohmann::json& d) { return mode_outcome(d, mode); },
                                                           "dead in \"" + base.label + "\"", tried, internal);
                QVERIFY2(internal.empty(), internal.c_str());
                if (v.empty() || v.rfind("dead", 0) == 0 || outcome == "live") v = outcome;
            }
        }
        std::string wrong;
        size_t live = 0, meaningless = 0;
        for (const auto& [key_mode, v] : verdict) {
            const auto& [key, mode] = key_mode;
            const KeyApplicability* row = applicability_of(key);
            const Applies said = row ? row->in[size_t(mode)] : Applies::honoured;
            if (v == "live") {
                ++live;
                if (said != Applies::honoured) wrong += "\n  " + key + " changes the outcome " + timing_mode_name(mode) + " but the table does not say honoured";
            } else if (v.rfind("dead", 0) == 0) {
                ++meaningless;
                if (said != Applies::meaningless) wrong += "\n  " + key + " at " + timing_mode_name(mode) + ": accepted and ignored (" + v + ") but the table says honoured";
            }
        }
        qInfo("%zu (key, mode) pairs walked (%zu values run): %zu honoured, %zu meaningless and warned of, the rest refused", verdict.size(), tried, live,
              meaningless);
        QVERIFY(verdict.size() > 100);
        if (!wrong.empty()) qWarning("%s", wrong.c_str());  // whole: QVERIFY2 cuts its message short
        QVERIFY2(wrong.empty(), "the table of scenario/applicability.cpp disagrees with what the modes compute (above)");
    }

    void a_key_a_mode_does_not_honour_is_warned_of_or_refused() {
        // The flow level ignores congestion control: a cc section is named in a warning, once; the busbw model
        // refuses channels; an LLM job refuses reference-format files.
        nlohmann::json doc;
        for (const Base& b : bases())
            if (b.label == "llm") doc = b.doc;
        doc["workload"]["network_mode"] = "flow";
        doc["cc"]["dcqcn"] = {{"rate_ai", "10Mbps"}, {"rate_hai", "50Mbps"}};
        doc["network"]["ecn"] = {{"enabled", false}};
        const LoadedScenario flow = load_scenario_document(doc, "s.json", ORRERY_SOURCE_DIR, kPresets);
        const std::string said = flow.warnings.format();
        QVERIFY2(said.find("s.json: cc: warning: has no effect at network_mode \"flow\"") != std::string::npos, said.c_str());
        QVERIFY2(said.find("cc: warning") == said.rfind("cc: warning"), said.c_str());  // once for the section, not per parameter
        QVERIFY2(said.find("cc.algorithm") == std::string::npos, said.c_str());            // its header bytes count at flow level
        QVERIFY2(said.find("s.json: network.ecn: warning: has no effect") != std::string::npos, said.c_str());
        QVERIFY2(said.find("output.record \"queues\"") == std::string::npos, said.c_str());  // this base names no record list
        doc["output"]["record"] = {"fct", "queues"};
        const std::string with_queues = load_scenario_document(doc, "s.json", ORRERY_SOURCE_DIR, kPresets).warnings.format();
        QVERIFY2(with_queues.find("s.json: output.record \"queues\": warning: has no effect") != std::string::npos, with_queues.c_str());
        QVERIFY2(with_queues.find("output.record \"fct\"") == std::string::npos, with_queues.c_str());
        doc["output"]["hpcc_files"] = {{"fct", "fct.txt"}};
        try {
            load_scenario_document(doc, "s.json", ORRERY_SOURCE_DIR, kPresets);
            QFAIL("reference-format files for an LLM job were accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("s.json: output.hpcc_files: error: refused") != std::string::npos, e.what());
        }
        // At packet level nothing of this is said.
        doc["workload"]["network_mode"] = "packet";
        doc["output"].erase("hpcc_files");
        const std::string packet = load_scenario_document(doc, "s.json", ORRERY_SOURCE_DIR, kPresets).warnings.format();
        QVERIFY2(packet.find("has no effect") == std::string::npos, packet.c_str());
    }

    void every_modelled_hpcc_config_key_changes_the_experiment_data() {
        QTest::addColumn<QString>("config");
        for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) QTest::newRow(cc) << QString("config_incast_%1.txt").arg(cc);
    }
    void every_modelled_hpcc_config_key_changes_the_experiment() {
        // Each key of a reference config.txt (the incast of each CC, every key at the value the reference runs
        // use) is changed on its own; the converted experiment must change, or the
        // reader must say on that key's line that it does not model it (or why the value is wrong).
        const std::filesystem::path ref = std::filesystem::path(ORRERY_TEST_DIR) / "reference/ns3-hpcc";
        QFETCH(QString, config);
        std::ifstream in(ref / config.toStdString());
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("orrery-settings-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        for (const char* f : {"topology.txt", "flow_incast.txt", "trace.txt"}) std::filesystem::copy_file(ref / f, dir / f, std::filesystem::copy_options::overwrite_existing);
        auto digest_of = [&](const std::vector<std::string>& text, std::string& said) -> std::string {
            std::ofstream out(dir / "config.txt");
            for (const std::string& l : text) out << l << "\n";
            out.close();
            Diagnostics warnings;
            try {
                auto job = load_hpcc_job(dir / "config.txt", dir, PresetLibrary(), warnings);
                said = warnings.format();
                const Batch b = compile_batch({job->input});
                return sha256_hex(batch_bytes(b) + run_settings(job->loaded.scenarios[0]));
            } catch (const InputError& e) {
                said = e.what();
                return "";
            }
        };
        std::string said;
        const std::string reference = digest_of(lines, said);
        QVERIFY2(!reference.empty(), said.c_str());
        const std::set<std::string> file_keys = {"TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE"};
        size_t checked = 0;
        std::string silent;
        for (size_t i = 0; i < lines.size(); ++i) {
            std::istringstream words(lines[i]);
            std::string key, value;
            if (!(words >> key >> value) || file_keys.count(key)) continue;
            std::vector<std::string> values;
            if (key.find("_MAP") != std::string::npos) {
                // the first rate's value (100G: the rate of this fabric's ports)
                std::istringstream t(lines[i]);
                std::vector<std::string> tok{std::istream_iterator<std::string>(t), std::istream_iterator<std::string>()};
                tok[3] = tok[0] == "PMAX_MAP" ? "0.5" : std::to_string(std::stoi(tok[3]) + (tok[0] == "KMIN_MAP" ? -100 : 100));
                std::string joined;
                for (const std::string& w : tok) joined += (joined.empty() ? "" : " ") + w;
                values = {joined};
            } else if (value == "0" || value == "1") {
                values = {key + " " + (value == "0" ? "1" : "0")};
            } else {
                const size_t unit = value.find_first_not_of("0123456789.");
                const double x = std::stod(value.substr(0, unit));
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.6g", x * 2 + 0.5 * (x == 0));
                values = {key + " " + buf + (unit == std::string::npos ? "" : value.substr(unit))};
            }
            for (const std::string& changed : values) {
                std::vector<std::string> text = lines;
                text[i] = changed;
                std::string message;
                const std::string d = digest_of(text, message);
                const bool on_its_line = message.find("config.txt:" + std::to_string(i + 1) + ":") != std::string::npos ||
                                         message.find(key + " (line " + std::to_string(i + 1) + ")") != std::string::npos;
                if (d == reference && !on_its_line) {
                    silent += " " + key;
                    qWarning("config.txt line %zu \"%s\" changed nothing and said nothing", i + 1, changed.c_str());
                }
                ++checked;
            }
        }
        std::filesystem::remove_all(dir);
        qInfo("%zu config.txt keys changed one at a time: each changed the experiment or was reported on its line", checked);
        QVERIFY(checked > 35);
        QVERIFY2(silent.empty(), ("keys changed without effect or word:" + silent).c_str());
    }
};

QTEST_GUILESS_MAIN(TestSettings)
#include "test_settings.moc"
