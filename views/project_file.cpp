#include "views/project_file.h"

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"

namespace orrery::views {
namespace {

struct Statement {
    Statement(sqlite3* db, const char* sql, const std::filesystem::path& file) {
        if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) throw InputError(file.string(), sqlite3_errmsg(db));
    }
    ~Statement() { sqlite3_finalize(s); }
    void bind(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); }
    std::string text(int i) const {
        const unsigned char* t = sqlite3_column_text(s, i);
        return t ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_stmt* s = nullptr;
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
    while (sqlite3_step(q.s) == SQLITE_ROW) out.push_back(read_row(q, path_));
    return out;
}

void ProjectFile::save_scenario(const StoredScenario& s) {
    Statement q(db_, "INSERT OR REPLACE INTO workbench_scenarios (name, document, positions, saved_utc) VALUES (?, ?, ?, datetime('now'))", path_);
    q.bind(1, s.name);
    q.bind(2, s.document.dump(2));
    q.bind(3, s.positions.dump());
    if (sqlite3_step(q.s) != SQLITE_DONE) throw InputError(path_.string(), std::string("cannot save the scenario: ") + sqlite3_errmsg(db_));
    clear_autosave(s.name);
}

void ProjectFile::remove_scenario(const std::string& name) {
    Statement q(db_, "DELETE FROM workbench_scenarios WHERE name = ?", path_);
    q.bind(1, name);
    sqlite3_step(q.s);
}

std::optional<StoredScenario> ProjectFile::autosaved(const std::string& name) const {
    Statement q(db_, "SELECT name, document, positions, saved_utc FROM workbench_autosave WHERE name = ?", path_);
    q.bind(1, name);
    if (sqlite3_step(q.s) != SQLITE_ROW) return std::nullopt;
    return read_row(q, path_);
}

void ProjectFile::autosave(const StoredScenario& s) {
    Statement q(db_, "INSERT OR REPLACE INTO workbench_autosave (name, document, positions, saved_utc) VALUES (?, ?, ?, datetime('now'))", path_);
    q.bind(1, s.name);
    q.bind(2, s.document.dump());
    q.bind(3, s.positions.dump());
    if (sqlite3_step(q.s) != SQLITE_DONE) throw InputError(path_.string(), std::string("cannot autosave: ") + sqlite3_errmsg(db_));
}

void ProjectFile::clear_autosave(const std::string& name) {
    Statement q(db_, "DELETE FROM workbench_autosave WHERE name = ?", path_);
    q.bind(1, name);
    sqlite3_step(q.s);
}

std::optional<std::string> ProjectFile::setting(const std::string& key) const {
    Statement q(db_, "SELECT value FROM workbench_settings WHERE key = ?", path_);
    q.bind(1, key);
    if (sqlite3_step(q.s) != SQLITE_ROW) return std::nullopt;
    return q.text(0);
}

void ProjectFile::set_setting(const std::string& key, const std::string& value) {
    Statement q(db_, "INSERT OR REPLACE INTO workbench_settings (key, value) VALUES (?, ?)", path_);
    q.bind(1, key);
    q.bind(2, value);
    sqlite3_step(q.s);
}

}  // namespace orrery::views
