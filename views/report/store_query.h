#pragma once
// Reading a results store for a report: opened read-only (a store another process is filling stays safe), and
// a statement that cannot be prepared means the file is not a results store.
#include <string>

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"
#include "telemetry/sqlite_query.h"

namespace orrery::views {

struct ReadOnlyStore {
    explicit ReadOnlyStore(const std::string& file) {
        if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
            sqlite3_close(db);
            throw InputError(file, "cannot open the results store: " + why);
        }
        sqlite3_busy_timeout(db, 2000);
        if (const std::string why = ResultsStore::not_a_store_problem(db); !why.empty()) {
            sqlite3_close(db);
            db = nullptr;
            throw InputError(file, why);
        }
    }
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

}  // namespace orrery::views
