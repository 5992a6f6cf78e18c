#pragma once
#include <string>

namespace orrery {
std::string version();       // "0.1.0"
std::string git_revision();  // short hash, with "-dirty" when the tree had changes at build time; "unknown" outside git
}
