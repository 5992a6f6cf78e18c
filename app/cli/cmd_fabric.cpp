#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "scenario/build.h"
#include "scenario/fabric_spec.h"
#include "scenario/read.h"
#include "topology/routing.h"

namespace orrery::cli {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int64_t peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return int64_t(u.ru_maxrss) * 1024;
}

Fabric fabric_from_argument(const std::string& arg, const PresetLibrary& presets, Diagnostics& warnings) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(arg, ec)) return load_fabric(arg, detect_input(arg, ""), presets, warnings);
    Diagnostics diags;
    nlohmann::json topology;
    if (arg.find(':') == std::string::npos && !presets.list("topology").empty()) {
        for (const PresetInfo& p : presets.list("topology"))
            if (p.name == arg) topology = *presets.load("topology", arg, arg, diags);
    }
    if (topology.is_null()) {
        auto spec = fabric_spec_to_json(arg, diags);
        if (!spec) throw InputError(diags);
        topology = *spec;
    }
    JsonReader r(topology, arg, "", diags);
    auto spec = read_topology(r, std::filesystem::current_path());
    if (!spec || diags.has_errors()) throw InputError(diags);
    Fabric f = build_fabric(*spec);
    f.name = arg;
    return f;
}

}  // namespace

Runner add_fabric(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string what, out, to;
        bool stats = false, json = false, force = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("SPEC", o->what,
                   "A generator spec (fat-tree:k=8, roft:gpus=128,gpus-per-server=8, leaf-spine:leaves=2,spines=2,hosts-per-leaf=8,"
                   "oversubscription=4, single-switch:hosts=16), a fabric preset name, a scenario or a fabric file")
        ->required();
    app.add_flag("--stats", o->stats, "Print the fabric's statistics (the default when no -o is given)");
    app.add_flag("--json", o->json, "Print the statistics as JSON");
    app.add_option("-o,--output", o->out, "Write the fabric to this file (.json, .txt, .graphml, .dot)");
    app.add_option("--to", o->to, "Output format: " + fabric_format_list(false))->check(CLI::IsMember(fabric_format_names(false)));
    app.add_flag("--force", o->force, "Replace the output file if it exists");
    return [&presets, o]() -> int {
        Diagnostics warnings;
        auto t0 = std::chrono::steady_clock::now();
        Fabric f = fabric_from_argument(o->what, presets, warnings);
        const double build_ms = ms_since(t0);
        print_diagnostics(warnings);
        if (!o->out.empty()) {
            write_output(o->out, fabric_text(f, o->out, o->to), o->force);
            std::cerr << "wrote " << o->out << "\n";
            if (!o->stats && !o->json) return kOk;
        }
        t0 = std::chrono::steady_clock::now();
        Routes routes = build_routes(f);
        const double route_ms = ms_since(t0);
        // Every destination group reachable from a representative host of every group means every host pair is.
        std::vector<NodeId> representative(routes.group_count, kNone);
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (routes.host_group[n] != kNone && representative[routes.host_group[n]] == kNone) representative[routes.host_group[n]] = n;
        uint64_t unreachable_groups = 0;
        size_t widest = 0;
        for (NodeId src : representative)
            for (NodeId dst : representative)
                if (src != dst && next_hops(f, routes, src, dst).empty()) ++unreachable_groups;
        for (size_t s = 0; s + 1 < routes.set_begin.size(); ++s) widest = std::max<size_t>(widest, routes.set_begin[s + 1] - routes.set_begin[s]);
        std::map<int, size_t> tiers;
        std::map<int64_t, size_t> rates;
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.node_kind[n] == NodeKind::network_switch) ++tiers[f.node_tier[n]];
        for (LinkId l = 0; l < f.link_count(); ++l) ++rates[f.link_rate[l].count];
        nlohmann::json stats = {{"fabric", f.name},
                                {"hosts", f.count(NodeKind::host)},
                                {"switches", f.count(NodeKind::network_switch)},
                                {"nvswitches", f.count(NodeKind::nvswitch)},
                                {"links", f.link_count()}};
        for (auto [tier, count] : tiers) stats["switches_by_tier"][std::to_string(tier)] = count;
        for (auto [rate, count] : rates) stats["links_by_rate"][format_rate(BitsPerSecond(rate))] = count;
        stats["routing"] = {{"destination_groups", routes.group_count},
                            {"forwarding_nodes", routes.forwarder_count},
                            {"next_hop_sets", routes.set_begin.size() - 1},
                            {"widest_ecmp_set", widest},
                            {"table_bytes", memory_bytes(routes)},
                            {"all_host_pairs_reachable", unreachable_groups == 0}};
        stats["build_ms"] = {{"fabric", build_ms}, {"routes", route_ms}};
        stats["peak_rss_bytes"] = peak_rss_bytes();
        if (o->json) {
            std::cout << stats.dump(2) << "\n";
        } else {
            std::cout << "fabric " << f.name << "\n"
                      << "  hosts        " << stats["hosts"] << "\n"
                      << "  switches     " << stats["switches"] << "  (by tier:";
            for (auto [tier, count] : tiers) std::cout << " tier " << tier << ": " << count;
            std::cout << ")\n";
            if (f.count(NodeKind::nvswitch)) std::cout << "  NVSwitches   " << stats["nvswitches"] << "\n";
            std::cout << "  links        " << stats["links"] << "  (";
            bool first = true;
            for (auto [rate, count] : rates) std::cout << (first ? "" : ", ") << count << " × " << describe_rate(BitsPerSecond(rate)), first = false;
            std::cout << ")\n"
                      << "  routing      " << routes.group_count << " destination groups, " << routes.set_begin.size() - 1
                      << " distinct ECMP sets (widest " << widest << "), tables " << describe_size(Bytes(int64_t(memory_bytes(routes)))) << "\n"
                      << "  reachability " << (unreachable_groups == 0 ? "every host reaches every host" : std::to_string(unreachable_groups) + " group pairs unreachable") << "\n"
                      << "  build time   fabric " << build_ms << " ms, routes " << route_ms << " ms\n"
                      << "  peak memory  " << describe_size(Bytes(peak_rss_bytes())) << "\n";
        }
        return kOk;
    };
}

}  // namespace orrery::cli
