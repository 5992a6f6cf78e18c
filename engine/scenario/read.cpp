// Map: read_scenario() → read_topology() (read_topology.cpp: generators, explicit lists, imports) → read_network() →
// read_cc() → read_workload() → read_output() → read_sweep(). Each reader asks for its keys through
// JsonReader, then finish() reports the keys nobody asked for.
#include "scenario/read.h"
#include "workload/read_jobs.h"
#include "workload/read_llm.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/input_file.h"
#include "common/quantity.h"

namespace orrery {
namespace {

// ---- network --------------------------------------------------------------------------------------------
std::vector<EcnThreshold> read_ecn_thresholds(JsonReader& r, std::string_view key) {
    std::vector<EcnThreshold> out;
    const nlohmann::json* list = r.array(key, Need::optional, "an array of {rate, kmin, kmax, pmax}");
    if (!list) return out;
    std::set<int64_t> rates;
    for (size_t i = 0; i < list->size(); ++i) {
        JsonReader t((*list)[i], r.source(), index_path(r.path_of(key), i), r.diagnostics());
        if (!t.is_object()) {
            r.diagnostics().error(r.source() + ": " + t.path(), "expected {\"rate\", \"kmin\", \"kmax\", \"pmax\"}, found " + describe_json((*list)[i]));
            continue;
        }
        auto rate = t.rate("rate", Need::required);
        auto kmin = t.size("kmin", Need::required);
        auto kmax = t.size("kmax", Need::required);
        auto pmax = t.number("pmax", Need::required, 0.0, 1.0);
        t.finish();
        if (!rate || !kmin || !kmax || !pmax) continue;
        if (*kmin > *kmax) {
            t.error("kmax", "expected kmax ≥ kmin = " + format_size(*kmin) + ", found " + format_size(*kmax));
            continue;
        }
        if (!rates.insert(rate->count).second) {
            t.error("rate", "a second threshold for " + describe_rate(*rate) + "; give each rate once");
            continue;
        }
        out.push_back({*rate, *kmin, *kmax, *pmax});
    }
    return out;
}

NetworkSpec read_network(JsonReader& r) {
    NetworkSpec n;
    n.packet_payload = r.size("packet_payload", Need::optional).value_or(n.packet_payload);
    if (n.packet_payload.count < 64 || n.packet_payload.count > 65536)
        r.error("packet_payload", "expected a payload between 64B and 65536B, found " + format_size(n.packet_payload));
    n.buffer_per_switch = r.size("buffer_per_switch", Need::optional).value_or(n.buffer_per_switch);
    if (n.buffer_per_switch.count <= 0) r.error("buffer_per_switch", "expected a positive size, found 0B");
    if (auto e = r.object("ecn", Need::optional)) {
        n.ecn_enabled = e->boolean("enabled", Need::optional).value_or(true);
        n.ecn = read_ecn_thresholds(*e, "thresholds");
        e->finish();
    }
    if (auto p = r.object("pfc", Need::optional)) {
        n.pfc_enabled = p->boolean("enabled", Need::optional).value_or(true);
        n.pfc_dynamic_threshold = p->boolean("dynamic_threshold", Need::optional).value_or(true);
        const auto shift = p->integer("alpha_shift", Need::optional, 0, 16);
        n.pfc_alpha_shift = int(shift.value_or(3));
        n.pfc_static_threshold = p->size("static_threshold", Need::optional);
        if (n.pfc_dynamic_threshold && n.pfc_static_threshold)
            p->error("static_threshold", "a static threshold applies only with \"dynamic_threshold\": false");
        if (!n.pfc_dynamic_threshold && shift)
            p->error("alpha_shift", "alpha_shift sets the dynamic threshold, which \"dynamic_threshold\": false turns off");
        if (n.pfc_static_threshold && n.pfc_static_threshold->count <= 0) p->error("static_threshold", "expected a positive size, found 0B");
        n.pfc_port_reserve = p->size("port_reserve", Need::optional).value_or(n.pfc_port_reserve);
        if (n.pfc_port_reserve.count > int64_t(UINT32_MAX)) p->error("port_reserve", "at most 4 GiB (the buffer model counts bytes in 32 bits)");
        n.pfc_resume_offset = p->size("resume_offset", Need::optional).value_or(n.pfc_resume_offset);
        if (n.pfc_resume_offset.count > int64_t(UINT32_MAX)) p->error("resume_offset", "at most 4 GiB (the buffer model counts bytes in 32 bits)");
        p->finish();
    }
    if (auto lb = r.choice("load_balancing", Need::optional, {"ecmp", "spray", "adaptive", "flowlet"}))
        n.load_balancing = *lb == "spray" ? LoadBalancing::spray : *lb == "adaptive" ? LoadBalancing::adaptive
                         : *lb == "flowlet" ? LoadBalancing::flowlet : LoadBalancing::ecmp;
    if (auto gap = r.time("flowlet_gap", Need::optional)) {
        if (n.load_balancing != LoadBalancing::flowlet)
            r.error("flowlet_gap", "a flowlet gap applies only with \"load_balancing\": \"flowlet\"");
        else if (gap->count <= 0)
            r.error("flowlet_gap", "expected a positive time, found " + format_time(*gap));
        n.flowlet_gap = *gap;
    }
    if (auto nic = r.object("nic", Need::optional)) {
        if (auto d = nic->choice("delivery", Need::optional, {"in_order", "out_of_order"})) n.out_of_order = *d == "out_of_order";
        if (const nlohmann::json* t = nic->raw("retransmit_timeout", Need::optional, "a time like \"4.3s\", or \"off\"")) {
            if (t->is_string() && t->get<std::string>() == "off") n.retransmit_timeout = Picoseconds(0);
            else if (auto rto = nic->time("retransmit_timeout", Need::required); rto && rto->count <= 0)
                nic->error("retransmit_timeout", "expected a positive time, or \"off\", found " + format_time(*rto));
            else if (rto) n.retransmit_timeout = *rto;
        }
        nic->finish();
    }
    if (auto a = r.object("ack", Need::optional)) {
        n.ack_interval_packets = int(a->integer("interval_packets", Need::optional, 1, 1024).value_or(1));
        if (auto q = a->choice("switch_queue", Need::optional, {"data", "control"})) n.acks_in_control_queue = *q == "control";
        a->finish();
    }
    if (auto g = r.object("loss_recovery", Need::optional)) {
        n.go_back_chunk = g->size("chunk", Need::optional).value_or(n.go_back_chunk);
        n.go_back_to_zero = g->boolean("back_to_zero", Need::optional).value_or(false);
        if (n.go_back_to_zero && n.out_of_order)
            g->error("back_to_zero", "going back to the start of a chunk is go-back-N's; \"nic\": {\"delivery\": \"out_of_order\"} retransmits only what is missing");
        g->finish();
    }
    if (auto rt = r.object("routing", Need::optional)) {
        if (auto c = rt->time("convergence", Need::optional)) {
            if (c->count < 0) rt->error("convergence", "expected a time from 0 on, found " + format_time(*c));
            n.routing_convergence = *c;
        }
        if (auto w = rt->choice("weights", Need::optional, {"equal", "capacity"})) {
            n.capacity_weights = *w == "capacity";
            if (n.capacity_weights && (n.load_balancing == LoadBalancing::adaptive || n.load_balancing == LoadBalancing::flowlet))
                rt->error("weights", "adaptive routing and flowlets choose by queue occupancy, which already follows each port's capacity; weights "
                                     "apply to \"ecmp\" and \"spray\"");
        }
        rt->finish();
    }
    n.error_rate_per_link = r.number("error_rate_per_link", Need::optional, 0.0, 1.0).value_or(0.0);
    r.finish();
    return n;
}

// ---- congestion control ---------------------------------------------------------------------------------
// A CC parameter of net/cc_params.h, by the type of its field.
void read_param(JsonReader& o, const char* key, BitsPerSecond& v, double, double) { v = o.rate(key, Need::optional).value_or(v); }
void read_param(JsonReader& o, const char* key, Picoseconds& v, double, double) { v = o.time(key, Need::optional).value_or(v); }
void read_param(JsonReader& o, const char* key, double& v, double min, double max) { v = o.number(key, Need::optional, min, max).value_or(v); }
void read_param(JsonReader& o, const char* key, int& v, double min, double max) {
    v = int(o.integer(key, Need::optional, int64_t(min), int64_t(max)).value_or(v));
}
void read_param(JsonReader& o, const char* key, bool& v, double, double) { v = o.boolean(key, Need::optional).value_or(v); }

// Rules between one CC's parameters, checked once its object is read.
void check_cc_params(JsonReader& o, std::string_view cc, const CcSpec& c) {
    if (cc == "timely" && c.timely.t_low > c.timely.t_high)
        o.error("t_high", "expected t_high ≥ t_low = " + format_time(c.timely.t_low) + ", found " + format_time(c.timely.t_high));
}

// Each CC's object of parameters ("cc": {"dcqcn": {…}}), its keys as net/cc_params.h declares them.
void read_cc_params(JsonReader& r, CcSpec& c) {
    std::vector<std::string_view> objects;  // the CCs with parameters, in the table's order
#define ORRERY_CC_PARAM_OBJECT(cc, ...) \
    if (objects.empty() || objects.back() != #cc) objects.push_back(#cc);
    ORRERY_CC_PARAMS(ORRERY_CC_PARAM_OBJECT)
#undef ORRERY_CC_PARAM_OBJECT
    for (const std::string_view cc : objects) {
        auto o = r.object(cc, Need::optional);
        if (!o) continue;
#define ORRERY_CC_PARAM_READ(name, type, member, value, kind, min, max, ...) \
    if (cc == #name) read_param(*o, #member, c.name.member, min, max);
        ORRERY_CC_PARAMS(ORRERY_CC_PARAM_READ)
#undef ORRERY_CC_PARAM_READ
        check_cc_params(*o, cc, c);
        o->finish();
    }
}

CcSpec read_cc(JsonReader& r) {
    CcSpec c;
    if (auto algorithm = r.choice("algorithm", Need::required, cc_algorithm_names())) c.algorithm = *cc_algorithm_named(*algorithm);
    // The reference's run.py: windows for HPCC and DCTCP, high-priority ACKs for DCQCN and TIMELY.
    const bool windowed = cc_windowed_by_default(c.algorithm);
    c.min_rate = r.rate("min_rate", Need::optional).value_or(c.min_rate);
    c.rate_bound = r.boolean("rate_bound", Need::optional).value_or(true);
    c.window = r.boolean("window", Need::optional).value_or(windowed);
    c.variable_window = r.boolean("variable_window", Need::optional).value_or(windowed);
    c.global_base_rtt = r.boolean("global_base_rtt", Need::optional).value_or(true);
    c.ack_high_priority = r.boolean("ack_high_priority", Need::optional).value_or(!windowed);
    c.ecn = read_ecn_thresholds(r, "ecn");
    if (c.variable_window && !c.window) r.error("variable_window", "a variable window needs \"window\": true");
    read_cc_params(r, c);
    r.finish();
    return c;
}

// ---- workload -------------------------------------------------------------------------------------------
WorkloadSpec read_workload(JsonReader& r, const std::filesystem::path& base_dir) {
    WorkloadSpec w;
    w.kind = r.choice("kind", Need::required, {"flows", "llm", "jobs"}).value_or("flows");
    w.stop_time = r.time("stop_time", Need::optional);
    if (w.kind == "llm" || w.kind == "jobs") {
        if (w.kind == "llm") w.llm = read_llm_workload(r, base_dir);
        else w.jobs = read_jobs_workload(r, base_dir);
        r.finish();
        return w;
    }
    const bool has_list = r.has("flows"), has_file = r.has("file");
    if (has_list == has_file) {
        r.raw("flows");
        r.raw("file");
        r.error("", has_list ? "give the flows either as \"flows\" or as \"file\", not both"
                             : "missing the flows: expected \"flows\" (an array) or \"file\" (an HPCC flow.txt)");
    } else if (has_file) {
        if (auto f = r.string("file", Need::required))
            w.flow_file = std::filesystem::path(*f).is_absolute() ? std::filesystem::path(*f) : base_dir / *f;
        if (!w.flow_file.empty())
            if (const std::string problem = input_file_problem(w.flow_file); !problem.empty()) r.error("file", problem);
    } else if (const nlohmann::json* list = r.array("flows", Need::required, "an array of flows")) {
        for (size_t i = 0; i < list->size(); ++i) {
            JsonReader f((*list)[i], r.source(), index_path(r.path_of("flows"), i), r.diagnostics());
            if (!f.is_object()) {
                r.diagnostics().error(r.source() + ": " + f.path(), "expected a flow like {\"src\": 1, \"dst\": 0, \"size\": \"1MB\", \"start\": \"0us\"}, found " + describe_json((*list)[i]));
                continue;
            }
            FlowSpec flow;
            auto src = f.integer("src", Need::required, 0, 0xffff);
            auto dst = f.integer("dst", Need::required, 0, 0xffff);
            auto size = f.size("size", Need::required);
            auto start = f.time("start", Need::optional).value_or(Picoseconds(0));
            flow.priority = int(f.integer("priority", Need::optional, 1, 7).value_or(3));
            flow.dport = uint16_t(f.integer("dport", Need::optional, 1, 65535).value_or(100));
            f.finish();
            if (!src || !dst || !size) continue;
            if (*src == *dst) {
                f.error("dst", "a flow needs two different hosts; src and dst are both " + std::to_string(*src));
                continue;
            }
            if (size->count <= 0) {
                f.error("size", "expected a positive size, found " + format_size(*size));
                continue;
            }
            flow.src = NodeId(*src), flow.dst = NodeId(*dst), flow.size = *size, flow.start = start;
            flow.where = r.source() + ": " + f.path();
            w.flows.push_back(flow);
        }
        // Source ports as the reference assigns them: in start order, 10000 + n for the n-th flow of a pair.
        std::stable_sort(w.flows.begin(), w.flows.end(), [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
        std::map<std::pair<NodeId, NodeId>, uint16_t> next_port;
        for (FlowSpec& fl : w.flows) {
            auto [it, fresh] = next_port.emplace(std::make_pair(fl.src, fl.dst), uint16_t(10000));
            fl.sport = it->second++;
        }
    }
    r.finish();
    return w;
}

// ---- output ---------------------------------------------------------------------------------------------
OutputSpec read_output(JsonReader& r) {
    OutputSpec o;
    o.store = r.string("store", Need::optional).value_or(o.store);
    o.sample_interval = r.time("sample_interval", Need::optional).value_or(o.sample_interval);
    if (o.sample_interval.count <= 0) r.error("sample_interval", "expected a positive time, found " + format_time(o.sample_interval));
    if (const nlohmann::json* rec = r.array("record", Need::optional, "an array of \"fct\", \"pfc\", \"queues\", \"flow_rates\"")) {
        o.record_fct = o.record_pfc = o.record_queues = o.record_flow_rates = false;
        const std::vector<std::string> known = {"fct", "pfc", "queues", "flow_rates"};
        for (size_t i = 0; i < rec->size(); ++i) {
            const nlohmann::json& v = (*rec)[i];
            std::string s = v.is_string() ? v.get<std::string>() : "";
            if (s == "fct") o.record_fct = true;
            else if (s == "pfc") o.record_pfc = true;
            else if (s == "queues") o.record_queues = true;
            else if (s == "flow_rates") o.record_flow_rates = true;
            else {
                std::string hint = v.is_string() ? closest_match(s, known) : "";
                r.diagnostics().error(r.source() + ": " + index_path(r.path_of("record"), i),
                                      "expected one of " + quoted_list(known) + ", found " + describe_json(v) +
                                          (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
            }
        }
    }
    if (auto q = r.object("queue_monitor", Need::optional)) {
        o.queue_monitor_start = q->time("start", Need::required);
        o.queue_monitor_end = q->time("end", Need::required);
        o.queue_monitor_interval = q->time("interval", Need::optional).value_or(o.queue_monitor_interval);
        if (o.queue_monitor_start && o.queue_monitor_end && *o.queue_monitor_end < *o.queue_monitor_start)
            q->error("end", "expected end ≥ start = " + format_time(*o.queue_monitor_start) + ", found " + format_time(*o.queue_monitor_end));
        if (o.queue_monitor_interval.count <= 0) q->error("interval", "expected a positive time");
        q->finish();
    }
    if (auto h = r.object("hpcc_files", Need::optional)) {
        o.hpcc_fct_file = h->string("fct", Need::optional).value_or("");
        o.hpcc_pfc_file = h->string("pfc", Need::optional).value_or("");
        o.hpcc_qlen_file = h->string("qlen", Need::optional).value_or("");
        h->finish();
    }
    r.finish();
    return o;
}

// ---- skipping -------------------------------------------------------------------------------------------
SkippingSpec read_skipping(JsonReader& r, const std::filesystem::path& base_dir) {
    SkippingSpec k;
    k.enabled = r.boolean("enabled", Need::optional).value_or(k.enabled);
    k.theta = r.number("theta", Need::optional, 1e-6, 0.5).value_or(k.theta);
    if (auto l = r.integer("window", Need::optional, 3, 64)) k.window = int(*l);
    k.sample_interval = r.time("sample_interval", Need::optional);
    if (k.sample_interval && k.sample_interval->count < 1000)
        r.error("sample_interval", "expected at least 1 ns, found " + format_time(*k.sample_interval));
    k.memo = r.boolean("memo", Need::optional).value_or(k.memo);
    k.share_memo = r.boolean("share_memo", Need::optional).value_or(k.share_memo);
    if (auto f = r.string("memo_file", Need::optional)) {
        if (f->empty()) r.error("memo_file", "expected a file name, found an empty string");
        else k.memo_file = std::filesystem::path(*f).is_absolute() ? std::filesystem::path(*f) : base_dir / *f;
    }
    r.finish();
    return k;
}

// ---- sweep ----------------------------------------------------------------------------------------------
SweepSpec read_sweep(JsonReader& r, uint64_t base_seed) {
    SweepSpec s;
    auto mode = r.choice("mode", Need::optional, {"product", "zip"}).value_or("product");
    s.zip = mode == "zip";
    if (const nlohmann::json* params = r.array("parameters", Need::optional, "an array of {\"path\", \"values\"}")) {
        std::set<std::string> seen;
        for (size_t i = 0; i < params->size(); ++i) {
            JsonReader p((*params)[i], r.source(), index_path(r.path_of("parameters"), i), r.diagnostics());
            if (!p.is_object()) {
                r.diagnostics().error(r.source() + ": " + p.path(), "expected {\"path\": \"cc.algorithm\", \"values\": [...]}, found " + describe_json((*params)[i]));
                continue;
            }
            auto path = p.string("path", Need::required);
            const nlohmann::json* values = p.array("values", Need::required, "a non-empty array of values");
            p.finish();
            if (!path || !values) continue;
            if (values->empty()) {
                p.error("values", "expected a non-empty array of values, found []");
                continue;
            }
            if (path->empty() || path->rfind("sweep", 0) == 0 || *path == "seed" || *path == "format" || *path == "version") {
                p.error("path", "cannot sweep \"" + *path + "\"; sweep fields of topology, network, cc, workload or output (seeds: use \"replications\" or \"seeds\")");
                continue;
            }
            if (!seen.insert(*path).second) {
                p.error("path", "\"" + *path + "\" is swept twice; give all its values in one entry");
                continue;
            }
            s.parameters.push_back({*path, std::vector<nlohmann::json>(values->begin(), values->end())});
        }
        if (s.zip)
            for (size_t i = 1; i < s.parameters.size(); ++i)
                if (s.parameters[i].values.size() != s.parameters[0].values.size())
                    r.diagnostics().error(r.source() + ": " + index_path(r.path_of("parameters"), i) + ".values",
                                          "mode \"zip\" needs equal lengths: expected " + std::to_string(s.parameters[0].values.size()) +
                                              " values, found " + std::to_string(s.parameters[i].values.size()));
    }
    const bool has_reps = r.has("replications"), has_seeds = r.has("seeds");
    if (has_reps && has_seeds) {
        r.raw("seeds");
        r.error("replications", "give either \"replications\" or \"seeds\", not both");
    } else if (has_seeds) {
        if (const nlohmann::json* seeds = r.array("seeds", Need::required, "a non-empty array of integer seeds")) {
            std::set<uint64_t> distinct;
            for (size_t i = 0; i < seeds->size(); ++i) {
                const nlohmann::json& v = (*seeds)[i];
                if (!v.is_number_integer() || v.get<int64_t>() < 0) {
                    r.diagnostics().error(r.source() + ": " + index_path(r.path_of("seeds"), i), "expected a non-negative integer seed, found " + describe_json(v));
                } else if (!distinct.insert(v.get<uint64_t>()).second) {
                    r.diagnostics().error(r.source() + ": " + index_path(r.path_of("seeds"), i), "seed " + v.dump() + " appears twice");
                } else {
                    s.seeds.push_back(v.get<uint64_t>());
                }
            }
            if (seeds->empty()) r.error("seeds", "expected a non-empty array of integer seeds, found []");
        }
    } else {
        int64_t reps = r.integer("replications", Need::optional, 1, 100000).value_or(1);
        for (int64_t i = 0; i < reps; ++i) s.seeds.push_back(base_seed + uint64_t(i));
    }
    r.finish();
    return s;
}

}  // namespace

std::optional<Scenario> read_scenario(const nlohmann::json& document, const ReadContext& context, Diagnostics& diags) {
    const size_t errors_before = diags.error_count();
    if (!document.is_object()) {
        diags.error(context.source + ": (top level)", "expected a scenario object {\"format\": \"orrery-scenario\", \"version\": 1, ...}, found " + describe_json(document));
        return std::nullopt;
    }
    JsonReader r(document, context.source, "", diags);
    Scenario s;
    s.source = context.source;
    s.base_dir = context.base_dir;
    s.document = document;
    if (auto f = r.string("format", Need::required); f && *f != kScenarioFormatName)
        r.error("format", std::string("expected \"") + kScenarioFormatName + "\", found \"" + *f + "\"");
    if (auto v = r.raw("version", Need::required, "the format version 1"); v && !(v->is_number_integer() && v->get<int64_t>() == kScenarioFormatVersion))
        r.error("version", "this Orrery reads scenario format version " + std::to_string(kScenarioFormatVersion) + ", found " + describe_json(*v));
    s.name = r.string("name", Need::optional).value_or("");
    s.description = r.string("description", Need::optional).value_or("");
    s.seed = uint64_t(r.integer("seed", Need::optional, 0, INT64_MAX).value_or(1));
    if (auto t = r.object("topology", Need::required)) {
        if (auto spec = read_topology(*t, context.base_dir)) s.topology = std::move(*spec);
    }
    if (auto n = r.object("network", Need::optional)) s.network = read_network(*n);
    if (auto c = r.object("cc", Need::optional)) s.cc = read_cc(*c);
    if (auto w = r.object("workload", Need::optional)) s.workload = read_workload(*w, context.base_dir);
    if (auto o = r.object("output", Need::optional)) s.output = read_output(*o);
    if (auto k = r.object("skipping", Need::optional)) s.skipping = read_skipping(*k, context.base_dir);
    // HPCC's rate update compares each INT hop with the same hop of the flow's previous ACK: the reference's INT
    // carries no switch or port identity, so the arithmetic holds only while every packet of a flow takes one path.
    if (s.cc.algorithm == CcAlgorithm::hpcc && s.network.load_balancing != LoadBalancing::ecmp)
        r.error("network.load_balancing", "HPCC compares each INT hop with the same hop of the flow's previous ACK, which needs every packet "
                                          "of a flow on one path; spray, adaptive and flowlet move packets between paths: use \"ecmp\" with "
                                          "HPCC, or a CC without INT (dcqcn, timely, dctcp) to balance per packet");
    if (auto sw = r.object("sweep", Need::optional)) s.sweep = read_sweep(*sw, s.seed);
    else s.sweep.seeds = {s.seed};
    r.finish();
    if (diags.error_count() != errors_before) return std::nullopt;
    return s;
}

}  // namespace orrery
