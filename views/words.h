#pragma once
// Counts in the workbench's sentences: "1 box", "3 boxes", never "1 boxes".
#include <cstddef>

#include <QString>

namespace orrery::views {

inline QString counted(size_t n, const char* one, const char* many) { return QString::number(qulonglong(n)) + " " + (n == 1 ? one : many); }

}  // namespace orrery::views
