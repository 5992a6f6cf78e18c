#pragma once
// Compute time of the tasks of one rank: operator FLOPs and bytes of a transformer layer's TP shard on
// one micro-batch, timed by roofline — max(FLOPs / (peak · efficiency), bytes / (HBM bandwidth · efficiency))
// — or by a measured operator table when it has the operator's (name, shape, GPU).
#include <cstdint>
#include <string>
#include <vector>

#include "workload/spec.h"
#include "workload/tables.h"

namespace orrery {

enum class Phase : uint8_t { forward, backward_input, backward_weight, optimizer };
const char* phase_name(Phase p);

struct Operator {
    std::string name;             // "qkv", "attention", "proj", "mlp_up", "mlp_down", "elementwise", "router", "experts", "logits", "adam"
    std::string op_class;         // efficiency class: gemm, attention, elementwise, optimizer
    double flops = 0;
    double bytes = 0;             // HBM traffic
    std::string shape;            // key of the measured table
};

// The operators of one phase of a layer's attention block / MLP block / the logits head, per micro-batch,
// for one rank (TP shard; MoE experts of one EP rank).
std::vector<Operator> attention_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase);
std::vector<Operator> mlp_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase, bool moe_layer, bool dense_leading);
std::vector<Operator> logits_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase);
// Adam over `params` local parameters (fp32 master, moments; bf16 grads and weights).
Operator optimizer_op(int64_t params);

// Time of operators in ps: measured entries where present, roofline otherwise.
int64_t operators_ps(const std::vector<Operator>& ops, const WorkloadTables& t, const GpuSpec& gpu,
                     const std::map<std::string, double>& efficiency_overrides);

// Parameters of one layer (whole, before TP/EP split): attention, and MLP (all experts of a MoE layer).
int64_t attention_params(const ModelSpec& m);
int64_t mlp_params(const ModelSpec& m, bool moe_layer, bool dense_leading);
bool is_moe_layer(const ModelSpec& m, int layer);  // layer index 0..layers-1

}  // namespace orrery
