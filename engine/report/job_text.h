#pragma once
// What a run of several jobs on one fabric (workload.kind "jobs") says: each job's slowdown against itself alone
// on the same hosts, as the summary's lead and the Jobs table ("spread (e0001): job a 1.701× its time alone
// (38.69 ms against 20.11 ms), job b 1.848×"), and the per-job metrics' names as read.
#include <string>
#include <vector>

#include "report/results_table.h"

namespace orrery::report {

// One sentence per experiment whose jobs ran alone too (at most kJobSentences, then how many more), in row
// order; `labels` per row. Empty when no experiment has a job measured alone.
std::vector<std::string> job_sentences(const ResultsTable& t, const std::vector<std::string>& labels);
inline constexpr size_t kJobSentences = 6;

// "job_slowdown.a" → "slowdown of job a (with the others / alone)"; "" for a name that is not a job metric.
std::string job_metric_label(const std::string& name);
bool is_job_metric(const std::string& name);

}  // namespace orrery::report
