#pragma once
// Steady-state identification (Wormhole §5.1.2 and appendix F): a flow is steady when the relative spread
// of its last l sending-rate samples, (max − min) / mean, is below θ; its rate from then on is their mean.
// Rates are the bytes the flow got acknowledged over each sampling interval, so a flow held back by its
// bottleneck reads as its share of it, whatever its congestion control does inside the interval.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace orrery::wormhole {

inline constexpr int kMaxWindow = 64;
inline constexpr uint32_t kMinWindow = 4;  // samples: fewer cannot tell a flat rate from a turning one

struct RateWindow {
    int64_t last_time = 0;        // ps: the previous sample
    uint64_t last_acked = 0;      // bytes acknowledged then
    uint64_t last_inflight = 0;   // bytes sent and not acknowledged then
    double rate[kMaxWindow] = {}; // bytes per ps, a ring of the last samples
    double cc_rate[kMaxWindow] = {}; // the CC's sending rate at each sample (bit/s)
    uint32_t count = 0;           // samples taken since the last reset

    void reset(int64_t now, uint64_t acked, uint64_t inflight) {
        last_time = now;
        last_acked = acked;
        last_inflight = inflight;
        count = 0;
    }
    // The next sample measures from `now` (acknowledged `acked` then); the samples so far stay.
    void restart_interval(int64_t now, uint64_t acked) {
        last_time = now;
        last_acked = acked;
    }
    void sample(int64_t now, uint64_t acked, uint64_t inflight, uint64_t cc_rate_bps) {
        if (now <= last_time) return;
        last_inflight = inflight;
        cc_rate[count % kMaxWindow] = double(cc_rate_bps);
        rate[count % kMaxWindow] = double(acked - last_acked) / double(now - last_time);
        ++count;
        last_time = now;
        last_acked = acked;
    }
    // The mean of the last l samples when their relative spread is below θ, else a negative number.
    double steady_rate(uint32_t l, double theta) const {
        if (count < l || l == 0) return -1;
        double lo = rate[(count - 1) % kMaxWindow], hi = lo, sum = 0;
        for (uint32_t i = 0; i < l; ++i) {
            const double r = rate[(count - 1 - i) % kMaxWindow];
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
            sum += r;
        }
        const double mean = sum / double(l);
        if (!(mean > 0)) return -1;
        return (hi - lo) / mean < theta ? mean : -1;
    }
    // The standard error of the mean of the last l samples (their scatter over sqrt(l)).
    double standard_error(uint32_t l) const {
        if (count < l || l < 2) return 0;
        double sum = 0, sq = 0;
        for (uint32_t i = 0; i < l; ++i) {
            const double r = rate[(count - 1 - i) % kMaxWindow];
            sum += r, sq += r * r;
        }
        const double mean = sum / double(l);
        const double var = std::max(0.0, sq / double(l) - mean * mean) * double(l) / double(l - 1);
        return std::sqrt(var / double(l));
    }
    // The drift of the rate over the last l samples, bytes/ps per ps: the newer half's mean minus the older
    // half's, over the time between their centres (`interval` apart per sample). `significant_only`: their
    // least-squares slope instead, and 0 unless it exceeds two standard errors of the samples' scatter around
    // it, so that a CC's jitter around a flat rate is not read as a trend (skipper.cpp says for which CCs).
    double drift(uint32_t l, double interval_ps, bool significant_only) const { return drift_of(rate, l, interval_ps, significant_only); }
    // The relative drift of the CC's sending rate, per ps. A rate-based CC may keep raising its rate while the
    // flow's share of its bottleneck is flat (the queue takes the difference) until it reacts: the share is
    // then steady only for as long as the CC rate stays within θ of itself.
    double cc_relative_drift(uint32_t l, double interval_ps, bool significant_only) const {
        if (count < l || l < 2) return 0;
        double mean = 0;
        for (uint32_t i = 0; i < l; ++i) mean += cc_rate[(count - 1 - i) % kMaxWindow];
        mean /= double(l);
        return mean > 0 ? drift_of(cc_rate, l, interval_ps, significant_only) / mean : 0;
    }

private:
    double drift_of(const double* ring, uint32_t l, double interval_ps, bool significant_only) const {
        if (count < l || l < 2) return 0;
        if (significant_only) {
            double tm = 0, ym = 0;
            for (uint32_t i = 0; i < l; ++i) tm += double(i), ym += ring[(count - l + i) % kMaxWindow];
            tm /= double(l), ym /= double(l);
            double sxx = 0, sxy = 0;
            for (uint32_t i = 0; i < l; ++i) {
                const double dt = double(i) - tm;
                sxx += dt * dt, sxy += dt * (ring[(count - l + i) % kMaxWindow] - ym);
            }
            const double slope = sxy / sxx;
            double ss = 0;
            for (uint32_t i = 0; i < l; ++i) {
                const double r = ring[(count - l + i) % kMaxWindow] - ym - slope * (double(i) - tm);
                ss += r * r;
            }
            const double se = l > 2 ? std::sqrt(ss / double(l - 2) / sxx) : 0;
            return std::abs(slope) > 2 * se ? slope / interval_ps : 0;
        }
        const uint32_t half = l / 2;
        double older = 0, newer = 0;
        for (uint32_t i = 0; i < half; ++i) {
            newer += ring[(count - 1 - i) % kMaxWindow];
            older += ring[(count - l + i) % kMaxWindow];
        }
        return (newer - older) / double(half) / ((double(l) - double(half)) * interval_ps);
    }
};

// l from appendix F: the window must span at least one period of the CC's steady oscillation,
// T_C > sqrt(4·C·RTT / (7N)) round trips, with C·RTT in packets and N flows on the bottleneck (eq. 24).
inline uint32_t window_for(double bdp_packets, uint32_t flows_on_bottleneck, double rtt_ps, double interval_ps) {
    const double n = flows_on_bottleneck > 0 ? double(flows_on_bottleneck) : 1.0;
    const double period_ps = std::sqrt(4.0 * bdp_packets / (7.0 * n)) * rtt_ps;
    uint32_t l = uint32_t(std::ceil(period_ps / interval_ps)) + 1;
    if (l < kMinWindow) l = kMinWindow;
    if (l > uint32_t(kMaxWindow)) l = uint32_t(kMaxWindow);
    return l;
}

}  // namespace orrery::wormhole
