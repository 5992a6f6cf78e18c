#pragma once
// What a mix of jobs reports (workload.kind "jobs"): per job its iteration time, alone and with the others, its
// slowdown, where it sits — as store rows (the `jobs` table), summary JSON ("jobs": [...]) and metrics
// (iteration_time is the slowest job's; job_iteration_time.NAME, job_alone_iteration_time.NAME,
// job_slowdown.NAME, job_slowdown_max, job_slowdown_mean).
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/mix_prepare.h"
#include "telemetry/results_store.h"

namespace orrery {

struct MixResults {
    std::vector<JobRow> rows;
    nlohmann::json jobs = nlohmann::json::array();
    std::vector<std::tuple<std::string, double, std::string>> metrics;
    double iteration_time_s = 0;  // the slowest job's
};

// What a job's slowdown compares: a training job's iteration time, background flows' mean completion time (s).
double job_measure(const MixPart& part, const LlmOutcome& o);

// Each job's row as the mix starts: name, ranks, hosts, leaves, start, flows; no times yet.
std::vector<JobRow> job_rows(const PreparedMix& m, const Fabric& f);

// `alone`: per job its measure alone on its hosts (job_measure); empty when the mix ran without isolation.
MixResults mix_results(const PreparedMix& m, const Fabric& f, const std::vector<LlmOutcome>& per_job, const std::vector<double>& alone);

// Per rank of the merged job, the job it belongs to (the timeline's job column).
std::vector<uint32_t> job_of_rank(const JobMix& mix);

// The placement map of a job's hosts: each leaf switch (node id, the first switch of a GPU's NIC) under which its
// GPUs sit, with how many: "64 (16), 65 (16)".
std::string leaf_map(const Fabric& f, const std::vector<NodeId>& hosts);

// Host indices (the i-th GPU in fabric order) as ranges: "0-31,64-95".
std::string host_ranges(const Fabric& f, const std::vector<NodeId>& hosts);

}  // namespace orrery
