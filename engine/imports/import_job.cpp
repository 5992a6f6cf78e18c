#include "imports/import_job.h"

#include "common/dag.h"
#include "imports/chakra_trace.h"
#include "imports/msccl.h"
#include "imports/simai_workload.h"
#include "scenario/load.h"

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

void check_workload_files(const LlmWorkload& w, Diagnostics& warnings) {
    for (const std::filesystem::path& f : w.collectives.custom_files) read_custom_algorithm(f, warnings);
    if (!w.trace) return;
    if (w.trace->format == "simai") read_simai_workload(read_text_file(w.trace->path), w.trace->path.string(), warnings);
    else read_chakra_traces(w.trace->path, warnings);
}

LlmJob prepare_any_llm_job(LlmWorkload& w, const Fabric& fabric, const WorkloadTables& t, Diagnostics& warnings) {
    read_custom(w, warnings);
    if (!w.trace) return prepare_llm_job(w, fabric, t);
    workload_gpu(w, t);  // names an unknown GPU before any file is read
    const uint32_t hosts = uint32_t(fabric.count(NodeKind::host));
    LlmJob job;
    job.workload = &w;
    ParallelSpec one_dim;  // rank r on the r-th host
    one_dim.dp = int(hosts);
    job.place = place_ranks(one_dim, fabric);
    const CollectiveContext ctx{job.place, t, w.gpu, w.collectives};
    if (w.trace->format == "simai") {
        const SimaiWorkload s = read_simai_workload(read_text_file(w.trace->path), w.trace->path.string(), warnings);
        job.graph = build_simai_graph(s, ctx, hosts, w.iterations);
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
