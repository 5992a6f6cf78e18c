#include "workload/read_llm.h"

#include <functional>

#include "common/input_file.h"

namespace orrery {

const char* collective_algorithm_name(CollectiveAlgorithm a) {
    switch (a) {
        case CollectiveAlgorithm::ring: return "ring";
        case CollectiveAlgorithm::tree: return "tree";
        case CollectiveAlgorithm::halving_doubling: return "halving-doubling";
        case CollectiveAlgorithm::direct: return "direct";
        case CollectiveAlgorithm::hierarchical: return "hierarchical";
    }
    return "?";
}

namespace {

ModelSpec read_model(JsonReader& m) {
    ModelSpec s;
    s.name = m.string("name", Need::optional).value_or("custom");
    s.layers = int(m.integer("layers", Need::required, 1, 100000).value_or(1));
    s.hidden = m.integer("hidden", Need::required, 1, int64_t(1) << 24).value_or(1);
    s.heads = int(m.integer("heads", Need::required, 1, 1 << 16).value_or(1));
    s.kv_heads = int(m.integer("kv_heads", Need::optional, 1, 1 << 16).value_or(0));
    s.ffn = m.integer("ffn", Need::required, 1, int64_t(1) << 26).value_or(1);
    s.seq = m.integer("seq", Need::optional, 1, int64_t(1) << 24).value_or(s.seq);
    s.vocab = m.integer("vocab", Need::optional, 1, int64_t(1) << 24).value_or(s.vocab);
    s.gated_mlp = m.boolean("gated_mlp", Need::optional).value_or(false);
    s.tied_embeddings = m.boolean("tied_embeddings", Need::optional).value_or(true);
    s.experts = int(m.integer("experts", Need::optional, 0, 1 << 16).value_or(0));
    s.top_k = int(m.integer("top_k", Need::optional, 0, 1 << 16).value_or(s.experts > 0 ? 1 : 0));
    s.shared_experts = int(m.integer("shared_experts", Need::optional, 0, 1 << 10).value_or(0));
    s.moe_every = int(m.integer("moe_every", Need::optional, 1, 1 << 10).value_or(1));
    s.dense_layers = int(m.integer("dense_layers", Need::optional, 0, 100000).value_or(0));
    s.dense_ffn = m.integer("dense_ffn", Need::optional, 1, int64_t(1) << 26).value_or(0);
    m.finish();
    return s;
}

}  // namespace

namespace {

using Resolve = std::function<std::filesystem::path(const std::string&)>;

// workload.import: a SimAI/AICB file or Chakra traces, and the parallelism a SimAI file may be given.
TraceImport read_trace_import(JsonReader& r, JsonReader& imp, const Resolve& resolve) {
    TraceImport t;
    t.format = imp.choice("format", Need::required, {"simai", "chakra"}).value_or("simai");
    if (auto path = imp.string("path", Need::required)) {
        t.path = resolve(*path);
        // Chakra: the path is the prefix ASTRA-sim is given; rank 0's file must be there.
        const std::filesystem::path first = t.format == "chakra" ? std::filesystem::path(t.path.string() + ".0.et") : t.path;
        const std::filesystem::path first_gz = first.string() + ".gz";
        if (const std::string problem = input_file_problem(first); !problem.empty() && !(t.format == "chakra" && input_file_problem(first_gz).empty()))
            imp.error("path", problem);
    }
    imp.finish();
    for (const char* k : {"model", "parallel"}) {
        if (!r.has(k) || (t.format == "simai" && std::string(k) == "parallel")) continue;
        r.raw(k);
        r.error(k, "an imported workload brings its own model and parallelism; remove \"" + std::string(k) + "\"");
    }
    // A SimAI file's parallelism may be stated (or completed, for a legacy header) by workload.parallel.
    if (t.format == "simai" && r.has("parallel"))
        if (auto p = r.object("parallel", Need::optional)) {
            for (const char* k : {"tp", "pp", "dp", "ep", "micro_batches", "virtual_stages"})
                if (auto v = p->integer(k, Need::optional, 1, 1 << 20)) t.parallel[k] = int(*v);
            p->finish();
        }
    return t;
}

void read_parallel(JsonReader& p, ParallelSpec& s) {
    s.tp = int(p.integer("tp", Need::optional, 1, 1 << 16).value_or(1));
    s.pp = int(p.integer("pp", Need::optional, 1, 1 << 16).value_or(1));
    s.dp = int(p.integer("dp", Need::optional, 1, 1 << 20).value_or(1));
    s.ep = int(p.integer("ep", Need::optional, 1, 1 << 16).value_or(1));
    s.sequence_parallel = p.boolean("sp", Need::optional).value_or(false);
    if (auto sch = p.choice("schedule", Need::optional, {"1f1b", "interleaved"}))
        s.schedule = *sch == "interleaved" ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    s.virtual_stages = int(p.integer("virtual_stages", Need::optional, 1, 1 << 10).value_or(s.schedule == PipelineSchedule::interleaved ? 2 : 1));
    s.micro_batches = int(p.integer("micro_batches", Need::optional, 1, 1 << 20).value_or(1));
    s.micro_batch_size = int(p.integer("micro_batch_size", Need::optional, 1, 1 << 16).value_or(1));
    s.zero_stage = int(p.integer("zero", Need::optional, 0, 3).value_or(0));
    s.recompute = p.boolean("recompute", Need::optional).value_or(false);
    if (auto b = p.size("bucket", Need::optional)) s.bucket = *b;
    s.order = p.string("order", Need::optional).value_or(s.order);
    p.finish();
}

void read_collectives(JsonReader& c, LlmWorkload& w, const Resolve& resolve) {
    CollectiveSpec& s = w.collectives;
    if (auto a = c.choice("algorithm", Need::optional, {"ring", "tree", "halving-doubling", "direct", "hierarchical"})) {
        for (CollectiveAlgorithm x : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::halving_doubling, CollectiveAlgorithm::direct,
                                      CollectiveAlgorithm::hierarchical})
            if (*a == collective_algorithm_name(x)) s.algorithm = x;
    }
    s.channels = int(c.integer("channels", Need::optional, 1, 64).value_or(s.channels));
    if (auto ch = c.size("chunk", Need::optional)) {
        if (ch->count <= 0) c.error("chunk", "expected a positive size");
        else s.chunk = *ch;
    }
    s.pxn = c.boolean("pxn", Need::optional).value_or(false);
    if (auto m = c.choice("model", Need::optional, {"nccl", "busbw"})) s.model = *m == "busbw" ? CollectiveModel::busbw : CollectiveModel::nccl;
    if (auto b = c.object("busbw", Need::optional)) {
        if (s.model != CollectiveModel::busbw) c.error("busbw", "SimAI's bus-bandwidth parameters apply with \"model\": \"busbw\"");
        BusbwParams& q = s.busbw;
        const double gib = 8.0 * 1024 * 1024 * 1024;
        if (auto v = b->rate("nvlink", Need::optional)) q.nvlink_gib_per_s = double(v->count) / gib;
        if (auto v = b->rate("nic", Need::optional)) q.nic_gib_per_s = double(v->count) / gib;
        q.gpus_per_server = int(b->integer("gpus_per_server", Need::optional, 1, 1024).value_or(q.gpus_per_server));
        q.nics_per_server = int(b->integer("nics_per_server", Need::optional, 1, 1024).value_or(q.nics_per_server));
        if (q.nvlink_gib_per_s <= 0) b->error("nvlink", "expected a positive rate");
        if (q.nic_gib_per_s <= 0) b->error("nic", "expected a positive rate");
        if (auto o = b->object("overlap", Need::optional)) {
            q.dp_overlap = o->number("dp", Need::optional, 0, 1).value_or(q.dp_overlap);
            q.tp_overlap = o->number("tp", Need::optional, 0, 1).value_or(q.tp_overlap);
            q.ep_overlap = o->number("ep", Need::optional, 0, 1).value_or(q.ep_overlap);
            q.pp_overlap = o->number("pp", Need::optional, 1e-9, 1).value_or(q.pp_overlap);  // SimAI divides by it
            o->finish();
        }
        b->finish();
    }
    if (s.model == CollectiveModel::busbw && (!w.trace || w.trace->format != "simai"))
        c.error("model", "the busbw model is SimAI's estimate of a SimAI/AICB workload file: set \"import\": {\"format\": \"simai\", …}");
    s.priority = int(c.integer("priority", Need::optional, 1, 7).value_or(3));
    if (const nlohmann::json* list = c.array("custom", Need::optional, "an array of MSCCL .xml / MSCCL++ .json file names"))
        for (size_t i = 0; i < list->size(); ++i) {
            const std::string key = "custom[" + std::to_string(i) + "]";
            if (!(*list)[i].is_string()) {
                c.error(key, "expected a file name (MSCCL .xml or MSCCL++ .json)");
                continue;
            }
            const std::filesystem::path f = resolve((*list)[i].get<std::string>());
            if (const std::string problem = input_file_problem(f); !problem.empty()) c.error(key, problem);
            s.custom_files.push_back(f);
        }
    c.finish();
}

void read_compute(JsonReader& c, ComputeSpec& s, const std::filesystem::path& base_dir) {
    s.overlap_slowdown = c.number("overlap_slowdown", Need::optional, 0, 10).value_or(0);
    if (auto l = c.time("launch_overhead", Need::optional)) s.launch_overhead = *l;
    if (auto t = c.string("operator_table", Need::optional)) {
        s.operator_table = std::filesystem::path(*t).is_absolute() ? std::filesystem::path(*t) : base_dir / *t;
        if (const std::string problem = input_file_problem(s.operator_table); !problem.empty()) c.error("operator_table", problem);
    }
    if (auto e = c.object("efficiency", Need::optional)) {
        for (const char* cls : {"gemm", "attention", "elementwise", "optimizer", "memory"})
            if (auto v = e->number(cls, Need::optional, 1e-6, 1)) s.efficiency[cls] = *v;
        e->finish();
    }
    c.finish();
}

}  // namespace

