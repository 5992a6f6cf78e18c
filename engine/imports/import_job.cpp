#include "imports/import_job.h"

#include <algorithm>

#include "common/dag.h"
#include "imports/chakra_trace.h"
#include "imports/msccl.h"
#include "imports/simai_workload.h"
#include "scenario/load.h"
#include "workload/placement.h"

namespace orrery {
namespace {

// An imported trace can tie its ranks in a circle across files (a receive before the send it needs on
// both sides): that graph would never finish, so it is refused before it runs.
void check_acyclic(const TaskGraph& g, const std::string& source) {
    const size_t done = runnable_count(g.deps);
    if (done != g.size())
        throw InputError(source, std::to_string(g.size() - done) + " of " + std::to_string(g.size()) +
                                     " tasks wait on each other across ranks in a cycle (a collective or receive that no rank can reach first)");
}

void read_custom(LlmWorkload& w, Diagnostics& warnings) {
    w.collectives.custom.clear();
    for (const std::filesystem::path& f : w.collectives.custom_files)
        w.collectives.custom.push_back(std::make_shared<const CustomAlgorithm>(read_custom_algorithm(f, warnings)));
}

}  // namespace

uint32_t complete_simai_parallelism(SimaiWorkload& s, const TraceImport& t, uint32_t hosts, Diagnostics& warnings) {
    struct Key {
        const char* scenario;
        const char* header;
        int* value;
    };
    const Key keys[] = {{"tp", "model_parallel_NPU_group", &s.tp}, {"pp", "pp", &s.pp}, {"ep", "ep", &s.ep},
                        {"micro_batches", "ga", &s.ga}, {"virtual_stages", "vpp", &s.vpp}};
    for (const Key& k : keys) {
        auto given = t.parallel.find(k.scenario);
        if (given == t.parallel.end()) continue;
        if (s.header_keys.count(k.header) && *k.value != given->second)
            throw InputError(std::string("workload.parallel.") + k.scenario, std::to_string(given->second) + ", but " + s.source + " says " + k.header +
                                                                                 ": " + std::to_string(*k.value) + " (remove the key or make them agree)");
        *k.value = given->second;
    }
    if (auto dp = t.parallel.find("dp"); dp != t.parallel.end()) {
        const int world = s.tp * s.pp * dp->second;
        if (s.all_gpus > 0 && s.all_gpus != world)
            throw InputError("workload.parallel.dp", std::to_string(dp->second) + " makes " + std::to_string(world) + " GPUs (TP × PP × DP), but " + s.source +
                                                         " says all_gpus: " + std::to_string(s.all_gpus));
        s.all_gpus = world;
    }
    if (s.all_gpus <= 0) return hosts;
    if (uint32_t(s.all_gpus) > hosts)
        throw InputError(s.source + ":1", "all_gpus: " + std::to_string(s.all_gpus) + " but the fabric has only " + std::to_string(hosts) + " GPUs (hosts)");
    if (uint32_t(s.all_gpus) < hosts)
        warnings.warning(s.source + ":1", "the file's " + std::to_string(s.all_gpus) + " ranks run on the fabric's first " + std::to_string(s.all_gpus) +
                                              " hosts (rank r on the r-th, TP inside a server); the other " + std::to_string(hosts - uint32_t(s.all_gpus)) +
                                              " hosts stay idle");
    return uint32_t(s.all_gpus);
}

void check_workload_files(const LlmWorkload& w, Diagnostics& warnings) {
    for (const std::filesystem::path& f : w.collectives.custom_files) read_custom_algorithm(f, warnings);
    if (!w.trace) return;
    if (w.trace->format == "simai") read_simai_workload(read_text_file(w.trace->path), w.trace->path.string(), warnings);
    else read_chakra_traces(w.trace->path, warnings);
}

LlmJob prepare_any_llm_job(LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t, Diagnostics& warnings, const std::vector<NodeId>* job_hosts) {
    read_custom(w, warnings);
    if (!w.trace) {
        LlmJob job = prepare_llm_job(w, fabric, t, job_hosts);
        if (job.graph.lockstep() && w.granularity == Granularity::automatic)
            warnings.warning("workload.granularity", lockstep_warning(uint32_t(w.parallel.world())));
        return job;
    }
    workload_gpu(w, t);  // names an unknown GPU before any file is read
    const uint32_t hosts = job_hosts ? uint32_t(job_hosts->size()) : uint32_t(fabric.count(NodeKind::host));
    LlmJob job;
    job.workload = &w;
    SimaiWorkload s;
    uint32_t world = hosts;
    if (w.trace->format == "simai") {
        s = read_simai_workload(read_text_file(w.trace->path), w.trace->path.string(), warnings);
        world = complete_simai_parallelism(s, *w.trace, hosts, warnings);
    }
    ParallelSpec one_dim;  // rank r on the r-th host
    one_dim.dp = int(world);
    job.place = job_hosts ? place_on_hosts(fabric, std::vector<NodeId>(job_hosts->begin(), job_hosts->begin() + std::min<size_t>(world, job_hosts->size())))
                          : place_ranks(one_dim, fabric);
    const CollectiveContext ctx{job.place, t, w.gpu, w.collectives};
    if (w.trace->format == "simai") {
        const bool lockstep = lockstep_lanes(w, world);
        job.graph = build_simai_graph(s, ctx, world, w.iterations, lockstep);
        if (lockstep && w.granularity == Granularity::automatic) warnings.warning("workload.granularity", lockstep_warning(world));
    } else {
        const std::vector<ChakraRank> ranks = read_chakra_traces(w.trace->path, warnings);
        if (ranks.size() != hosts)
            throw InputError("workload.import.path", "the Chakra trace has " + std::to_string(ranks.size()) + " ranks (" + w.trace->path.string() + ".0.et … ." +
                                                         std::to_string(ranks.size() - 1) + ".et) but the fabric has " + std::to_string(hosts) + " GPUs (hosts)");
        job.graph = build_chakra_graph(ranks, ctx, w.iterations, warnings);
    }
    check_acyclic(job.graph, w.trace->path.string());
    index_transfers(job);
    return job;
}

}  // namespace orrery
