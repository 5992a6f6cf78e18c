#pragma once
// The LLM training job a scenario describes: the model, how it is split over GPUs, the GPU, how
// collectives run and how compute is timed. Plain data, read from the scenario's "workload" section
// (kind "llm") by read_llm_workload; every size is in its unit, every default written next to its field.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "common/units.h"
#include "workload/custom_algorithm.h"

namespace orrery {

// A transformer, decoder-only, as Megatron-LM builds it (gated MLP when `gated_mlp`, as LLaMA).
struct ModelSpec {
    std::string name;
    int layers = 0;
    int64_t hidden = 0;
    int heads = 0;
    int kv_heads = 0;             // grouped-query attention; 0 = heads (multi-head)
    int64_t ffn = 0;              // MLP inner size (per expert for MoE)
    int64_t seq = 2048;           // sequence length, tokens
    int64_t vocab = 50257;
    bool gated_mlp = false;       // SwiGLU: three MLP matrices instead of two
    bool tied_embeddings = true;  // the output layer shares the word embeddings (GPT); LLaMA unties them
    int experts = 0;              // 0 = dense; MoE layers route each token to top_k of `experts`
    int top_k = 0;
    int shared_experts = 0;       // DeepSeek-style experts every token visits
    int moe_every = 1;            // every n-th layer is MoE (1 = all)
    int dense_layers = 0;         // leading dense layers before the first MoE layer (DeepSeek)
    int64_t dense_ffn = 0;        // their MLP size; 0 = ffn
    bool moe() const { return experts > 0; }
};

enum class PipelineSchedule { one_f_one_b, interleaved };
enum class CollectiveAlgorithm { ring, tree, halving_doubling, direct, hierarchical };
const char* collective_algorithm_name(CollectiveAlgorithm a);

struct ParallelSpec {
    int tp = 1, pp = 1, dp = 1, ep = 1;
    bool sequence_parallel = false;     // SP: TP's all-reduce becomes reduce-scatter + all-gather
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int virtual_stages = 1;             // interleaved: model chunks per pipeline rank
    int micro_batches = 1;              // per iteration (gradient accumulation steps × 1)
    int micro_batch_size = 1;           // sequences per micro-batch
    int zero_stage = 0;                 // 0: all-reduce; 1, 2: reduce-scatter grads + all-gather params; 3: also params per layer
    bool recompute = false;             // full activation recomputation
    Bytes bucket{25 * 1000 * 1000};     // DP gradient bucket (Megatron's default 25 MB… of elements × 2 B)
    std::string order = "tp-dp-pp";     // rank = tp + TP·(dp + DP·pp): TP fastest, inside a server
    int world() const { return tp * pp * dp; }
};

// SimAI_analytical's parameters (workload/busbw.h), defaults as SimAI documents them.
struct BusbwParams {
    double nvlink_gib_per_s = 360;    // SimAI -nv: NVLink bus bandwidth per GPU, GiB/s (SimAI's "GB/s" are 2^30 B/s)
    double nic_gib_per_s = 48.5;      // SimAI -nic: bus bandwidth per NIC, GiB/s
    int gpus_per_server = 8;          // SimAI -g_p_s
    int nics_per_server = 8;          // SimAI -n_p_s
    double dp_overlap = 0, tp_overlap = 0, ep_overlap = 0;  // share of those collectives hidden behind compute
    double pp_overlap = 1;            // share of pipeline transfers hidden (SimAI's default: all)
};

// nccl: collectives decomposed into transfers on the network of network_mode; busbw: SimAI's closed-form
// bus-bandwidth estimate, for SimAI/AICB workloads.
enum class CollectiveModel { nccl, busbw };

struct CollectiveSpec {
    CollectiveModel model = CollectiveModel::nccl;
    BusbwParams busbw;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;  // for inter-server groups
    int channels = 2;                   // NCCL channels: parallel flows per transfer
    Bytes chunk{64 << 20};              // a transfer larger than this is pipelined in chunks of it
    bool pxn = false;                   // PXN: a cross-rail transfer goes over NVLink to the peer's rail first
    int priority = 3;                   // switch queue of collective traffic
    std::vector<std::filesystem::path> custom_files;  // MSCCL XML / MSCCL++ JSON algorithms named by the scenario
    std::vector<std::shared_ptr<const CustomAlgorithm>> custom;  // the same, read (engine/imports/msccl.*)
};

struct ComputeSpec {
    std::map<std::string, double> efficiency;  // operator class → fraction of peak; missing = data/compute.json
    std::filesystem::path operator_table;      // measured times (CSV: operator, shape, gpu, time_us); empty = roofline
    double overlap_slowdown = 0.0;             // compute overlapping communication runs this much longer (0.1 = +10%)
    Picoseconds launch_overhead{0};            // per compute task
};

// analytic: α-β, every transfer alone on its path (the contention-free bound); flow: fluid flows, max-min
// fair over links and NVLink ports (workload/flow_mode.h); packet: the packet-level engine.
enum class NetworkMode { packet, analytic, flow };

// A workload recorded by another tool instead of a model: the task graph comes from the file
// (engine/imports/), the rest of LlmWorkload (GPU, collectives, network mode) still applies.
struct TraceImport {
    std::string format;                 // "simai" (AICB/SimAI workload .txt) or "chakra" (execution traces, one per rank)
    std::filesystem::path path;         // simai: the file; chakra: the prefix (PREFIX.0.et, PREFIX.1.et, …)
    // simai: workload.parallel's keys (tp, pp, dp, ep, micro_batches, virtual_stages) as given. They fill what a
    // legacy header lacks and must agree with what the header says (engine/imports/import_job.h).
    std::map<std::string, int> parallel;
};

// rank: a task graph op per rank and transfer; stage: one lane per pipeline stage, its ranks in lockstep,
// each collective one task over all the stage's groups (TaskGraph::lockstep; model-built jobs and SimAI
// files, flow and analytic networks); automatic: stage from kLockstepFrom ranks up, off the packet level.
enum class Granularity { automatic, rank, stage };
inline constexpr uint32_t kLockstepFrom = 1024;

struct LlmWorkload {
    std::optional<TraceImport> trace;   // set: model and parallel are not used
    ModelSpec model;
    ParallelSpec parallel;
    CollectiveSpec collectives;
    ComputeSpec compute;
    std::string gpu = "H100";
    NetworkMode network_mode = NetworkMode::packet;
    Granularity granularity = Granularity::automatic;
    int iterations = 1;
    int bytes_per_param = 2;            // BF16 weights and gradients
    Bytes framework_overhead{4LL << 30}; // CUDA context, NCCL buffers, fragmentation
    int64_t global_batch() const { return int64_t(parallel.micro_batches) * parallel.micro_batch_size * parallel.dp; }
};

}  // namespace orrery