LlmWorkload read_llm_workload(JsonReader& r, const std::filesystem::path& base_dir, std::optional<NetworkMode> mode) {
    LlmWorkload w;
    const Resolve resolve = [&](const std::string& f) { return std::filesystem::path(f).is_absolute() ? std::filesystem::path(f) : base_dir / f; };
    if (auto imp = r.object("import", Need::optional)) w.trace = read_trace_import(r, *imp, resolve);
    if (!w.trace)
        if (auto m = r.object("model", Need::required)) w.model = read_model(*m);
    w.gpu = r.string("gpu", Need::optional).value_or(w.gpu);
    w.iterations = int(r.integer("iterations", Need::optional, 1, 1000).value_or(1));
    if (mode) {
        w.network_mode = *mode;
        if (r.has("network_mode")) {
            r.raw("network_mode");
            r.error("network_mode", "every job of an experiment runs on its network mode: set workload.network_mode, not a job's");
        }
    } else if (auto m = r.choice("network_mode", Need::optional, {"packet", "flow", "analytic"})) {
        w.network_mode = *m == "analytic" ? NetworkMode::analytic : *m == "flow" ? NetworkMode::flow : NetworkMode::packet;
    }
    if (auto gr = r.choice("granularity", Need::optional, {"auto", "rank", "stage"})) {
        w.granularity = *gr == "stage" ? Granularity::stage : *gr == "rank" ? Granularity::rank : Granularity::automatic;
        if (w.granularity == Granularity::stage && w.trace && w.trace->format != "simai")
            r.error("granularity", "\"stage\" (the ranks of a pipeline stage in lockstep) is built for model-built jobs and SimAI/AICB imports; "
                                   "a Chakra trace runs per rank (its ranks' programs differ): remove it or use \"rank\"");
        else if (w.granularity == Granularity::stage && w.network_mode == NetworkMode::packet)
            r.error("granularity", "\"stage\" times a collective over all of a stage's groups as one fluid task; the packet level needs every "
                                   "flow: use \"network_mode\": \"flow\" or \"analytic\", or \"granularity\": \"rank\"");
    }
    if (auto f = r.size("framework_overhead", Need::optional)) w.framework_overhead = *f;
    if (auto p = w.trace ? std::nullopt : r.object("parallel", Need::required)) read_parallel(*p, w.parallel);
    if (auto c = r.object("collectives", Need::optional)) read_collectives(*c, w, resolve);
    if (w.collectives.model == CollectiveModel::busbw && r.has("network_mode"))
        r.error("network_mode", "the busbw model is an estimate of its own, on no network: remove \"network_mode\"");
    if (w.granularity == Granularity::stage && w.collectives.pxn)
        r.error("granularity", "\"stage\" does not model PXN yet (a lockstep ring would need each cross-rail move's NVLink leg): remove \"pxn\" "
                               "or use \"granularity\": \"rank\"");
    if (w.collectives.model == CollectiveModel::busbw && r.has("granularity"))
        r.error("granularity", "the busbw model builds no task graph: remove \"granularity\"");
    if (auto c = r.object("compute", Need::optional)) read_compute(*c, w.compute, base_dir);
    return w;
}

}  // namespace orrery
