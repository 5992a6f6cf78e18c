#pragma once
// Where the jobs of a mix sit (workload.jobs[i].placement): per job the hosts its ranks run on, rank r on the
// r-th of them. Jobs listing their hosts are placed first; the others take whole free servers in list order:
// packed (the lowest in fabric order), spread (dealt round robin over the leaves: each server's leaf is its
// first GPU's NIC's switch, so a job's servers sit under as many leaves as there are), random (drawn with the
// job's seed, common/splitmix.h). Inside the servers it takes, a job's ranks follow fabric order.
#include <string>
#include <vector>

#include "topology/fabric.h"
#include "workload/collectives.h"
#include "workload/jobs.h"

namespace orrery {

struct JobRequest {
    std::string name, where;          // where: "workload.jobs[1]"
    PlacementSpec placement;
    uint32_t gpus = 0;                // the GPUs (ranks) it needs; 0 with listed hosts: as many as listed
    const ParallelSpec* parallel = nullptr;  // model-built jobs: its TP groups must stay inside a server
    bool holds_hosts = true;          // false: background flows, on hosts the training jobs hold (nothing to place)
};

// Per job, its hosts in rank order. Throws InputError naming the job's field: two jobs on one host (both jobs
// and the host named), more GPUs asked for than are free, an unknown host, a TP group across servers.
// `names`: an explicit fabric's node names (empty otherwise).
std::vector<std::vector<NodeId>> place_jobs(const Fabric& f, const std::vector<std::string>& names, const std::vector<JobRequest>& jobs);

// A mix's problems found before anything is built, as "field: message": each model-built job's own rules
// (check_llm_workload, under workload.jobs[i]), its GPUs against its ranks, one GPU kind for all, then the
// placement (place_jobs' refusals).
std::vector<std::string> check_jobs(const JobsWorkload& w, const Fabric& f, const std::vector<std::string>& names);
// The requests place_jobs takes for the jobs of `w`.
std::vector<JobRequest> job_requests(const JobsWorkload& w);
// A problem "workload.parallel: …" of a job's workload as the job's own field ("workload.jobs[1].parallel: …").
std::string in_job(const JobSpec& job, const std::string& problem);

// The placement of ranks on `hosts` (rank r on hosts[r]): servers from the fabric's NVLink domains.
Placement place_on_hosts(const Fabric& f, const std::vector<NodeId>& hosts);
// Fills pl.rank_at from its ranks' servers and positions (a cell two ranks claim keeps the first).
void index_ranks_by_server(Placement& pl);
// A host's leaf: the switch its NIC reaches first (kNone without one).
NodeId leaf_of(const Fabric& f, NodeId host);
// Each node's position among the fabric's hosts in node order (the "host 5" of listed placements, the jobs
// table and the canvas); kNotAHost for a switch.
inline constexpr uint32_t kNotAHost = UINT32_MAX;
std::vector<uint32_t> host_indices(const Fabric& f);

}  // namespace orrery
