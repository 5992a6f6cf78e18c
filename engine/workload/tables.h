#pragma once
// The calibration tables of data/ the workload needs: GPU specs (gpus.json), roofline efficiencies
// (compute.json), intra-server α-β fits (intra_server.json), and an optional measured operator table.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/units.h"

namespace orrery {

class PresetLibrary;

struct GpuSpec {
    std::string name;
    double peak_flops = 0;        // dense BF16, FLOP/s
    double hbm_bytes = 0;         // capacity
    double hbm_bytes_per_s = 0;
    double nvlink_bytes_per_s = 0;
};

enum class CollectiveKind : uint8_t { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
const char* collective_kind_name(CollectiveKind k);

struct AlphaBeta {
    double alpha_s = 0;           // seconds
    double bus_bytes_per_s = 0;
};

struct WorkloadTables {
    std::map<std::string, GpuSpec> gpus;
    std::map<std::string, double> efficiency;                            // operator class → fraction
    std::map<std::string, std::map<int, std::map<std::string, AlphaBeta>>> intra;  // gpu → group size → collective
    std::map<std::string, double> measured_us;                           // "operator|shape|gpu" → µs
    // The α-β fit for `kind` among `group` GPUs of `gpu`: the largest tabulated group size ≤ group
    // (a bigger group than any fit uses the biggest). Throws InputError naming the table when absent.
    AlphaBeta intra_fit(const std::string& gpu, CollectiveKind kind, int group) const;
};

// A calibration table of data/ (found through the preset library's data roots) whose "format" is `format`;
// errors name the file.
nlohmann::json read_data_table(const PresetLibrary& presets, const std::string& name, const std::string& format);

// Reads data/gpus.json, compute.json and intra_server.json through the preset library's data roots.
// Errors name the file and the JSON path.
WorkloadTables load_workload_tables(const PresetLibrary& presets);

// Adds a measured operator table (CSV with header "operator,shape,gpu,time_us"); errors name file:line.
void load_operator_table(WorkloadTables& t, const std::filesystem::path& csv);

// NCCL's bus-bandwidth factor: the bytes each GPU sends (and receives) per byte of buffer, as nccl-tests
// defines busbw — all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all (n−1)/n; send/recv, broadcast 1.
double bus_factor(CollectiveKind kind, int group);

// The time of one intra-server collective of `bytes` (per rank) among `group` GPUs, in ps.
int64_t intra_collective_ps(const WorkloadTables& t, const std::string& gpu, CollectiveKind kind, int group, int64_t bytes);
// α + bytes × bus factor ÷ bandwidth, ps, of a fit (0 for a group of one or no bytes).
int64_t alpha_beta_ps(const AlphaBeta& ab, CollectiveKind kind, int group, int64_t bytes);

}  // namespace orrery
