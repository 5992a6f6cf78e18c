#include <iostream>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/inputs.h"
#include "common/quantity.h"
#include "io/hpcc_config.h"
#include "runtime/hpcc_job.h"
#include "io/hpcc_flows.h"
#include "io/hpcc_topology.h"
#include "scenario/build.h"
#include "scenario/load.h"

namespace orrery::cli {
namespace {

// An HPCC config set: OUT names the config; the topology and flows go beside it as <stem>_topology.txt
// and <stem>_flow.txt. Nothing is written unless every file can be.
void write_config_set(const Scenario& scenario, const std::filesystem::path& out, bool force, const std::vector<std::filesystem::path>& inputs) {
    Scenario s = scenario;
    const Fabric f = build_fabric(s.topology);
    if (s.cc.ecn.empty() && s.network.ecn.empty()) {
        std::set<int64_t> rates;
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.node_kind[n] == NodeKind::network_switch)
                for (uint32_t p = f.port_begin[n]; p < f.port_begin[n + 1]; ++p) rates.insert(f.link_rate[f.port_link[p]].count);
        for (int64_t r : rates) s.network.ecn.push_back(ecn_for_rate(s, BitsPerSecond(r)));
    }
    if (s.network.buffer_per_switch.count % (1 << 20) != 0)
        throw InputError(s.source + ": network.buffer_per_switch", "the HPCC config gives the buffer in whole MiB; this one is not");
    // What the reference's config.txt cannot say is refused, not dropped: the converted files would run
    // another experiment than the scenario.
    const NetworkSpec defaults;
    const auto cannot = [&](const char* field, const std::string& what) {
        throw InputError(s.source + ": " + field, what + ": the reference's config.txt has no key for it (its switches always use PFC with the dynamic threshold, a 4096B reserve and a 3072B resume offset)");
    };
    if (hpcc_cc_mode(s.cc.algorithm) == 0) cannot("cc.algorithm", std::string("the congestion control \"") + cc_algorithm_name(s.cc.algorithm) + "\"");
    if (!s.network.pfc_enabled) cannot("network.pfc.enabled", "PFC off");
    if (!s.network.pfc_dynamic_threshold) cannot("network.pfc.dynamic_threshold", "a static PFC threshold");
    if (s.network.pfc_port_reserve.count != defaults.pfc_port_reserve.count) cannot("network.pfc.port_reserve", "a port reserve of " + format_size(s.network.pfc_port_reserve));
    if (s.network.pfc_resume_offset.count != defaults.pfc_resume_offset.count) cannot("network.pfc.resume_offset", "a resume offset of " + format_size(s.network.pfc_resume_offset));
    if (s.network.pfc_alpha_shift != defaults.pfc_alpha_shift) cannot("network.pfc.alpha_shift", "an alpha shift of " + std::to_string(s.network.pfc_alpha_shift));
    if (s.network.acks_in_control_queue)
        throw InputError(s.source + ": network.ack.switch_queue",
                         "ACKs in the switches' control queue: the reference's config.txt has no key for it (its switches carry ACKs in the data's class)");
    const std::string stem = out.stem().string();
    const std::filesystem::path dir = out.parent_path();
    const std::string topo_name = stem + "_topology.txt", flow_name = stem + "_flow.txt";
    const std::string config = write_hpcc_config(s, topo_name, flow_name);
    const std::string topology = write_hpcc_topology(f);
    const std::string flows = write_hpcc_flows(workload_flows(s));
    refuse_outputs({out, dir / topo_name, dir / flow_name}, force, inputs);
    write_output(dir / topo_name, topology, force);
    write_output(dir / flow_name, flows, force);
    write_output(out, config, force);
    std::cerr << "wrote " << out.string() << ", " << (dir / topo_name).string() << " and " << (dir / flow_name).string()
              << " (file names in the config are relative: run the reference from " << (dir.empty() ? std::string(".") : dir.string()) << ")\n";
}

}  // namespace

