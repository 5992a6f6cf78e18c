#include "cli/inputs.h"

#include <fstream>
#include <unistd.h>
#include <map>
#include <iostream>

#include "io/token_stream.h"
#include "scenario/build.h"
#include "scenario/load.h"

namespace orrery::cli {

PresetLibrary find_presets(const char* argv0) { return standard_presets(argv0); }

namespace {

// The inputs that are not fabrics, by the name --from takes.
struct OtherInput {
    InputKind kind;
    const char* name;
};
constexpr OtherInput kOtherInputs[] = {{InputKind::scenario, "orrery"},           {InputKind::hpcc_config, "hpcc-config"},
                                       {InputKind::hpcc_flows, "hpcc-flows"},     {InputKind::simai_workload, "simai-workload"},
                                       {InputKind::chakra_trace, "chakra"},       {InputKind::msccl_xml, "msccl"},
                                       {InputKind::mscclpp_json, "mscclpp"}};

Input fabric_input(const char* format) { return {InputKind::fabric, fabric_format_named(format)}; }

}  // namespace

std::string input_name(const Input& in) {
    if (in.kind == InputKind::fabric) return in.fabric ? in.fabric->name : "?";
    for (const OtherInput& o : kOtherInputs)
        if (o.kind == in.kind) return o.name;
    return "?";
}

std::string input_names() {
    std::string out;
    for (const OtherInput& o : kOtherInputs) {
        out += out.empty() ? "" : ", ";
        out += o.name;
        if (o.kind == InputKind::hpcc_config)
            for (const std::string& f : fabric_format_names(true)) out += ", " + f;
    }
    return out;
}

Input detect_input(const std::filesystem::path& file, const std::string& from) {
    for (const OtherInput& o : kOtherInputs)
        if (from == o.name) return {o.kind, nullptr};
    if (const FabricFormat* f = fabric_format_named(from); f && f->read) return {InputKind::fabric, f};
    if (!from.empty()) throw InputError("--from", "unknown format \"" + from + "\"; known: " + input_names());
    const std::string ext = file.extension().string();
    const std::string name = file.filename().string();
    if (ext == ".et" || (ext == ".gz" && file.stem().extension() == ".et")) return {InputKind::chakra_trace};
    if (ext == ".json") {
        // An MSCCL++ execution plan is JSON too: a top-level "gpus" and "collective" and no "format".
        Diagnostics unread;  // text that is not JSON is reported by the scenario reader, with its line
        const nlohmann::json j = parse_json_text(read_text_file(file), name, unread);
        if (j.is_object() && j.contains("gpus") && j.contains("collective") && !j.contains("format")) return {InputKind::mscclpp_json};
        return {InputKind::scenario};
    }
    if (ext == ".xml" && read_text_file(file).find("<algo") != std::string::npos) return {InputKind::msccl_xml};
    // A text file's extension says little (.txt: configs, topologies, flows, SimAI workloads): its first line does.
    if (const FabricFormat* f = fabric_format_of_extension(file); f && f->read && ext != ".txt") return {InputKind::fabric, f};
    const std::string text = read_text_file(file);
    size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) throw InputError(file.string(), "the file is empty");
    size_t end = text.find('\n', start);
    std::string first = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string policy = first.substr(0, first.find_first_of(" \t\r"));
    for (const char* p : {"HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER", "MICRO", "DATA", "MODEL", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED",
                          "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", "DISTRIBUTED_INFERENCE"})
        if (policy == p) return {InputKind::simai_workload};
    if (first.find("model_parallel_NPU_group:") != std::string::npos) return {InputKind::simai_workload};  // a SimAI header, its policy misspelt
    if (std::isupper(static_cast<unsigned char>(first[0]))) return {InputKind::hpcc_config};
    if (first[0] == '{') return {InputKind::scenario};
    if (first[0] == '<') return fabric_input("graphml");
    if (first.rfind("graph", 0) == 0 || first.rfind("strict", 0) == 0 || first.rfind("digraph", 0) == 0) return fabric_input("dot");
    const size_t fields = count_tokens(first);
    if (std::isdigit(static_cast<unsigned char>(first[0]))) return fields == 1 ? Input{InputKind::hpcc_flows} : fabric_input("hpcc");
    throw InputError(file.string() + ":1", "cannot tell the format of this file; name it with --from (" + input_names() + ")");
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

Fabric load_fabric(const std::filesystem::path& file, const Input& in, const PresetLibrary& presets, Diagnostics& warnings) {
    if (in.kind == InputKind::fabric && in.fabric && in.fabric->read) return in.fabric->read(file);
    if (in.kind == InputKind::scenario) {
        LoadedScenario s = load_scenario_file(file, presets, LoadOptions{false});
        warnings.append(s.warnings);
        return build_fabric(s.base.topology);
    }
    throw InputError(file.string(), "a " + input_name(in) + " file holds no fabric");
}

namespace {

// The name a path resolves to (links, . and ..), for comparing two paths that may not exist yet.
std::string resolved_name(const std::filesystem::path& f) {
    std::error_code ec;
    std::filesystem::path same = std::filesystem::weakly_canonical(f, ec);
    if (ec) same = std::filesystem::absolute(f).lexically_normal();
    return same.string();
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ec;
    if (std::filesystem::equivalent(a, b, ec) && !ec) return true;
    return resolved_name(a) == resolved_name(b);
}

// The temporary file an output is written through before its rename: short and fixed in length, so that
// any name the file system takes can be written.
std::filesystem::path temporary_beside(const std::filesystem::path& file) {
    return file.parent_path() / (".orrery-" + std::to_string(::getpid()) + ".tmp");
}

// The folder an output goes into exists, is a folder, may be written, and takes a name this long.
void refuse_unwritable_place(const std::filesystem::path& file) {
    const std::filesystem::path folder = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(folder, ec);
    if (st.type() == std::filesystem::file_type::not_found)
        throw InputError(file.string(), "cannot be written: the folder " + folder.string() + " does not exist (create it first)");
    if (st.type() != std::filesystem::file_type::directory)
        throw InputError(file.string(), "cannot be written: " + folder.string() + " is not a folder");
    if (::access(folder.c_str(), W_OK) != 0)
        throw InputError(file.string(), "cannot be written: the folder " + folder.string() + " is not writable by this user");
    const long name_max = ::pathconf(folder.c_str(), _PC_NAME_MAX);
    const size_t length = file.filename().string().size();
    if (name_max > 0 && length > size_t(name_max))
        throw InputError(file.string(), "cannot be written: its name is " + std::to_string(length) + " bytes long, and the file system of " +
                                            folder.string() + " takes at most " + std::to_string(name_max) + " bytes a name");
}

}  // namespace

void refuse_existing(const std::filesystem::path& file, bool force) {
    refuse_unwritable_place(file);
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

void refuse_inputs_as_outputs(const std::vector<std::filesystem::path>& files, const std::vector<std::filesystem::path>& inputs) {
    for (const std::filesystem::path& f : files)
        for (const std::filesystem::path& in : inputs)
            if (same_file(f, in))
                throw InputError(f.string(), "is also an input of this command (" + in.string() +
                                                 "): writing it would destroy what is read; give the output another name (--force does not change this)");
}

void refuse_outputs(const std::vector<std::filesystem::path>& files, bool force, const std::vector<std::filesystem::path>& inputs) {
    refuse_inputs_as_outputs(files, inputs);
    std::map<std::string, std::filesystem::path> seen;
    for (const std::filesystem::path& f : files) {
        if (auto [it, fresh] = seen.emplace(resolved_name(f), f); !fresh)
            throw InputError(f.string(), "is named twice among this command's outputs (and the results store): two outputs cannot share a file; give them different names");
        refuse_existing(f, force);
    }
}

void refuse_store_path(const std::filesystem::path& store, const std::vector<std::filesystem::path>& outputs,
                       const std::vector<std::filesystem::path>& inputs) {
    std::vector<std::filesystem::path> all = outputs;
    all.push_back(store);
    refuse_outputs(all, true, inputs);  // an existing store is appended to: only its kind and its name are checked
}

std::vector<std::filesystem::path> scenario_inputs(const std::filesystem::path& scenario_file, const LoadedScenario& loaded) {
    std::vector<std::filesystem::path> files{scenario_file};
    for (const Scenario& s : loaded.scenarios) {
        if (const ImportedTopology* t = std::get_if<ImportedTopology>(&s.topology.source)) files.push_back(t->path);
        if (!s.workload.flow_file.empty()) files.push_back(s.workload.flow_file);
        if (s.skipping.enabled && !s.skipping.memo_file.empty()) files.push_back(s.skipping.memo_file);
        for (const LlmWorkload* w : s.workload.llm_workloads()) {
            if (w->trace && w->trace->format == "simai") files.push_back(w->trace->path);
            for (const std::filesystem::path& f : w->collectives.custom_files) files.push_back(f);
            if (!w->compute.operator_table.empty()) files.push_back(w->compute.operator_table);
        }
    }
    return files;
}

std::filesystem::path run_store_path(const LoadedScenario& loaded, const std::string& out_option) {
    if (!out_option.empty()) return out_option;
    const std::filesystem::path store = loaded.base.output.store;
    return store.is_absolute() ? store : loaded.base.base_dir / store;
}

std::filesystem::path hpcc_output_file(const LoadedScenario& loaded, const std::string& file, size_t e) {
    std::filesystem::path p = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : loaded.base.base_dir / file;
    if (loaded.experiments.size() > 1) p = p.parent_path() / (p.stem().string() + "_" + loaded.experiments[e].id + p.extension().string());
    return p;
}

std::vector<std::filesystem::path> hpcc_output_files(const LoadedScenario& loaded) {
    const OutputSpec& out = loaded.base.output;
    std::vector<std::filesystem::path> files;
    for (size_t e = 0; e < loaded.experiments.size(); ++e)
        for (const std::string& file : {out.hpcc_fct_file, out.hpcc_pfc_file, out.hpcc_qlen_file})
            if (!file.empty()) files.push_back(hpcc_output_file(loaded, file, e));
    return files;
}

void write_output(const std::filesystem::path& file, const std::string& text, bool force) {
    refuse_existing(file, force);
    std::error_code ec;
    const std::filesystem::path tmp = temporary_beside(file);
    {
        std::ofstream out(tmp, std::ios::binary);
        if (!out) throw InputError(file.string(), "cannot write here (does the folder exist and is it writable?)");
        out << text;
        if (!out.flush()) {
            out.close();
            std::filesystem::remove(tmp, ec);
            throw InputError(file.string(), "writing failed (disk full?)");
        }
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

std::string fabric_text(const Fabric& f, const std::filesystem::path& out, const std::string& to) {
    const FabricFormat* format = !to.empty() ? fabric_format_named(to) : out.extension().empty() ? fabric_format_named("hpcc") : fabric_format_of_extension(out);
    if (!format || !format->write)
        throw InputError(out.string(), (to.empty() ? "cannot tell the output format from the name" : "the format \"" + to + "\" is not written") +
                                           std::string("; use --to ") + fabric_format_list(false));
    return format->write(f, out);
}

}  // namespace orrery::cli
