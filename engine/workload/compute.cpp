#include "workload/compute.h"

#include <algorithm>
#include <cmath>

#include "common/diagnostics.h"

namespace orrery {

const char* phase_name(Phase p) {
    switch (p) {
        case Phase::forward: return "forward";
        case Phase::backward_input: return "backward-input";
        case Phase::backward_weight: return "backward-weight";
        case Phase::optimizer: return "optimizer";
    }
    return "?";
}

namespace {

int64_t kv_heads(const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }

// A GEMM of [rows × inner] · [inner × cols] in BF16, in one phase: forward is the GEMM itself; the input
// gradient and the weight gradient are one GEMM each of the same FLOPs (dgrad, wgrad).
Operator gemm(const std::string& name, double rows, double inner, double cols, Phase phase) {
    Operator o{name, "gemm", 2 * rows * inner * cols, 2 * (rows * inner + inner * cols + rows * cols), ""};
    if (phase == Phase::optimizer) o.flops = o.bytes = 0;
    return o;
}

std::string shape_key(const ModelSpec& m, const ParallelSpec& p, Phase phase) {
    return std::string("b") + std::to_string(p.micro_batch_size) + "s" + std::to_string(m.seq) + "h" + std::to_string(m.hidden) + "tp" +
           std::to_string(p.tp) + (p.sequence_parallel ? "sp" : "") + ":" + phase_name(phase);
}

}  // namespace

bool is_moe_layer(const ModelSpec& m, int layer) {
    if (!m.moe() || layer < m.dense_layers) return false;
    return (layer - m.dense_layers) % std::max(1, m.moe_every) == 0;
}

int64_t attention_params(const ModelSpec& m) {
    const int64_t head_dim = m.hidden / m.heads;
    return m.hidden * (m.hidden + 2 * kv_heads(m) * head_dim) + m.hidden * m.hidden + 4 * m.hidden;  // QKV, proj, norms+biases
}

int64_t mlp_params(const ModelSpec& m, bool moe_layer, bool dense_leading) {
    const int64_t mats = m.gated_mlp ? 3 : 2;
    const int64_t ffn = dense_leading && m.dense_ffn > 0 ? m.dense_ffn : m.ffn;
    if (!moe_layer) return mats * m.hidden * ffn;
    return int64_t(m.experts + m.shared_experts) * mats * m.hidden * m.ffn + m.hidden * m.experts;  // experts + router
}

std::vector<Operator> attention_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase) {
    const double t = p.tp, T = double(p.micro_batch_size) * double(m.seq), h = double(m.hidden);
    const double head_dim = h / m.heads, qkv = h + 2 * double(kv_heads(m)) * head_dim;
    std::vector<Operator> ops;
    if (phase == Phase::optimizer) return ops;
    ops.push_back(gemm("qkv", T, h, qkv / t, phase));
    ops.push_back(gemm("proj", T, h / t, h, phase));
    if (phase != Phase::backward_weight) {
        // Flash attention: 4·T·s·h/t FLOPs forward (QKᵀ and AV, causal mask not exploited), twice that backward.
        const double fl = 4 * T * double(m.seq) * h / t * (phase == Phase::forward ? 1 : 2);
        ops.push_back({"attention", "attention", fl, 2 * 4 * T * h / t, ""});
        // LayerNorm, dropout, residual: ~12 reads and writes of the hidden state (sharded by SP).
        ops.push_back({"elementwise", "elementwise", 0, 12 * 2 * T * h / (p.sequence_parallel ? t : 1) * (phase == Phase::forward ? 1 : 2), ""});
    }
    for (Operator& o : ops) o.shape = shape_key(m, p, phase);
    return ops;
}

std::vector<Operator> mlp_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase, bool moe_layer, bool dense_leading) {
    const double t = p.tp, T = double(p.micro_batch_size) * double(m.seq), h = double(m.hidden);
    std::vector<Operator> ops;
    if (phase == Phase::optimizer) return ops;
    const double up = m.gated_mlp ? 2 : 1;
    if (!moe_layer) {
        const double f = double(dense_leading && m.dense_ffn > 0 ? m.dense_ffn : m.ffn);
        ops.push_back(gemm("mlp_up", T, h, up * f / t, phase));
        ops.push_back(gemm("mlp_down", T, f / t, h, phase));
    } else {
        // Balanced routing: every EP rank processes T·top_k token-expert pairs (shared experts: T each).
        const double pairs = T * (m.top_k + m.shared_experts), f = double(m.ffn);
        ops.push_back(gemm("router", T, h, double(m.experts), phase));
        ops.push_back(gemm("experts_up", pairs, h, up * f / t, phase));
        ops.push_back(gemm("experts_down", pairs, f / t, h, phase));
    }
    if (phase != Phase::backward_weight)
        ops.push_back({"elementwise", "elementwise", 0, 8 * 2 * T * h / (p.sequence_parallel ? t : 1) * (phase == Phase::forward ? 1 : 2), ""});
    for (Operator& o : ops) o.shape = shape_key(m, p, phase) + (moe_layer ? ":moe" : "");
    return ops;
}

std::vector<Operator> logits_ops(const ModelSpec& m, const ParallelSpec& p, Phase phase) {
    const double T = double(p.micro_batch_size) * double(m.seq);
    std::vector<Operator> ops;
    if (phase == Phase::optimizer) return ops;
    ops.push_back(gemm("logits", T, double(m.hidden), double(m.vocab) / p.tp, phase));
    for (Operator& o : ops) o.shape = shape_key(m, p, phase);
    return ops;
}

Operator optimizer_op(int64_t params) {
    // Reads grad (2 B), fp32 master, m, v (12 B); writes master, m, v, bf16 weight (14 B); ~10 FLOPs per parameter.
    return {"adam", "optimizer", 10.0 * double(params), 28.0 * double(params), std::to_string(params)};
}

int64_t operators_ps(const std::vector<Operator>& ops, const WorkloadTables& t, const GpuSpec& gpu,
                     const std::map<std::string, double>& overrides) {
    auto efficiency = [&](const std::string& cls) {
        if (auto it = overrides.find(cls); it != overrides.end()) return it->second;
        if (auto it = t.efficiency.find(cls); it != t.efficiency.end()) return it->second;
        throw InputError("data/compute.json", "no efficiency for operator class \"" + cls + "\"");
    };
    double seconds = 0;
    for (const Operator& o : ops) {
        if (auto it = t.measured_us.find(o.name + "|" + o.shape + "|" + gpu.name); it != t.measured_us.end()) {
            seconds += it->second * 1e-6;
            continue;
        }
        // Memory-bound classes reach their efficiency on bandwidth; GEMMs and attention on FLOPs, with
        // the general "memory" efficiency for their (rarely binding) HBM traffic.
        const bool memory_bound = o.op_class == "elementwise" || o.op_class == "optimizer";
        const double compute = o.flops > 0 ? o.flops / (gpu.peak_flops * efficiency(memory_bound ? "gemm" : o.op_class)) : 0;
        const double memory = o.bytes > 0 ? o.bytes / (gpu.hbm_bytes_per_s * efficiency(memory_bound ? o.op_class : "memory")) : 0;
        seconds += std::max(compute, memory);
    }
    return int64_t(std::llround(seconds * 1e12));
}

}  // namespace orrery
