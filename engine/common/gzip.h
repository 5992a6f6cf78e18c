#pragma once
// gzip in memory (zlib): trace exports written as .json.gz, and gzipped inputs (Chakra traces) read back.
#include <string>

namespace orrery {

std::string gzip_compress(const std::string& bytes);
bool is_gzip(const std::string& bytes);  // starts with the gzip magic 1f 8b
// Throws InputError naming `source` when the data is not a complete gzip stream.
std::string gzip_decompress(const std::string& bytes, const std::string& source);

}  // namespace orrery
