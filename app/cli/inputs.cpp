#include "cli/inputs.h"

#include <fstream>
#include <map>
#include <iostream>

#include "io/astra_yaml.h"
#include "io/graph_formats.h"
#include "io/hpcc_topology.h"
#include "io/token_stream.h"
#include "scenario/build.h"
#include "scenario/load.h"

namespace orrery::cli {

PresetLibrary find_presets(const char* argv0) { return standard_presets(argv0); }

const char* input_kind_name(InputKind k) {
    switch (k) {
        case InputKind::scenario: return "orrery";
        case InputKind::hpcc_config: return "hpcc-config";
        case InputKind::hpcc_topology: return "hpcc";
        case InputKind::hpcc_flows: return "hpcc-flows";
        case InputKind::astra_yaml: return "astra-yaml";
        case InputKind::graphml: return "graphml";
        case InputKind::dot: return "dot";
        case InputKind::simai_workload: return "simai-workload";
        case InputKind::chakra_trace: return "chakra";
        case InputKind::msccl_xml: return "msccl";
        case InputKind::mscclpp_json: return "mscclpp";
    }
    return "?";
}

InputKind detect_input(const std::filesystem::path& file, const std::string& from) {
    for (InputKind k : {InputKind::scenario, InputKind::hpcc_config, InputKind::hpcc_topology, InputKind::hpcc_flows, InputKind::astra_yaml,
                        InputKind::graphml, InputKind::dot, InputKind::simai_workload, InputKind::chakra_trace, InputKind::msccl_xml, InputKind::mscclpp_json})
        if (from == input_kind_name(k)) return k;
    if (!from.empty())
        throw InputError("--from", "unknown format \"" + from +
                                       "\"; known: orrery, hpcc-config, hpcc, hpcc-flows, astra-yaml, graphml, dot, simai-workload, chakra, msccl, mscclpp");
    const std::string ext = file.extension().string();
    const std::string name = file.filename().string();
    if (ext == ".et" || (ext == ".gz" && file.stem().extension() == ".et")) return InputKind::chakra_trace;
    if (ext == ".json") {
        // An MSCCL++ execution plan is JSON too: a top-level "gpus" and "collective" and no "format".
        Diagnostics unread;  // text that is not JSON is reported by the scenario reader, with its line
        const nlohmann::json j = parse_json_text(read_text_file(file), name, unread);
        if (j.is_object() && j.contains("gpus") && j.contains("collective") && !j.contains("format")) return InputKind::mscclpp_json;
        return InputKind::scenario;
    }
    if (ext == ".xml" && read_text_file(file).find("<algo") != std::string::npos) return InputKind::msccl_xml;
    if (ext == ".graphml" || ext == ".xml") return InputKind::graphml;
    if (ext == ".dot" || ext == ".gv") return InputKind::dot;
    if (ext == ".yml" || ext == ".yaml") return InputKind::astra_yaml;
    const std::string text = read_text_file(file);
    size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) throw InputError(file.string(), "the file is empty");
    size_t end = text.find('\n', start);
    std::string first = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string policy = first.substr(0, first.find_first_of(" \t\r"));
    for (const char* p : {"HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER", "MICRO", "DATA", "MODEL", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED",
                          "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", "DISTRIBUTED_INFERENCE"})
        if (policy == p) return InputKind::simai_workload;
    if (first.find("model_parallel_NPU_group:") != std::string::npos) return InputKind::simai_workload;  // a SimAI header, its policy misspelt
    if (std::isupper(static_cast<unsigned char>(first[0]))) return InputKind::hpcc_config;
    if (first[0] == '{') return InputKind::scenario;
    if (first[0] == '<') return InputKind::graphml;
    if (first.rfind("graph", 0) == 0 || first.rfind("strict", 0) == 0 || first.rfind("digraph", 0) == 0) return InputKind::dot;
    const size_t fields = count_tokens(first);
    if (std::isdigit(static_cast<unsigned char>(first[0]))) return fields == 1 ? InputKind::hpcc_flows : InputKind::hpcc_topology;
    throw InputError(file.string() + ":1", "cannot tell the format of this file; name it with --from (orrery, hpcc-config, hpcc, hpcc-flows, astra-yaml, graphml, dot, "
                                           "simai-workload, chakra, msccl, mscclpp)");
}

std::filesystem::path scenario_argument(const std::string& arg, const PresetLibrary& presets, bool* bundled) {
    if (bundled) *bundled = false;
    if (std::filesystem::exists(arg) || arg.find('/') != std::string::npos) return arg;
    for (const std::filesystem::path& root : presets.roots()) {
        const std::filesystem::path p = root / "scenarios" / (arg + ".json");
        if (std::filesystem::exists(p)) {
            if (bundled) *bundled = true;
            return p;
        }
    }
    return arg;
}

