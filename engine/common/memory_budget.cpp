#include "common/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#include "common/diagnostics.h"

namespace orrery {

uint64_t physical_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

uint64_t address_space_limit() {
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
    return uint64_t(limit.rlim_cur);
}

uint64_t address_space_left() {
    const uint64_t limit = address_space_limit();
    if (limit == UINT64_MAX) return UINT64_MAX;
    unsigned long long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
        std::fclose(f);
    }
    const uint64_t mapped = uint64_t(pages) * uint64_t(::sysconf(_SC_PAGE_SIZE));
    return mapped >= limit ? 0 : limit - mapped;
}

std::string gib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(1ull << 30));
    return text;
}

void refuse_beyond_memory(const std::string& where, const std::string& what, uint64_t bytes) {
    const uint64_t memory = physical_memory_bytes();
    // Three quarters: the rest of the process (its other tables, the fabric) and the system need the rest.
    if (memory == 0 || bytes <= memory / 4 * 3) return;
    throw InputError(where, what + " would need about " + gib(bytes) + ", more than three quarters of this machine's " + gib(memory) +
                                " of memory: refused before building it");
}

}  // namespace orrery
