#pragma once
// Estimating what an input needs before building it: an input that cannot fit in this machine's memory is
// refused with the estimate, instead of spending minutes and gigabytes on the way to std::bad_alloc.
#include <cstdint>
#include <string>

namespace orrery {

// The machine's physical memory in bytes (0 when unknown: then nothing is refused).
uint64_t physical_memory_bytes();

// Throws InputError at `where` when `bytes` exceed three quarters of the machine's physical memory; `what` says what they are for.
void refuse_beyond_memory(const std::string& where, const std::string& what, uint64_t bytes);

// Address space this process may still map: its limit (ulimit -v, RLIMIT_AS) less what it maps now;
// UINT64_MAX without a limit. Cluster login and batch nodes often set one.
uint64_t address_space_left();
// The limit itself (UINT64_MAX: none).
uint64_t address_space_limit();

// "12.3 GiB"
std::string gib(uint64_t bytes);

}  // namespace orrery
