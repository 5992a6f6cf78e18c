#pragma once
// Opening a results store to read it: the one place that does (the store's reader, the live tail the
// workbench polls, the report). Read-only, so a store another process is filling stays safe; waits up to
// `busy_ms` for that writer's lock before a statement gives up.
#include <string>

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"

namespace orrery {

// Throws InputError naming the file when it cannot be opened or is not an Orrery results store.
inline sqlite3* open_store_read_only(const std::string& file, int busy_ms) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        throw InputError(file, "cannot open the results store: " + why);
    }
    sqlite3_busy_timeout(db, busy_ms);
    if (const std::string why = ResultsStore::not_a_store_problem(db); !why.empty()) {
        sqlite3_close(db);
        throw InputError(file, why);
    }
    return db;
}

}  // namespace orrery