Fabric load_fabric(const std::filesystem::path& file, InputKind kind, const PresetLibrary& presets, Diagnostics& warnings) {
    switch (kind) {
        case InputKind::hpcc_topology: return read_hpcc_topology_file(file);
        case InputKind::astra_yaml: return read_astra_yaml_file(file);
        case InputKind::graphml: return read_graphml_file(file);
        case InputKind::dot: return read_dot_file(file);
        case InputKind::scenario: {
            LoadedScenario s = load_scenario_file(file, presets, LoadOptions{false});
            warnings.append(s.warnings);
            return build_fabric(s.base.topology);
        }
        default:
            throw InputError(file.string(), std::string("a ") + input_kind_name(kind) + " file holds no fabric");
    }
}

void refuse_existing(const std::filesystem::path& file, bool force) {
    std::error_code ec;
    const std::filesystem::file_status link = std::filesystem::symlink_status(file, ec);
    if (ec || link.type() == std::filesystem::file_type::not_found) return;
    // --force replaces regular files only: never a device (/dev/null), a pipe, a socket, a folder, or what a
    // symbolic link points to.
    const auto kind = [](std::filesystem::file_type t) -> const char* {
        switch (t) {
            case std::filesystem::file_type::directory: return "a folder";
            case std::filesystem::file_type::symlink: return "a symbolic link";
            case std::filesystem::file_type::character: return "a character device";
            case std::filesystem::file_type::block: return "a block device";
            case std::filesystem::file_type::fifo: return "a named pipe";
            case std::filesystem::file_type::socket: return "a socket";
            default: return "not a regular file";
        }
    };
    if (link.type() != std::filesystem::file_type::regular)
        throw InputError(file.string(), std::string("is ") + kind(link.type()) + ", not a regular file: Orrery writes only regular files, even with --force");
    if (!force) throw InputError(file.string(), "already exists; not overwriting it (pass --force to replace it)");
}

void refuse_outputs(const std::vector<std::filesystem::path>& files, bool force) {
    std::map<std::string, std::filesystem::path> seen;
    for (const std::filesystem::path& f : files) {
        std::error_code ec;
        std::filesystem::path same = std::filesystem::weakly_canonical(f, ec);
        if (ec) same = std::filesystem::absolute(f).lexically_normal();
        if (auto [it, fresh] = seen.emplace(same.string(), f); !fresh)
            throw InputError(f.string(), "is named twice among this command's outputs (and the results store): two outputs cannot share a file; give them different names");
        refuse_existing(f, force);
    }
}

void refuse_store_path(const std::filesystem::path& store, const std::vector<std::filesystem::path>& outputs) {
    std::vector<std::filesystem::path> all = outputs;
    all.push_back(store);
    refuse_outputs(all, true);  // an existing store is appended to: only its kind and its name are checked
}

void write_output(const std::filesystem::path& file, const std::string& text, bool force) {
    refuse_existing(file, force);
    std::error_code ec;
    std::filesystem::path tmp = file;
    tmp += ".orrery-tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary);
        if (!out) throw InputError(file.string(), "cannot write here (does the folder exist and is it writable?)");
        out << text;
        if (!out.flush()) throw InputError(file.string(), "writing failed (disk full?)");
    }
    std::filesystem::rename(tmp, file, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw InputError(file.string(), "cannot move the finished file into place");
    }
}

void print_diagnostics(const Diagnostics& d) {
    for (const Diagnostic& item : d.items()) std::cerr << item.line() << "\n";
}

}  // namespace orrery::cli

#include "io/fabric_json.h"

namespace orrery::cli {

std::string fabric_text(const Fabric& f, const std::filesystem::path& out, const std::string& to) {
    const std::string ext = out.extension().string();
    const std::string format = !to.empty() ? to
                             : ext == ".json" ? "orrery"
                             : ext == ".graphml" || ext == ".xml" ? "graphml"
                             : ext == ".dot" || ext == ".gv" ? "dot"
                             : ext == ".txt" || ext.empty() ? "hpcc" : "";
    if (format == "orrery") {
        nlohmann::json topology = fabric_to_topology_json(f);
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"name", out.stem().string()},
                              {"description", "Fabric converted from " + f.name}, {"topology", topology}};
        return doc.dump(2) + "\n";
    }
    if (format == "graphml") return write_graphml(f);
    if (format == "dot") return write_dot(f);
    if (format == "hpcc" || format == "simai") {
        if (f.hosts_forward)
            throw InputError(out.string(), "this fabric forwards through its hosts (ASTRA-sim Ring/FullyConnected); the HPCC format has only switches forwarding");
        return write_hpcc_topology(f);
    }
    throw InputError(out.string(), "cannot tell the output format from the name; use --to orrery, hpcc, graphml or dot");
}

}  // namespace orrery::cli
