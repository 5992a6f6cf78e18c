// Reads a scenario's "topology": a generator's parameters, explicit node and link lists, or an imported file
// (io/fabric_formats.h), with the link classes every generator takes. Adding a generator: its parameters and
// generate() in topology/generators.*, its reader here and a row in kGenerators.
#include <algorithm>
#include <map>
#include <set>

#include "common/input_file.h"
#include "common/quantity.h"
#include "io/fabric_formats.h"
#include "scenario/read.h"

namespace orrery {
namespace {

constexpr int64_t kMaxCount = 1'000'000;

// ---- link classes ---------------------------------------------------------------------------------------
struct LinkDefaults {
    LinkClass all{BitsPerSecond(100'000'000'000), Picoseconds(1'000'000)};  // 100 Gb/s, 1 us: the reference's links
    LinkClass host, tier1, tier2;
    LinkClass nvlink{BitsPerSecond(7'200'000'000'000), Picoseconds(25'000)};  // 900 GB/s, 25 ns (SimAI's NVLink delay)
};

LinkClass read_link_class(JsonReader& parent, std::string_view key, LinkClass fallback) {
    std::optional<JsonReader> r = parent.object(key, Need::optional);
    if (!r) return fallback;
    LinkClass c = fallback;
    if (auto v = r->rate("rate", Need::optional)) {
        if (v->count <= 0) r->error("rate", "expected a positive rate, found 0");
        c.rate = *v;
    }
    if (auto v = r->time("delay", Need::optional)) c.delay = *v;
    r->finish();
    return c;
}

LinkDefaults read_link_defaults(JsonReader& r) {
    LinkDefaults d;
    std::optional<JsonReader> l = r.object("link_defaults", Need::optional);
    if (l) d.all = read_link_class(*l, "all", d.all);
    d.host = d.tier1 = d.tier2 = d.all;
    if (l) {
        d.host = read_link_class(*l, "host", d.all);
        d.tier1 = read_link_class(*l, "tier1", d.all);
        d.tier2 = read_link_class(*l, "tier2", d.all);
        d.nvlink = read_link_class(*l, "nvlink", d.nvlink);
        l->finish();
    }
    return d;
}

// "servers": {"gpus_per_server": G} groups consecutive hosts into NVLink domains.
NvlinkDomain read_servers(JsonReader& r, const LinkDefaults& links, int64_t hosts, int64_t implied_gpus_per_server) {
    NvlinkDomain nv;
    nv.link = links.nvlink;
    nv.gpus_per_server = static_cast<int>(implied_gpus_per_server);
    std::optional<JsonReader> s = r.object("servers", Need::optional);
    if (!s) return nv;
    if (auto g = s->integer("gpus_per_server", Need::required, 1, 1024)) {
        if (implied_gpus_per_server > 0 && *g != implied_gpus_per_server)
            s->error("gpus_per_server", "expected " + std::to_string(implied_gpus_per_server) +
                                            " (the generator's gpus_per_server), found " + std::to_string(*g));
        else if (hosts > 0 && hosts % *g != 0)
            s->error("gpus_per_server", "expected a divisor of the " + std::to_string(hosts) + " hosts, found " + std::to_string(*g));
        else
            nv.gpus_per_server = static_cast<int>(*g);
    }
    s->finish();
    return nv;
}

std::optional<TopologySpec> read_fat_tree(JsonReader& r, const LinkDefaults& links) {
    auto k = r.integer("k", Need::required, 2, 128);
    if (k && *k % 2 != 0) {
        r.error("k", "expected an even switch radix k (a fat-tree has k/2 down and k/2 up ports), found " + std::to_string(*k));
        k.reset();
    }
    if (!k) return std::nullopt;
    ThreeTierParams p = fat_tree(static_cast<int>(*k), links.host, links.tier1, links.tier2);
    p.nvlink = read_servers(r, links, int64_t(p.pods) * p.tors_per_pod * p.hosts_per_tor, 0);
    return TopologySpec{"fat-tree", p, {}};
}

std::optional<TopologySpec> read_three_tier(JsonReader& r, const LinkDefaults& links) {
    auto pods = r.integer("pods", Need::required, 1, 4096);
    auto tors = r.integer("tors_per_pod", Need::required, 1, 4096);
    auto aggs = r.integer("aggs_per_pod", Need::required, 1, 4096);
    auto hosts = r.integer("hosts_per_tor", Need::required, 1, 4096);
    auto cores = r.integer("cores", Need::required, 1, 65536);
    if (cores && aggs && *cores % *aggs != 0) {
        r.error("cores", "expected a multiple of aggs_per_pod = " + std::to_string(*aggs) +
                             " (each aggregation switch owns an equal group of cores), found " + std::to_string(*cores));
        cores.reset();
    }
    if (!pods || !tors || !aggs || !hosts || !cores) return std::nullopt;
    if (*pods * *tors * *hosts > kMaxCount) {
        r.error("hosts_per_tor", "pods × tors_per_pod × hosts_per_tor is over " + std::to_string(kMaxCount) + " hosts");
        return std::nullopt;
    }
    ThreeTierParams p;
    p.pods = int(*pods), p.tors_per_pod = int(*tors), p.aggs_per_pod = int(*aggs), p.hosts_per_tor = int(*hosts), p.cores = int(*cores);
    p.host = links.host, p.tier1 = links.tier1, p.tier2 = links.tier2;
    p.nvlink = read_servers(r, links, *pods * *tors * *hosts, 0);
    return TopologySpec{"three-tier", p, {}};
}

std::optional<TopologySpec> read_rail_optimized(JsonReader& r, const LinkDefaults& links) {
    auto gpus = r.integer("gpus", Need::required, 1, kMaxCount);
    auto per_server = r.integer("gpus_per_server", Need::required, 1, 64);
    auto tiers = r.integer("tiers", Need::optional, 2, 3).value_or(2);
    if (!gpus || !per_server) return std::nullopt;
    if (*gpus % *per_server != 0) {
        r.error("gpus", "expected a multiple of gpus_per_server = " + std::to_string(*per_server) + ", found " + std::to_string(*gpus));
        return std::nullopt;
    }
    const int64_t servers = *gpus / *per_server;
    std::optional<int64_t> per_pod = servers;
    if (tiers == 3) {
        per_pod = r.integer("servers_per_pod", Need::required, 1, servers);
        if (per_pod && servers % *per_pod != 0) {
            r.error("servers_per_pod", "expected a divisor of the " + std::to_string(servers) + " servers, found " + std::to_string(*per_pod));
            per_pod.reset();
        }
    } else if (r.has("servers_per_pod")) {
        r.raw("servers_per_pod");
        r.error("servers_per_pod", "only a 3-tier rail-optimized fabric has pods; set \"tiers\": 3 or remove this key");
        per_pod.reset();
    }
    if (!per_pod) return std::nullopt;
    // Default: the largest divisor of the servers per rail (per pod) that a 64-port leaf can take with
    // as many uplinks as downlinks (≤ 32), so 48 servers get leaves of 24, not a refusal.
    int64_t default_per_leaf = 1;
    for (int64_t d = std::min<int64_t>(*per_pod, 32); d >= 1; --d)
        if (*per_pod % d == 0) {
            default_per_leaf = d;
            break;
        }
    auto per_leaf = r.integer("hosts_per_leaf", Need::optional, 1, 4096).value_or(default_per_leaf);
    if (*per_pod % per_leaf != 0) {
        r.error("hosts_per_leaf", "expected a divisor of the " + std::to_string(*per_pod) +
                                      " servers per rail" + (tiers == 3 ? " in a pod" : "") + ", found " + std::to_string(per_leaf));
        return std::nullopt;
    }
    auto spines = r.integer("spines", Need::optional, 1, 4096).value_or(per_leaf);
    RailOptimizedParams p;
    p.gpus = int(*gpus), p.gpus_per_server = int(*per_server), p.hosts_per_leaf = int(per_leaf);
    p.spines_per_pod = int(spines), p.tiers = int(tiers), p.servers_per_pod = int(*per_pod);
    p.host = links.host, p.tier1 = links.tier1, p.tier2 = links.tier2;
    p.nvlink = read_servers(r, links, *gpus, *per_server);
    return TopologySpec{"rail-optimized", p, {}};
}

std::optional<TopologySpec> read_leaf_spine(JsonReader& r, const LinkDefaults& links) {
    auto leaves = r.integer("leaves", Need::required, 1, 65536);
    auto spines = r.integer("spines", Need::required, 1, 65536);
    auto hosts = r.integer("hosts_per_leaf", Need::required, 1, 4096);
    auto over = r.number("oversubscription", Need::optional, 0.001, 1e6).value_or(1.0);
    if (!leaves || !spines || !hosts) return std::nullopt;
    // Uplink capacity per leaf = downlink capacity / oversubscription, in whole links per spine.
    const long double down = (long double)(*hosts) * links.host.rate.count;
    const long double per_spine = down / over / (long double)(*spines) / links.tier1.rate.count;
    const long double whole = std::llround(per_spine);
    if (whole < 1 || std::abs(per_spine - whole) > 1e-9 * std::max<long double>(1, whole)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4Lg", per_spine);
        r.error("oversubscription", "hosts_per_leaf × host rate / oversubscription must split into whole tier1 links per spine; " +
                                        std::to_string(*hosts) + " × " + describe_rate(links.host.rate) + " / " +
                                        nlohmann::json(over).dump() + " over " + std::to_string(*spines) + " spines of " +
                                        describe_rate(links.tier1.rate) + " links gives " + buf + " links per spine");
        return std::nullopt;
    }
    LeafSpineParams p;
    p.leaves = int(*leaves), p.spines = int(*spines), p.hosts_per_leaf = int(*hosts), p.links_per_spine = int(whole);
    p.host = links.host, p.tier1 = links.tier1;
    p.nvlink = read_servers(r, links, *leaves * *hosts, 0);
    return TopologySpec{"leaf-spine", p, {}};
}

std::optional<TopologySpec> read_single_switch(JsonReader& r, const LinkDefaults& links) {
    auto hosts = r.integer("hosts", Need::required, 1, 65536);
    if (!hosts) return std::nullopt;
    SingleSwitchParams p;
    p.hosts = int(*hosts);
    p.host = links.host;
    p.nvlink = read_servers(r, links, *hosts, 0);
    return TopologySpec{"single-switch", p, {}};
}

std::optional<TopologySpec> read_explicit(JsonReader& r, const LinkDefaults& links) {
    const nlohmann::json* nodes = r.array("nodes", Need::required, "an array of nodes");
    const nlohmann::json* link_list = r.array("links", Need::required, "an array of links");
    if (!nodes || !link_list) return std::nullopt;
    ExplicitTopology t;
    std::map<std::string, NodeId> by_name;
    const size_t errors_before = r.diagnostics().error_count();
    bool any_tier = false;
    for (size_t i = 0; i < nodes->size(); ++i) {
        JsonReader n((*nodes)[i], r.source(), index_path(r.path_of("nodes"), i), r.diagnostics());
        if (!n.is_object()) {
            r.diagnostics().error(r.source() + ": " + n.path(), "expected a node object like {\"name\": \"h0\", \"kind\": \"host\"}, found " + describe_json((*nodes)[i]));
            continue;
        }
        auto name = n.string("name", Need::required);
        auto kind = n.choice("kind", Need::required, {"host", "switch", "nvswitch"});
        auto tier = n.integer("tier", Need::optional, 0, 7);
        auto server = n.integer("server", Need::optional, 0, kMaxCount);
        auto group = n.integer("group", Need::optional, 0, kMaxCount);
        n.finish();
        if (!name || !kind) continue;
        if (by_name.count(*name)) {
            n.error("name", "duplicate node name \"" + *name + "\"");
            continue;
        }
        any_tier = any_tier || (tier && *kind == "switch");
        NodeKind k = *kind == "host" ? NodeKind::host : *kind == "switch" ? NodeKind::network_switch : NodeKind::nvswitch;
        by_name[*name] = add_node(t.fabric, k, uint8_t(tier.value_or(k == NodeKind::network_switch ? 1 : 0)),
                                  int32_t(server.value_or(-1)), int32_t(group.value_or(-1)));
        t.node_names.push_back(*name);
    }
    auto endpoint = [&](JsonReader& l, std::string_view key) -> std::optional<NodeId> {
        const nlohmann::json* v = l.raw(key, Need::required, "a node name or index");
        if (!v) return std::nullopt;
        if (v->is_string()) {
            auto it = by_name.find(v->get<std::string>());
            if (it != by_name.end()) return it->second;
            std::vector<std::string> names;
            for (auto& [nm, id] : by_name) names.push_back(nm);
            std::string hint = closest_match(v->get<std::string>(), names);
            l.error(key, "no node is named \"" + v->get<std::string>() + "\"" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
        } else if (v->is_number_unsigned() && v->get<uint64_t>() < t.fabric.node_count()) {
            return NodeId(v->get<uint64_t>());
        } else {
            l.error(key, "expected a node name or an index below " + std::to_string(t.fabric.node_count()) + ", found " + describe_json(*v));
        }
        return std::nullopt;
    };
    for (size_t i = 0; i < link_list->size(); ++i) {
        JsonReader l((*link_list)[i], r.source(), index_path(r.path_of("links"), i), r.diagnostics());
        if (!l.is_object()) {
            r.diagnostics().error(r.source() + ": " + l.path(), "expected a link object like {\"a\": \"h0\", \"b\": \"s0\"}, found " + describe_json((*link_list)[i]));
            continue;
        }
        auto a = endpoint(l, "a");
        auto b = endpoint(l, "b");
        auto rate = l.rate("rate", Need::optional).value_or(links.all.rate);
        auto delay = l.time("delay", Need::optional).value_or(links.all.delay);
        auto err = l.number("error_rate", Need::optional, 0.0, 1.0).value_or(0.0);
        l.finish();
        if (rate.count <= 0) l.error("rate", "expected a positive rate, found 0");
        if (a && b && *a == *b) l.error("b", "a link must join two different nodes; both ends are node " + std::to_string(*a));
        else if (a && b) add_link(t.fabric, *a, *b, rate, delay, err);
    }
    // Fabric-wide facts that file formats carry (SimAI's server size and GPU type, ASTRA-sim's forwarding NPUs).
    t.fabric.gpus_per_server = int(r.integer("gpus_per_server", Need::optional, 0, 1024).value_or(0));
    t.fabric.gpu_type = r.string("gpu_type", Need::optional).value_or("");
    t.fabric.hosts_forward = r.boolean("hosts_forward", Need::optional).value_or(false);
    if (r.diagnostics().error_count() != errors_before) return std::nullopt;
    finalize_ports(t.fabric);
    if (!any_tier) infer_tiers(t.fabric);
    for (const std::string& problem : check_fabric(t.fabric)) r.error("links", problem);
    if (r.diagnostics().error_count() != errors_before) return std::nullopt;
    return TopologySpec{"explicit", std::move(t), {}};
}

std::optional<TopologySpec> read_import(JsonReader& r, const std::filesystem::path& base_dir) {
    auto file = r.string("import", Need::required);
    auto format = r.choice("format", Need::optional, fabric_format_names(true));
    if (!file) return std::nullopt;
    ImportedTopology t;
    t.path = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base_dir / *file;
    // Without a format, the one the extension names if it is read, else HPCC's text (its files have any name).
    const FabricFormat* by_extension = fabric_format_of_extension(t.path);
    t.format = format.value_or(by_extension && by_extension->read ? by_extension->name : "hpcc");
    if (const std::string problem = input_file_problem(t.path); !problem.empty()) {
        r.error("import", problem);
        return std::nullopt;
    }
    return TopologySpec{"import", t, {}};
}

// Every generator a scenario names, and its reader.
struct Generator {
    const char* name;
    std::optional<TopologySpec> (*read)(JsonReader& r, const LinkDefaults& links);
};
constexpr Generator kGenerators[] = {
    {"fat-tree", read_fat_tree},       {"three-tier", read_three_tier},     {"rail-optimized", read_rail_optimized},
    {"leaf-spine", read_leaf_spine},   {"single-switch", read_single_switch},
};

// A node as an event names it: a name, or a node id (fabrics without names); nullopt for anything else.
std::optional<std::string> node_text(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return std::to_string(v.get<int64_t>());
    return std::nullopt;
}

// Which of two exclusive keys the object gives: `a` (true), `b` (false), or neither or both (reported, nullopt).
std::optional<bool> one_of(JsonReader& r, const char* a, const char* b, const std::string& both, const std::string& neither) {
    const bool has_a = r.has(a), has_b = r.has(b);
    if (has_a != has_b) return has_a;
    r.raw(a);
    r.raw(b);
    r.error("", has_a ? both : neither);
    return std::nullopt;
}

// "link": {"tiers": [2, 3], "index": 5} or {"tiers": [2, 3], "random": 2, "seed": 7}.
void read_tier_selector(JsonReader& sel, FabricEventSpec& ev) {
    if (const nlohmann::json* tiers = sel.array("tiers", Need::required, "two tiers, like [2, 3]")) {
        auto tier = [&](size_t i) { return (*tiers)[i].is_number_integer() && (*tiers)[i].get<int64_t>() >= 0 && (*tiers)[i].get<int64_t>() < 8; };
        if (tiers->size() == 2 && tier(0) && tier(1)) {
            ev.tier_a = int((*tiers)[0].get<int64_t>());
            ev.tier_b = int((*tiers)[1].get<int64_t>());
        } else {
            sel.error("tiers", "expected two tiers, like [2, 3] (0: hosts, 1: leaves or ToRs, 2: spines or aggregation, 3: cores), found " +
                                   describe_json(*tiers));
        }
    }
    const std::optional<bool> by_index = one_of(sel, "index", "random", "give \"index\" (the n-th link between the tiers) or \"random\" (how many, with a \"seed\"), one of them",
                                                "give \"index\" (the n-th link between the tiers) or \"random\" (how many, with a \"seed\"), one of them");
    if (by_index == true) {
        ev.tier_index = sel.integer("index", Need::required, 0, INT32_MAX).value_or(0);
    } else if (by_index == false) {
        ev.random_count = sel.integer("random", Need::required, 1, INT32_MAX).value_or(1);
        ev.random_seed = uint64_t(sel.integer("seed", Need::required, 0, INT64_MAX).value_or(0));
    }
    sel.finish();
    if (ev.tier_a < 0) ev.tier_a = ev.tier_b = 99;  // reported above; resolves to no link
}

// An event's "link": an index, its two ends, or a tier selector.
void read_event_link(JsonReader& e, const nlohmann::json& l, FabricEventSpec& ev) {
    if (l.is_number_integer() && l.get<int64_t>() >= 0) {
        ev.link_index = l.get<int64_t>();
    } else if (l.is_object()) {
        JsonReader sel(l, e.source(), e.path_of("link"), e.diagnostics());
        read_tier_selector(sel, ev);
    } else {
        const auto a = l.is_array() && l.size() == 2 ? node_text(l[0]) : std::nullopt, b = l.is_array() && l.size() == 2 ? node_text(l[1]) : std::nullopt;
        if (a && b) {
            ev.end_a = *a;
            ev.end_b = *b;
        } else {
            e.error("link", "expected a link's index, its two ends or a tier selector, like 12, [\"leaf0\", \"spine2\"] or {\"tiers\": [2, 3], "
                            "\"index\": 0}, found " + describe_json(l));
        }
    }
}

// topology.events: failures, repairs and degradations at their times (topology/fabric_events.h).
std::vector<FabricEventSpec> read_events(JsonReader& r) {
    std::vector<FabricEventSpec> out;
    const nlohmann::json* list = r.array("events", Need::optional, "an array of events");
    if (!list) return out;
    for (size_t i = 0; i < list->size(); ++i) {
        JsonReader e((*list)[i], r.source(), index_path(r.path_of("events"), i), r.diagnostics());
        if (!e.is_object()) {
            r.diagnostics().error(r.source() + ": " + e.path(), "expected an event like {\"at\": \"200us\", \"link\": 12, \"state\": \"down\"}, found " +
                                                                   describe_json((*list)[i]));
            continue;
        }
        FabricEventSpec ev;
        ev.where = r.source() + ": " + e.path();
        const auto at = e.time("at", Need::required);
        if (at && at->count < 0) e.error("at", "expected a time from the start on, found " + format_time(*at));
        ev.at = at.value_or(Picoseconds(0));
        const std::optional<bool> link = one_of(e, "link", "switch", "an event names a link or a switch, not both",
                                                "missing what the event changes: \"link\" (an index or two end names) or \"switch\" (a name)");
        if (link == false) {
            ev.names_switch = true;
            if (const nlohmann::json* n = e.raw("switch", Need::required)) {
                if (auto text = node_text(*n)) ev.node = *text;
                else e.error("switch", "expected a switch's name (or its node id), found " + describe_json(*n));
            }
        } else if (link == true) {
            if (const nlohmann::json* l = e.raw("link", Need::required)) read_event_link(e, *l, ev);
        }
        const std::optional<bool> state = one_of(e, "state", "rate", "an event sets a state or a rate, not both",
                                                 "missing what happens: \"state\" (\"down\" or \"up\") or \"rate\" (a link's new rate)");
        if (state == true) {
            if (auto st = e.choice("state", Need::required, {"down", "up"})) ev.kind = *st == "down" ? FabricEventKind::down : FabricEventKind::up;
        } else if (state == false) {
            ev.kind = FabricEventKind::rate;
            if (ev.names_switch) e.error("rate", "a rate applies to one link; to take a switch out give \"state\": \"down\"");
            if (auto rate = e.rate("rate", Need::required)) {
                if (rate->count <= 0) e.error("rate", "expected a positive rate (a link at 0 is down: give \"state\": \"down\"), found " + format_rate(*rate));
                ev.rate = *rate;
            }
        }
        e.finish();
        out.push_back(std::move(ev));
    }
    return out;
}

}  // namespace

std::optional<TopologySpec> read_topology(JsonReader& r, const std::filesystem::path& base_dir) {
    const int sources = int(r.has("generator")) + int(r.has("nodes")) + int(r.has("import"));
    if (sources != 1) {
        r.raw("generator");
        r.raw("nodes");
        r.raw("links");
        r.raw("import");
        r.error("", std::string(sources == 0 ? "missing the fabric: expected" : "several fabrics given: expected exactly one of") +
                        " \"generator\", \"nodes\" with \"links\", or \"import\"");
        r.finish();
        return std::nullopt;
    }
    LinkDefaults links = read_link_defaults(r);
    std::optional<TopologySpec> t;
    if (r.has("import")) {
        t = read_import(r, base_dir);
    } else if (r.has("nodes")) {
        t = read_explicit(r, links);
    } else {
        std::vector<std::string> names;
        for (const Generator& g : kGenerators) names.push_back(g.name);
        if (auto name = r.choice("generator", Need::required, names))
            for (const Generator& g : kGenerators)
                if (*name == g.name) t = g.read(r, links);
    }
    std::vector<FabricEventSpec> events = read_events(r);
    if (t) t->events = std::move(events);
    r.finish();
    return t;
}

}  // namespace orrery
