#include "workload/memory.h"

#include <algorithm>

#include "workload/compute.h"

namespace orrery {

const RankMemory& MemoryReport::worst() const {
    return *std::max_element(per_stage.begin(), per_stage.end(), [](const RankMemory& a, const RankMemory& b) { return a.total() < b.total(); });
}

std::vector<int> stage_layers(const ModelSpec& m, const ParallelSpec& p, int stage) {
    // Chunk c of stage s holds layers [(c·p + s)·L/(p·v), …): Megatron's interleaved assignment (v = 1: contiguous).
    const int chunks = p.pp * p.virtual_stages, per_chunk = m.layers / chunks;
    std::vector<int> layers;
    for (int c = 0; c < p.virtual_stages; ++c) {
        const int chunk = c * p.pp + stage;
        for (int l = 0; l < per_chunk; ++l) layers.push_back(chunk * per_chunk + l);
    }
    return layers;
}

int in_flight_micro_batches(const ParallelSpec& p, int stage) {
    if (p.schedule == PipelineSchedule::one_f_one_b || p.virtual_stages == 1) return std::min(p.pp - stage, p.micro_batches);
    // Interleaved: warm-up forwards of chunks + the one in steady state, in units of whole-stage micro-batches.
    const int warmup = std::min((p.pp - stage - 1) * 2 + (p.virtual_stages - 1) * p.pp, p.micro_batches * p.virtual_stages);
    return (warmup + 1 + p.virtual_stages - 1) / p.virtual_stages;
}

MemoryReport memory_per_rank(const LlmWorkload& w, const GpuSpec& gpu) {
    const ModelSpec& m = w.model;
    const ParallelSpec& p = w.parallel;
    MemoryReport report;
    report.available = gpu.hbm_bytes;
    const double s = double(m.seq), b = p.micro_batch_size, h = double(m.hidden), t = p.tp;
    for (int stage = 0; stage < p.pp; ++stage) {
        RankMemory r;
        r.stage = stage;
        r.rank = uint32_t(stage) * uint32_t(p.tp * p.dp);
        double dense = 0, expert = 0;
        for (int layer : stage_layers(m, p, stage)) {
            const bool moe = is_moe_layer(m, layer);
            dense += double(attention_params(m));
            if (moe) expert += double(mlp_params(m, true, false));
            else dense += double(mlp_params(m, false, layer < m.dense_layers));
        }
        if (stage == 0) dense += double(m.vocab * m.hidden) + double(m.seq * m.hidden);  // word and position embeddings
        // The output layer: its own matrix when untied; a tied copy on the last stage when PP splits it from the embeddings.
        if (stage == p.pp - 1 && (p.pp > 1 || !m.tied_embeddings)) dense += double(m.vocab * m.hidden);
        const double local = dense / t + expert / (t * p.ep);
        r.params = int64_t(local);
        const double dp = p.dp;
        r.weights = 2 * local / (p.zero_stage >= 3 ? dp : 1);
        r.gradients = 2 * local / (p.zero_stage >= 2 ? dp : 1);
        r.optimizer = 12 * local / (p.zero_stage >= 1 ? dp : 1);
        const double per_layer = p.recompute ? 2 * s * b * h / (p.sequence_parallel ? t : 1)
                                 : p.sequence_parallel ? s * b * h * 34 / t
                                                       : s * b * h * (10 + 24 / t);
        const double layers_per_chunk = double(m.layers) / (p.pp * p.virtual_stages);
        double act = per_layer * layers_per_chunk * p.virtual_stages * in_flight_micro_batches(p, stage);
        if (p.recompute) act += p.sequence_parallel ? s * b * h * 34 / t : s * b * h * (10 + 24 / t);  // the one layer being recomputed
        if (stage == p.pp - 1) act += 4 * s * b * double(m.vocab) / t;
        r.activations = act;
        r.overhead = double(w.framework_overhead.count);
        report.per_stage.push_back(r);
    }
    return report;
}

}  // namespace orrery