Runner add_convert(CLI::App& app, const PresetLibrary& presets) {
    struct Options {
        std::string in, out, from, to, experiment;
        bool force = false;
    };
    auto o = std::make_shared<Options>();
    app.add_option("IN", o->in, "Input: scenario .json, HPCC/SimAI config.txt or topology.txt, ASTRA-sim .yml, .graphml, .dot")->required();
    app.add_option("-o,--output", o->out, "Output file; its extension picks the format unless --to is given")->required();
    app.add_option("--from", o->from, "Input format: orrery, hpcc-config or a fabric format (" + fabric_format_list(true) + ")");
    std::vector<std::string> targets = fabric_format_names(false);
    targets.insert(targets.begin() + 1, "hpcc-config");
    std::string fabric_only;  // the written fabric formats but Orrery's own scenario
    for (const std::string& f : fabric_format_names(false))
        if (f != "orrery") fabric_only += (fabric_only.empty() ? "" : ", ") + f;
    app.add_option("--to", o->to, "Output format: orrery, hpcc-config, or the fabric alone as " + fabric_only)->check(CLI::IsMember(targets));
    app.add_option("--experiment", o->experiment, "With a sweep: the experiment to convert (an id from `orrery-cli expand`)");
    app.add_flag("--force", o->force, "Replace output files that exist");
    return [&presets, o]() -> int {
        const std::filesystem::path in = o->in, out = o->out;
        const Input input = detect_input(in, o->from);
        const InputKind kind = input.kind;
        refuse_outputs({out}, o->force, {in});
        const std::string ext = out.extension().string();
        Diagnostics warnings;
        if (kind == InputKind::hpcc_config || kind == InputKind::scenario) {
            std::filesystem::path out_dir = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
            nlohmann::json doc;
            std::optional<HpccConfig> config;
            std::string source = in.filename().string();
            std::filesystem::path base = in.parent_path().empty() ? std::filesystem::path(".") : in.parent_path();
            if (kind == InputKind::hpcc_config) {
                config = read_hpcc_config(read_text_file(in), in.string(), base, warnings);
                doc = scenario_from_hpcc_config(*config, std::filesystem::current_path(), out_dir, warnings);
                if (warnings.has_errors()) throw InputError(warnings);
                base = out_dir;  // the document's file names are now relative to the output
            } else {
                Diagnostics diags;
                doc = parse_json_text(read_text_file(in), source, diags);
                if (diags.has_errors()) throw InputError(diags);
            }
            LoadedScenario s = config ? load_config_scenario(*config, doc, source, base, presets) : load_scenario_document(doc, source, base, presets);
            warnings.append(s.warnings);
            print_diagnostics(warnings);
            const bool to_orrery = o->to == "orrery" || (o->to.empty() && ext == ".json");
            const bool to_config = o->to == "hpcc-config" || (o->to.empty() && ext == ".txt");
            if (to_orrery) {
                if (kind == InputKind::scenario) throw InputError(in.string(), "is already an Orrery scenario");
                write_output(out, doc.dump(2) + "\n", o->force);
                std::cerr << "wrote " << out.string() << "\n";
                return kOk;
            }
            if (to_config) {
                size_t index = 0;
                if (s.experiments.size() > 1 && o->experiment.empty())
                    throw InputError(in.string(), "expands to " + std::to_string(s.experiments.size()) +
                                                      " experiments; name one with --experiment (see `orrery-cli expand`)");
                if (!o->experiment.empty()) {
                    index = s.experiments.size();
                    for (size_t i = 0; i < s.experiments.size(); ++i)
                        if (s.experiments[i].id == o->experiment) index = i;
                    if (index == s.experiments.size()) throw InputError("--experiment", "no experiment \"" + o->experiment + "\" in " + in.string());
                }
                write_config_set(s.scenarios[index], out, o->force, scenario_inputs(in, s));
                return kOk;
            }
            const Fabric f = build_fabric(s.base.topology);
            write_output(out, fabric_text(f, out, o->to), o->force);
            std::cerr << "wrote the fabric of " << in.string() << " to " << out.string() << "\n";
            return kOk;
        }
        if (kind == InputKind::hpcc_flows) throw InputError(in.string(), "a flow file holds no fabric; convert the config that names it");
        if (o->to == "hpcc-config") throw InputError(in.string(), "a fabric file alone makes no config; convert a scenario or config instead");
        const Fabric f = load_fabric(in, input, presets, warnings);
        print_diagnostics(warnings);
        write_output(out, fabric_text(f, out, o->to), o->force);
        std::cerr << "wrote " << out.string() << "\n";
        return kOk;
    };
}

}  // namespace orrery::cli
