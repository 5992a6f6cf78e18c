#pragma once
// Reading a results store for a report: opened read-only (a store another process is filling stays safe), and
// a statement that cannot be prepared means the file is not a results store.
#include <string>

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"
#include "telemetry/sqlite_open.h"
#include "telemetry/sqlite_query.h"

namespace orrery::report {

struct ReadOnlyStore {
    explicit ReadOnlyStore(const std::string& file) : db(open_store_read_only(file, 2000)) {}
    ~ReadOnlyStore() { sqlite3_close(db); }
    ReadOnlyStore(const ReadOnlyStore&) = delete;
    ReadOnlyStore& operator=(const ReadOnlyStore&) = delete;
    sqlite3* db = nullptr;
};

struct StoreQuery : SqlQuery {
    StoreQuery(sqlite3* db, const char* sql, const std::string& file) : SqlQuery(db, sql) {
        if (!ok()) throw InputError(file, "not an Orrery results store: " + error());
    }
};

}  // namespace orrery::report
