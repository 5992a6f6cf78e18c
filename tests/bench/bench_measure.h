// What the benchmark programs measure about themselves: wall time since a point, and the process's peak
// resident memory (getrusage's ru_maxrss, KiB on Linux).
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace orrery::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

inline double peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

inline double peak_rss_gib() { return peak_rss_mib() / 1024.0; }

}  // namespace orrery::bench
