#include "common/input_file.h"

#include <system_error>

namespace orrery {

std::string short_path(const std::filesystem::path& file) {
    const std::string s = file.string();
    return s.size() <= 120 ? s : s.substr(0, 60) + "…" + s.substr(s.size() - 50);
}

std::string input_file_problem(const std::filesystem::path& file) {
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(file, ec);
    if (st.type() == std::filesystem::file_type::not_found) return "file not found: " + short_path(file);
    if (ec) return short_path(file) + ": " + ec.message();
    if (st.type() == std::filesystem::file_type::directory) return short_path(file) + " is a folder, expected a file";
    return "";
}

}  // namespace orrery
