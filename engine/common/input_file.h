#pragma once
// Why a file named by the user cannot be read as an input, without throwing: readers put the answer under the
// JSON path or key that named it, so the user sees which field holds the bad name.
#include <filesystem>
#include <string>

namespace orrery {

// "" when `file` exists and is not a folder; otherwise "file not found: PATH", "PATH is a folder, expected a
// file", or what the system said of the name (too long, a part of it not a folder, no permission).
std::string input_file_problem(const std::filesystem::path& file);

// The path shortened for a message: a name of hundreds of characters is cut in the middle.
std::string short_path(const std::filesystem::path& file);

}  // namespace orrery
