#pragma once
// Copying runs between results stores: the workbench has its runs written by `orrery-cli` into a staging
// store of their own, then copies them into the project on its one connection, so that no other process
// ever writes a project file the workbench has open (views/README.md, "One writer per project").
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

struct sqlite3;

namespace orrery {

// Appends every run of the store `from` to the store open on `into`, in one transaction, with new run ids
// (in order); every table keyed by run_id is copied. Runs still `running` in `from` take `unfinished_status`
// (their process is gone: the caller knows how it ended), with their unfinished experiments.
// Returns the new run ids. Throws InputError naming the file on any SQLite error; nothing is copied then.
std::vector<int64_t> import_runs(sqlite3* into, const std::filesystem::path& into_file, const std::filesystem::path& from,
                                 const std::string& unfinished_status);

}  // namespace orrery
