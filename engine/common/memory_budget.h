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

// "12.3 GiB"
std::string gib(uint64_t bytes);

}  // namespace orrery
