#include "views/run/telemetry_data.h"

#include <algorithm>

namespace orrery::views {

double ExperimentTelemetry::last_time() const {
    double t = 0;
    for (const Series& s : tier_max)
        if (!s.t.empty()) t = std::max(t, s.t.back());
    if (!total_rate.t.empty()) t = std::max(t, total_rate.t.back());
    for (const Span& s : spans) t = std::max(t, s.end);
    for (const SkipBand& b : skips) t = std::max(t, b.end);
    return t;
}

namespace {
void append_series(Series& to, const Series& from) {
    to.t.insert(to.t.end(), from.t.begin(), from.t.end());
    to.v.insert(to.v.end(), from.v.begin(), from.v.end());
}
}  // namespace

void ExperimentTelemetry::append(const ExperimentTelemetry& more) {
    for (int i = 0; i < 3; ++i) {
        append_series(tier_max[i], more.tier_max[i]);
        append_series(tier_p99[i], more.tier_p99[i]);
        append_series(tier_median[i], more.tier_median[i]);
    }
    for (const auto& [port, s] : more.ports) append_series(ports[port], s);
    for (int i = 0; i < 3; ++i) {
        append_series(uplink_busiest[i], more.uplink_busiest[i]);
        append_series(uplink_mean[i], more.uplink_mean[i]);
    }
    if (more.uplinks_at >= uplinks_at) uplinks_now = more.uplinks_now, uplinks_at = more.uplinks_at;
    append_series(drops, more.drops);
    append_series(lost_to_failures, more.lost_to_failures);
    append_series(retransmits, more.retransmits);
    append_series(timeouts, more.timeouts);
    append_series(total_rate, more.total_rate);
    append_series(active_flows, more.active_flows);
    spans.insert(spans.end(), more.spans.begin(), more.spans.end());
    skips.insert(skips.end(), more.skips.begin(), more.skips.end());
    if (job_names.size() < more.job_names.size()) job_names.resize(more.job_names.size());
    for (size_t j = 0; j < more.job_names.size(); ++j)
        if (!more.job_names[j].empty()) job_names[j] = more.job_names[j];
    if (!more.status.empty()) status = more.status;
}

std::vector<ColumnRange> downsample(const Series& s, double t0, double t1, int columns) {
    std::vector<ColumnRange> out(size_t(std::max(columns, 0)));
    if (columns <= 0 || t1 <= t0) return out;
    const double width = (t1 - t0) / columns;
    auto first = std::lower_bound(s.t.begin(), s.t.end(), t0);
    for (size_t i = size_t(first - s.t.begin()); i < s.t.size() && s.t[i] < t1; ++i) {
        const int c = std::min(columns - 1, int((s.t[i] - t0) / width));
        ColumnRange& r = out[size_t(c)];
        if (r.count == 0) r.lo = r.hi = s.v[i];
        else {
            r.lo = std::min(r.lo, s.v[i]);
            r.hi = std::max(r.hi, s.v[i]);
        }
        ++r.count;
    }
    return out;
}

std::vector<SkipBand> merge_bands(std::vector<SkipBand> bands) {
    std::sort(bands.begin(), bands.end(), [](const SkipBand& a, const SkipBand& b) { return a.start < b.start; });
    std::vector<SkipBand> out;
    for (const SkipBand& b : bands) {
        if (!out.empty() && b.start <= out.back().end) {
            out.back().end = std::max(out.back().end, b.end);
            out.back().flows += b.flows;
        } else {
            out.push_back(b);
        }
    }
    return out;
}

}  // namespace orrery::views
