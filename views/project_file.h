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

private:
    void exec(const std::string& sql) const;
    void write_scenario(const char* sql, const StoredScenario& s, int indent, const char* what);
    ::sqlite3* db_ = nullptr;
    std::filesystem::path path_;
};

}  // namespace orrery::views
