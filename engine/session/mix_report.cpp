#include "session/mix_report.h"

#include <algorithm>
#include <map>

#include "workload/placement.h"

namespace orrery {

std::string host_ranges(const Fabric& f, const std::vector<NodeId>& hosts) {
    const std::vector<uint32_t> index_of = host_indices(f);
    std::string out;
    for (size_t a = 0; a < hosts.size();) {
        size_t b = a;
        while (b + 1 < hosts.size() && index_of[hosts[b + 1]] == index_of[hosts[b]] + 1) ++b;
        if (!out.empty()) out += ',';
        out += std::to_string(index_of[hosts[a]]);
        if (b > a) out.append("-").append(std::to_string(index_of[hosts[b]]));
        a = b + 1;
    }
    return out;
}

std::string leaf_map(const Fabric& f, const std::vector<NodeId>& hosts) {
    std::map<NodeId, uint32_t> under;  // leaf → GPUs of the job under it
    for (NodeId h : hosts)
        if (const NodeId leaf = leaf_of(f, h); leaf != kNone) ++under[leaf];
    std::string out;
    for (const auto& [leaf, gpus] : under) out.append(out.empty() ? "" : ", ").append(std::to_string(leaf)).append(" (" + std::to_string(gpus) + ")");
    return out;
}

std::vector<uint32_t> job_of_rank(const JobMix& mix) {
    std::vector<uint32_t> out;
    for (uint32_t j = 0; j < mix.parts.size(); ++j) out.insert(out.end(), mix.parts[j].job.place.host.size(), j);
    return out;
}

double job_measure(const MixPart& part, const LlmOutcome& o) {
    if (!part.background) return o.iteration_time_s;
    double sum = 0;
    for (const auto& [start, end] : o.transfer_times) sum += double(end - start) * 1e-12;
    return o.transfer_times.empty() ? 0 : sum / double(o.transfer_times.size());
}

std::vector<JobRow> job_rows(const PreparedMix& m, const Fabric& f) {
    std::vector<JobRow> rows;
    for (uint32_t j = 0; j < m.mix.parts.size(); ++j) {
        const MixPart& p = m.mix.parts[j];
        JobRow row;
        row.job = j;
        row.name = p.name;
        row.first_rank = p.first_rank;
        row.kind = p.background ? "flows" : "llm";
        row.ranks = uint32_t(p.job.place.host.size());
        row.hosts = host_ranges(f, p.job.place.host);
        row.leaves = leaf_map(f, p.job.place.host);
        row.start_ps = p.start_ps;
        row.first_flow = p.first_transfer;  // a transfer is a flow row (packet level) or one row (flow level, record "fct")
        row.flows = uint32_t(p.job.transfers.size());
        rows.push_back(std::move(row));
    }
    return rows;
}

MixResults mix_results(const PreparedMix& m, const Fabric& f, const std::vector<LlmOutcome>& per_job, const std::vector<double>& alone) {
    MixResults r;
    double slowdown_max = 0, slowdown_sum = 0;
    std::vector<JobRow> placed = job_rows(m, f);
    for (uint32_t j = 0; j < m.mix.parts.size() && j < per_job.size(); ++j) {
        const MixPart& p = m.mix.parts[j];
        const LlmOutcome& o = per_job[j];
        JobRow& row = placed[j];
        const double measure = job_measure(p, o);
        row.iteration_time_s = measure;
        nlohmann::json jj = p.background ? nlohmann::json{{"kind", "flows"}, {"flows", o.transfer_times.size()}, {"fct_mean_s", measure},
                                                          {"finish_s", o.iteration_time_s}}
                                         : llm_summary_json(o);
        jj["name"] = p.name;
        jj["ranks"] = row.ranks;
        jj["first_rank"] = row.first_rank;
        jj["hosts"] = row.hosts;
        jj["leaves"] = row.leaves;
        jj["start_s"] = double(p.start_ps) * 1e-12;
        const std::string what = p.background ? "fct_mean" : "iteration_time";
        r.metrics.emplace_back("job_" + what + "." + p.name, measure, "s");
        if (j < alone.size() && alone[j] > 0) {
            row.alone_iteration_time_s = alone[j];
            row.slowdown = measure / alone[j];
            jj["alone_" + what + "_s"] = alone[j];
            jj["slowdown"] = row.slowdown;
            r.metrics.emplace_back("job_alone_" + what + "." + p.name, alone[j], "s");
            r.metrics.emplace_back("job_slowdown." + p.name, row.slowdown, "ratio");
            slowdown_max = std::max(slowdown_max, row.slowdown);
            slowdown_sum += row.slowdown;
        }
        if (j < m.stragglers.size() && !m.stragglers[j].empty()) {
            nlohmann::json s = nlohmann::json::array();
            for (const auto& [rank, factor] : m.stragglers[j]) s.push_back({{"rank", rank}, {"compute_slowdown", factor}});
            jj["stragglers"] = s;
        }
        if (!p.background) r.iteration_time_s = std::max(r.iteration_time_s, o.iteration_time_s);
        r.jobs.push_back(std::move(jj));
        r.rows.push_back(std::move(row));
    }
    r.metrics.insert(r.metrics.begin(), {"iteration_time", r.iteration_time_s, "s"});
    if (!alone.empty()) {
        r.metrics.emplace_back("job_slowdown_max", slowdown_max, "ratio");
        r.metrics.emplace_back("job_slowdown_mean", slowdown_sum / double(std::max<size_t>(1, r.rows.size())), "ratio");
    }
    return r;
}

}  // namespace orrery
