#include "views/project_file.h"

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"
#include "telemetry/store_import.h"
#include "telemetry/sqlite_query.h"

namespace orrery::views {
namespace {

// A statement on the project's own tables: one that cannot be prepared names the file.
struct Statement : SqlQuery {
    Statement(sqlite3* db, const char* sql, const std::filesystem::path& file) : SqlQuery(db, sql) {
        if (!ok()) throw InputError(file.string(), error());
    }
};

StoredScenario read_row(const Statement& q, const std::filesystem::path& file) {
    StoredScenario s;
    s.name = q.text(0);
    try {
        s.document = nlohmann::json::parse(q.text(1));
        const std::string positions = q.text(2);
        s.positions = positions.empty() ? nlohmann::json::object() : nlohmann::json::parse(positions);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file.string() + ": scenario \"" + s.name + "\"", std::string("stored JSON is damaged: ") + e.what());
    }
    s.saved_utc = q.text(3);
    return s;
}

}  // namespace

ProjectFile::ProjectFile(const std::filesystem::path& file) : path_(file) {
    { ResultsStore schema(file); }  // creates the results tables, or refuses a file that is not an Orrery store
    if (sqlite3_open_v2(file.string().c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw InputError(file.string(), "cannot open the project: " + why);
    }
    sqlite3_busy_timeout(db_, 5000);
    exec("CREATE TABLE IF NOT EXISTS workbench_scenarios (name TEXT PRIMARY KEY, document TEXT NOT NULL, positions TEXT, saved_utc TEXT);"
         "CREATE TABLE IF NOT EXISTS workbench_autosave (name TEXT PRIMARY KEY, document TEXT NOT NULL, positions TEXT, saved_utc TEXT);"
         "CREATE TABLE IF NOT EXISTS workbench_settings (key TEXT PRIMARY KEY, value TEXT);");
}

ProjectFile::~ProjectFile() { sqlite3_close(db_); }

void ProjectFile::exec(const std::string& sql) const {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string why = error ? error : "unknown error";
        sqlite3_free(error);
        throw InputError(path_.string(), "project write failed: " + why);
    }
}

std::vector<StoredScenario> ProjectFile::scenarios() const {
    std::vector<StoredScenario> out;
    Statement q(db_, "SELECT name, document, positions, saved_utc FROM workbench_scenarios ORDER BY rowid", path_);
    while (q.next()) out.push_back(read_row(q, path_));
    return out;
}

void ProjectFile::write_scenario(const char* sql, const StoredScenario& s, int indent, const char* what) {
    Statement q(db_, sql, path_);
    q.bind(1, s.name);
    q.bind(2, s.document.dump(indent));
    q.bind(3, s.positions.dump());
    if (!q.run()) throw InputError(path_.string(), std::string("cannot ") + what + ": " + sqlite3_errmsg(db_));
}

void ProjectFile::save_scenario(const StoredScenario& s) {
    // One transaction: a kill between the two statements leaves the old scenario and its autosave, or the new one.
    exec("BEGIN IMMEDIATE");
    try {
        write_scenario("INSERT OR REPLACE INTO workbench_scenarios (name, document, positions, saved_utc) VALUES (?, ?, ?, datetime('now'))", s, 2,
                       "save the scenario");
        clear_autosave(s.name);
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

std::vector<int64_t> ProjectFile::import_runs(const std::filesystem::path& staging, const std::string& unfinished_status) {
    return orrery::import_runs(db_, path_, staging, unfinished_status);
}

void ProjectFile::remove_scenario(const std::string& name) {
    Statement q(db_, "DELETE FROM workbench_scenarios WHERE name = ?", path_);
    q.bind(1, name);
    q.run();
}

std::optional<StoredScenario> ProjectFile::autosaved(const std::string& name) const {
    Statement q(db_, "SELECT name, document, positions, saved_utc FROM workbench_autosave WHERE name = ?", path_);
    q.bind(1, name);
    if (!q.next()) return std::nullopt;
    return read_row(q, path_);
}

void ProjectFile::autosave(const StoredScenario& s) {
    write_scenario("INSERT OR REPLACE INTO workbench_autosave (name, document, positions, saved_utc) VALUES (?, ?, ?, datetime('now'))", s, -1, "autosave");
}

void ProjectFile::clear_autosave(const std::string& name) {
    Statement q(db_, "DELETE FROM workbench_autosave WHERE name = ?", path_);
    q.bind(1, name);
    q.run();
}

std::optional<std::string> ProjectFile::setting(const std::string& key) const {
    Statement q(db_, "SELECT value FROM workbench_settings WHERE key = ?", path_);
    q.bind(1, key);
    if (!q.next()) return std::nullopt;
    return q.text(0);
}

void ProjectFile::set_setting(const std::string& key, const std::string& value) {
    Statement q(db_, "INSERT OR REPLACE INTO workbench_settings (key, value) VALUES (?, ?)", path_);
    q.bind(1, key);
    q.bind(2, value);
    q.run();
}

}  // namespace orrery::views
