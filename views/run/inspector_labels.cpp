#include "views/run/inspector_labels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "report/chart.h"

using namespace orrery::report;  // the report model this file draws (engine/report)

namespace orrery::views {

std::string time_label(double s) {
    char buf[64];
    const double a = std::fabs(s);
    if (a >= 1) std::snprintf(buf, sizeof buf, "%.4g s", s);
    else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
    else if (a >= 1e-6) std::snprintf(buf, sizeof buf, "%.4g us", s * 1e6);
    else std::snprintf(buf, sizeof buf, "%.4g ns", s * 1e9);
    return buf;
}

std::string value_label(double v, const char* unit) {
    char buf[64];
    const char* prefix[] = {"", "K", "M", "G", "T"};
    int p = 0;
    while (std::fabs(v) >= 1000 && p < 4) {
        v /= 1000;
        ++p;
    }
    std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefix[p], unit);
    return buf;
}

std::vector<double> ruler_ticks(double t0, double t1, int count) { return nice_ticks(t0, t1, count); }

std::string ruler_label(double t, double step) {
    struct Unit {
        double seconds;
        const char* name;
    };
    static const Unit units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    const Unit* u = &units[3];
    for (const Unit& candidate : units)
        if (step >= candidate.seconds * (1 - 1e-9)) {
            u = &candidate;
            break;
        }
    // A step below 1 ns (a window of a few ps) keeps decimals of ns.
    const int decimals = step >= u->seconds * (1 - 1e-9) ? 0 : std::min(3, int(std::ceil(-std::log10(step / u->seconds) - 1e-9)));
    double value = t / u->seconds;
    if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // no "-0"
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, value, u->name);
    return buf;
}

std::vector<RankRow> rank_rows(const std::vector<Span>& spans, int ranks, const std::vector<std::string>& job_names) {
    std::vector<RankRow> rows(size_t(std::max(0, ranks)));
    bool mix = false;
    std::vector<int> first_of_job;  // per job: its lowest rank seen
    for (const Span& s : spans) {
        if (s.rank < 0 || s.rank >= ranks) continue;
        rows[size_t(s.rank)].job = s.job;
        mix |= s.job > 0;
        if (size_t(s.job) >= first_of_job.size()) first_of_job.resize(size_t(s.job) + 1, INT32_MAX);
        first_of_job[size_t(s.job)] = std::min(first_of_job[size_t(s.job)], s.rank);
    }
    for (int r = 0; r < ranks; ++r) {
        RankRow& row = rows[size_t(r)];
        row.label.clear();
        if (!mix || row.job < 0) {
            row.label.append("rank ").append(std::to_string(r));
            if (!mix) row.job = -1;
            continue;
        }
        const size_t j = size_t(row.job);
        row.label.append("job ").append(j < job_names.size() && !job_names[j].empty() ? job_names[j] : std::to_string(row.job));
        row.label.append(" · rank ").append(std::to_string(r - first_of_job[j]));
    }
    return rows;
}

std::string span_description(const Span& s) {
    // Appended piece by piece: "literal" + std::string trips GCC 12's -Wrestrict.
    std::string text = s.task;
    text += "  (";
    text += s.kind;
    text += ")\nrank ";
    text += std::to_string(s.rank);
    text += ", ";
    text += s.stream;
    if (s.stream != "compute") text += " communication";
    text += ", iteration ";
    text += std::to_string(s.iteration);
    text += "\nstart ";
    text += time_label(s.start);
    text += ", end ";
    text += time_label(s.end);
    text += ", duration ";
    text += time_label(s.end - s.start);
    if (s.bytes > 0) {
        text += "\n";
        text += value_label(double(s.bytes), "B");
        text += " per rank";
    }
    if (!s.peers.empty()) {
        text += s.bytes > 0 ? ", peers " : "\npeers ";
        text += s.peers;
    }
    return text;
}

}  // namespace orrery::views
