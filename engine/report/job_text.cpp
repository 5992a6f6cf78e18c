#include "report/job_text.h"

#include "report/report_text.h"

namespace orrery::report {
namespace {

struct JobMetric {
    const char* prefix;
    const char* before;
    const char* after;
};

const JobMetric kJobMetrics[] = {{"job_iteration_time.", "iteration time of job ", ""},
                                 {"job_alone_iteration_time.", "iteration time of job ", " alone"},
                                 {"job_fct_mean.", "mean FCT of job ", ""},
                                 {"job_alone_fct_mean.", "mean FCT of job ", " alone"},
                                 {"job_slowdown.", "slowdown of job ", " (with the others / alone)"}};

}  // namespace

std::string job_metric_label(const std::string& name) {
    if (name == "job_slowdown_max") return "worst job slowdown";
    if (name == "job_slowdown_mean") return "mean job slowdown";
    for (const JobMetric& m : kJobMetrics)
        if (name.rfind(m.prefix, 0) == 0) return std::string(m.before) + name.substr(std::string(m.prefix).size()) + m.after;
    return "";
}

bool is_job_metric(const std::string& name) { return !job_metric_label(name).empty(); }

std::vector<std::string> job_sentences(const ResultsTable& t, const std::vector<std::string>& labels) {
    std::vector<std::string> out;
    size_t more = 0;
    for (size_t i = 0; i < t.rows.size(); ++i) {
        std::string jobs;
        for (const JobRow& j : t.rows[i].jobs) {
            if (j.alone_iteration_time_s <= 0) continue;
            jobs += (jobs.empty() ? "" : ", ") + ("job " + j.name + " " + format_value(j.slowdown, "ratio"));
            if (jobs.find('(') == std::string::npos)  // the first job's figures say what the ratio is of
                jobs += " its time alone (" + format_value(j.iteration_time_s, "s") + " against " + format_value(j.alone_iteration_time_s, "s") + ")";
        }
        if (jobs.empty()) continue;
        if (out.size() == kJobSentences) {
            ++more;
            continue;
        }
        out.push_back((i < labels.size() ? labels[i] : t.rows[i].experiment) + ": " + jobs + ".");
    }
    if (more > 0) out.push_back("And " + std::to_string(more) + " more experiments: the Jobs table has every job's slowdown.");
    return out;
}

}  // namespace orrery::report
