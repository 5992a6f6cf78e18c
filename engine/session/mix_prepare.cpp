#include "session/mix_prepare.h"

#include <algorithm>
#include <numeric>

#include "common/splitmix.h"
#include "imports/import_job.h"
#include "workload/build.h"
#include "workload/placement.h"

namespace orrery {
namespace {

std::vector<std::pair<uint32_t, double>> straggler_ranks(const JobSpec& j, uint32_t world) {
    const StragglerSpec& s = j.stragglers;
    std::vector<std::pair<uint32_t, double>> out;
    for (const auto& [rank, factor] : s.ranks) {
        if (rank >= world)
            throw InputError(j.where + ".stragglers", "job \"" + j.name + "\" has ranks 0.." + std::to_string(world - 1) + ", found rank " + std::to_string(rank));
        out.emplace_back(rank, factor);
    }
    if (s.count > 0) {
        if (s.count > world)
            throw InputError(j.where + ".stragglers.count", "job \"" + j.name + "\" has " + std::to_string(world) + " ranks, fewer than " + std::to_string(s.count));
        std::vector<uint32_t> ranks(world);
        std::iota(ranks.begin(), ranks.end(), 0u);
        draw_front(ranks, s.count, s.seed);
        ranks.resize(s.count);
        std::sort(ranks.begin(), ranks.end());
        for (uint32_t r : ranks) out.emplace_back(r, s.slowdown);
    }
    return out;
}

}  // namespace

PreparedMix prepare_job_mix(const Scenario& s, const Fabric& f, const WorkloadTables& t, Diagnostics& warnings) {
    const JobsWorkload& w = *s.workload.jobs;
    if (const std::vector<std::string> problems = check_jobs(w, f, topology_node_names(s.topology)); !problems.empty()) {
        Diagnostics d;
        for (const std::string& p : problems) d.error(p.substr(0, p.find(": ")), p.substr(p.find(": ") + 2));
        throw InputError(d);
    }
    PreparedMix out;
    out.hosts = place_jobs(f, topology_node_names(s.topology), job_requests(w));
    for (size_t i = 0; i < w.jobs.size(); ++i) {
        const JobSpec& j = w.jobs[i];
        out.workloads.push_back(std::make_unique<LlmWorkload>(j.llm));
        if (j.background()) {  // its flows on the hosts they name, sharing them with the training jobs
            out.workloads.back()->collectives.priority = j.priority;
            out.workloads.back()->iterations = 1;
            out.stragglers.emplace_back();
            out.mix.parts.push_back({j.name, background_job(j.flows, f, *out.workloads.back()), 0});
            out.mix.parts.back().background = true;
            continue;
        }
        Diagnostics job_warnings;
        LlmJob job;
        try {
            job = prepare_any_llm_job(*out.workloads.back(), f, t, job_warnings, &out.hosts[i]);
        } catch (const InputError& e) {
            Diagnostics d;  // the job's fields, not the single workload's
            for (const Diagnostic& x : e.diagnostics().items()) d.error(in_job(j, x.where), "job \"" + j.name + "\": " + x.message);
            throw InputError(d);
        }
        for (const Diagnostic& x : job_warnings.items()) warnings.warning(in_job(j, x.where), "job \"" + j.name + "\": " + x.message);
        if (!job.oom_message.empty()) {
            out.oom_message = "job \"" + j.name + "\": " + job.oom_message;
            return out;
        }
        out.stragglers.push_back(straggler_ranks(j, uint32_t(job.place.host.size())));
        slow_ranks(job.graph, out.stragglers.back());
        out.mix.parts.push_back({j.name, std::move(job), j.start.count});
    }
    for (const MixPart& p : out.mix.parts)
        if (p.background && out.mix.parts[0].job.graph.lockstep() != p.job.graph.lockstep())
            throw InputError(w.jobs[0].where + ".granularity", "background flows (job \"" + p.name + "\") run per rank, and this mix's jobs in lockstep lanes: set "
                                                                "\"granularity\": \"rank\" on the training jobs");
    for (const MixPart& p : out.mix.parts)
        if (p.job.graph.lockstep() != out.mix.parts[0].job.graph.lockstep())
            throw InputError(w.jobs[0].where + ".granularity",
                             "job \"" + out.mix.parts[0].name + "\" runs " + (out.mix.parts[0].job.graph.lockstep() ? "in lockstep lanes" : "per rank") +
                                 " and job \"" + p.name + "\" " + (p.job.graph.lockstep() ? "in lockstep lanes" : "per rank") +
                                 ": the jobs of a mix run one way; set \"granularity\" to the same value on every job");
    merge_jobs(out.mix);
    return out;
}

}  // namespace orrery
