#pragma once
// One prepared SQLite statement, finalized when it goes: binding by position, stepping, reading columns.
// Shared by everything that reads or writes Orrery's SQLite files (the results store reader, the workbench's
// project file and telemetry feed). A statement that fails to prepare reports it through ok() and error();
// the caller decides whether that is fatal (a store from before a table existed, say, is not).
#include <cstdint>
#include <string>

#include <sqlite3.h>

#include "common/diagnostics.h"

namespace orrery {

class SqlQuery {
public:
    SqlQuery(sqlite3* db, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) {
            error_ = sqlite3_errmsg(db);
            s_ = nullptr;
        }
    }
    ~SqlQuery() { sqlite3_finalize(s_); }
    SqlQuery(const SqlQuery&) = delete;
    SqlQuery& operator=(const SqlQuery&) = delete;

    bool ok() const { return s_ != nullptr; }
    const std::string& error() const { return error_; }
    SqlQuery& bind(int i, int64_t v) {
        if (s_) sqlite3_bind_int64(s_, i, v);
        return *this;
    }
    SqlQuery& bind(int i, const std::string& v) {
        if (s_) sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    // The next row; false at the end. Any other outcome (a damaged file, a full disk, a lock held too long)
    // throws InputError naming the database file: a damaged store must never read as a short one.
    bool next() {
        if (!s_) return false;
        const int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        fail();
    }
    // A statement that returns no rows; true when it ran (throws like next() when SQLite fails).
    bool run() {
        if (!s_) return false;
        const int rc = sqlite3_step(s_);
        if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail();
        return true;
    }
    int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
    double real(int c) const { return sqlite3_column_double(s_, c); }
    bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
    std::string blob(int c) const {
        const void* b = sqlite3_column_blob(s_, c);
        return b ? std::string(static_cast<const char*>(b), size_t(sqlite3_column_bytes(s_, c))) : std::string();
    }
    std::string text(int c) const {
        const unsigned char* t = sqlite3_column_text(s_, c);
        return t ? reinterpret_cast<const char*>(t) : "";
    }

private:
    [[noreturn]] void fail() const {
        sqlite3* db = sqlite3_db_handle(s_);
        const char* file = sqlite3_db_filename(db, "main");
        throw InputError(file && *file ? file : "(SQLite database)",
                         std::string("SQLite: ") + sqlite3_errmsg(db) + " (" + sqlite3_errstr(sqlite3_extended_errcode(db)) + ")");
    }
    sqlite3_stmt* s_ = nullptr;
    std::string error_;
};

}  // namespace orrery
