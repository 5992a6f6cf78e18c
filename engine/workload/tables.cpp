#include "workload/tables.h"

#include "scenario/load.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "scenario/json_reader.h"
#include "scenario/presets.h"

namespace orrery {

const char* collective_kind_name(CollectiveKind k) {
    switch (k) {
        case CollectiveKind::all_reduce: return "all_reduce";
        case CollectiveKind::all_gather: return "all_gather";
        case CollectiveKind::reduce_scatter: return "reduce_scatter";
        case CollectiveKind::all_to_all: return "all_to_all";
        case CollectiveKind::broadcast: return "broadcast";
        case CollectiveKind::send_recv: return "send_recv";
    }
    return "?";
}

nlohmann::json read_data_table(const PresetLibrary& presets, const std::string& name, const std::string& format) {
    const auto file = presets.data_file(name);
    if (!file) throw InputError("data/" + name, "calibration table not found (searched beside every presets folder)");
    Diagnostics parse_errors;
    const nlohmann::json doc = parse_json_text(read_text_file(*file), file->string(), parse_errors);
    if (parse_errors.has_errors()) throw InputError(parse_errors);
    if (!doc.is_object() || string_field(doc, "format") != format)
        throw InputError(file->string(), "expected a table with \"format\": \"" + format + "\"");
    return doc;
}

namespace {

// The value at `key`, or null when absent (positive() then names the field).
nlohmann::json field(const nlohmann::json& object, const char* key) { return object.contains(key) ? object[key] : nlohmann::json(); }

double positive(const nlohmann::json& v, const std::string& where) {
    if (!v.is_number() || !(v.get<double>() > 0)) throw InputError(where, "expected a positive number, found " + v.dump());
    return v.get<double>();
}

}  // namespace

AlphaBeta WorkloadTables::intra_fit(const std::string& gpu, CollectiveKind kind, int group) const {
    auto g = intra.find(gpu);
    if (g == intra.end() || g->second.empty()) throw InputError("data/intra_server.json", "no intra-server fits for GPU \"" + gpu + "\"");
    auto size = g->second.upper_bound(group);
    if (size != g->second.begin()) --size;
    auto fit = size->second.find(collective_kind_name(kind));
    if (fit == size->second.end())
        throw InputError("data/intra_server.json", "no fit for " + std::string(collective_kind_name(kind)) + " on " + gpu);
    return fit->second;
}

int64_t alpha_beta_ps(const AlphaBeta& ab, CollectiveKind kind, int group, int64_t bytes) {
    if (group <= 1 || bytes <= 0) return 0;
    return int64_t(std::llround((ab.alpha_s + double(bytes) * bus_factor(kind, group) / ab.bus_bytes_per_s) * 1e12));
}

int64_t intra_collective_ps(const WorkloadTables& t, const std::string& gpu, CollectiveKind kind, int group, int64_t bytes) {
    return group <= 1 || bytes <= 0 ? 0 : alpha_beta_ps(t.intra_fit(gpu, kind, group), kind, group, bytes);
}

double bus_factor(CollectiveKind kind, int group) {
    const double n = group;
    if (group <= 1) return 0;
    if (kind == CollectiveKind::all_reduce) return 2 * (n - 1) / n;
    if (kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_to_all) return (n - 1) / n;
    return 1;
}

WorkloadTables load_workload_tables(const PresetLibrary& presets) {
    WorkloadTables t;
    const nlohmann::json gpus = read_data_table(presets, "gpus.json", "orrery-gpu-specs");
    const nlohmann::json gpu_list = gpus.value("gpus", nlohmann::json::object());
    for (auto item = gpu_list.begin(); item != gpu_list.end(); ++item) {
        const std::string name = item.key();
        const nlohmann::json& g = item.value();
        const std::string w = "data/gpus.json: gpus." + name;
        GpuSpec s;
        s.name = name;
        s.peak_flops = positive(field(g, "dense_bf16_tflops"), w + ".dense_bf16_tflops") * 1e12;
        s.hbm_bytes = positive(field(g, "hbm_gb"), w + ".hbm_gb") * 1e9;
        s.hbm_bytes_per_s = positive(field(g, "hbm_tb_per_s"), w + ".hbm_tb_per_s") * 1e12;
        s.nvlink_bytes_per_s = positive(field(g, "nvlink_gb_per_s"), w + ".nvlink_gb_per_s") * 1e9;
        t.gpus[name] = s;
    }
    const nlohmann::json eff = read_data_table(presets, "compute.json", "orrery-compute-efficiency");
    const nlohmann::json eff_list = eff.value("efficiency", nlohmann::json::object());
    for (auto item = eff_list.begin(); item != eff_list.end(); ++item) {
        const std::string op = item.key();
        const nlohmann::json& v = item.value();
        const double e = positive(v, "data/compute.json: efficiency." + op);
        if (e > 1) throw InputError("data/compute.json: efficiency." + op, "an efficiency is a fraction of peak (0–1], found " + v.dump());
        t.efficiency[op] = e;
    }
    const nlohmann::json intra = read_data_table(presets, "intra_server.json", "orrery-intra-server");
    const nlohmann::json intra_list = intra.value("gpus", nlohmann::json::object());
    for (auto gi = intra_list.begin(); gi != intra_list.end(); ++gi)
        for (auto si = gi.value().begin(); si != gi.value().end(); ++si) {
            const std::string gpu = gi.key(), size = si.key();
            const nlohmann::json& kinds = si.value();
            const int n = std::atoi(size.c_str());
            if (n < 2) throw InputError("data/intra_server.json: gpus." + gpu + "." + size, "expected a group size of at least 2");
            for (auto ki = kinds.begin(); ki != kinds.end(); ++ki) {
                const std::string kind = ki.key();
                const nlohmann::json& fit = ki.value();
                const std::string w = "data/intra_server.json: gpus." + gpu + "." + size + "." + kind;
                AlphaBeta ab;
                ab.alpha_s = positive(field(fit, "alpha_us"), w + ".alpha_us") * 1e-6;
                ab.bus_bytes_per_s = positive(field(fit, "bus_gbyte_per_s"), w + ".bus_gbyte_per_s") * 1e9;
                t.intra[gpu][n][kind] = ab;
            }
        }
    return t;
}

void load_operator_table(WorkloadTables& t, const std::filesystem::path& csv) {
    std::ifstream in(csv);
    if (!in) throw InputError(csv.string(), "cannot open the operator table");
    std::string line;
    int number = 0;
    bool header = true;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        const std::string where = csv.string() + ":" + std::to_string(number);
        if (header) {
            header = false;
            if (cells.size() != 4 || cells[0] != "operator" || cells[1] != "shape" || cells[2] != "gpu" || cells[3] != "time_us")
                throw InputError(where, "expected the header \"operator,shape,gpu,time_us\"");
            continue;
        }
        if (cells.size() != 4) throw InputError(where, "expected 4 cells (operator,shape,gpu,time_us), found " + std::to_string(cells.size()));
        char* end = nullptr;
        const double us = std::strtod(cells[3].c_str(), &end);
        if (end == cells[3].c_str() || *end != '\0' || !std::isfinite(us) || us < 0)
            throw InputError(where, "time_us: expected a non-negative number of microseconds, found \"" + cells[3] + "\"");
        t.measured_us[cells[0] + "|" + cells[1] + "|" + cells[2]] = us;
    }
    if (header) throw InputError(csv.string(), "the operator table is empty");
}

}  // namespace orrery
