#pragma once
// A project is one SQLite file: the engine's results store (runs, experiments, metrics, telemetry) plus the
// workbench's own tables — its scenarios with the positions of their boxes, an autosaved copy of unsaved
// edits, and settings such as the window layout. `orrery-cli run SCENARIO --out PROJECT` appends its runs
// to the same file, so results and the designs that made them travel together.
//
// workbench_scenarios(name PRIMARY KEY, document TEXT (scenario JSON), positions TEXT (JSON box name → [x, y]),
//                     saved_utc)
// workbench_autosave (same columns): the edits not yet saved, written every minute; offered back on open
// workbench_settings (key PRIMARY KEY, value)
//
// One writer per project: while the workbench has a project open, only this class writes it, through one
// SQLite connection and in transactions. Runs are written by their `orrery-cli` child into a staging store
// beside the project (.orrery-run-*.sqlite) and copied in when they end (import_runs). Another process
// writing the open project is what once corrupted it: a file dialog that reads the project's bytes to
// guess its type closes a descriptor of the file, which drops every POSIX lock the workbench held on it, and
// the child then took itself for the last user and deleted the WAL the workbench was still writing.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace orrery::views {

struct StoredScenario {
    std::string name;
    nlohmann::json document;
    nlohmann::json positions = nlohmann::json::object();
    std::string saved_utc;
};

class ProjectFile {
public:
    // Creates the file (a results store with the workbench's tables) or opens an existing project or results
    // store; throws InputError naming the file when it is something else.
    explicit ProjectFile(const std::filesystem::path& file);
    ~ProjectFile();
    ProjectFile(const ProjectFile&) = delete;
    ProjectFile& operator=(const ProjectFile&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::vector<StoredScenario> scenarios() const;
    void save_scenario(const StoredScenario& s);       // replaces the one of that name; clears its autosave
    void remove_scenario(const std::string& name);
    std::optional<StoredScenario> autosaved(const std::string& name) const;
    void autosave(const StoredScenario& s);
    void clear_autosave(const std::string& name);
    std::optional<std::string> setting(const std::string& key) const;
    void set_setting(const std::string& key, const std::string& value);
    // Copies the runs of a staging store (written by an `orrery-cli run` child) into the project in one
    // transaction on this connection; runs still `running` there take `unfinished_status`. Returns the new ids.
    std::vector<int64_t> import_runs(const std::filesystem::path& staging, const std::string& unfinished_status);

private:
    void exec(const std::string& sql) const;
    void write_scenario(const char* sql, const StoredScenario& s, int indent, const char* what);
    ::sqlite3* db_ = nullptr;
    std::filesystem::path path_;
};

}  // namespace orrery::views
