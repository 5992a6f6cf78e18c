#include "telemetry/store_import.h"

#include <sqlite3.h>

#include "common/diagnostics.h"
#include "telemetry/results_store.h"
#include "telemetry/sqlite_query.h"

namespace orrery {
namespace {

void exec(sqlite3* db, const std::string& sql, const std::filesystem::path& file) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string text = message ? message : sqlite3_errmsg(db);
        sqlite3_free(message);
        throw InputError(file.string(), "copying a run into this store: " + text);
    }
}

// A statement on the two stores; one that cannot be prepared names the file written into.
struct Query : SqlQuery {
    Query(sqlite3* db, const std::string& sql, const std::filesystem::path& file) : SqlQuery(db, sql.c_str()) {
        if (!ok()) throw InputError(file.string(), "copying a run into this store: " + error());
    }
};

// Columns of a table of the attached store that the main store has too, in the main store's order.
std::vector<std::string> shared_columns(sqlite3* db, const std::string& table, const std::filesystem::path& file) {
    std::vector<std::string> out;
    Query theirs(db, "SELECT name FROM pragma_table_info(?1, 'staging')", file);
    theirs.bind(1, table);
    std::vector<std::string> staged;
    while (theirs.next()) staged.push_back(theirs.text(0));
    Query ours(db, "SELECT name FROM pragma_table_info(?1, 'main')", file);
    ours.bind(1, table);
    while (ours.next())
        for (const std::string& c : staged)
            if (c == ours.text(0)) out.push_back(c);
    return out;
}

}  // namespace

std::vector<int64_t> import_runs(sqlite3* into, const std::filesystem::path& into_file, const std::filesystem::path& from,
                                 const std::string& unfinished_status) {
    {   // The staging store must be a store this build reads; opening it also marks runs whose process is gone.
        ResultsStore check(from);
    }
    Query attach(into, "ATTACH DATABASE ?1 AS staging", into_file);
    attach.bind(1, from.string());
    attach.run();
    std::vector<int64_t> added;
    try {
        exec(into, "BEGIN IMMEDIATE", into_file);
        std::vector<std::string> tables;
        {
            Query t(into, "SELECT s.name FROM staging.sqlite_master s JOIN main.sqlite_master m ON m.name = s.name AND m.type = 'table' "
                                        "WHERE s.type = 'table' AND s.name NOT IN ('runs', 'orrery_store', 'sqlite_sequence') ORDER BY s.name",
                                  into_file);
            while (t.next()) tables.push_back(t.text(0));
        }
        std::vector<int64_t> staged_runs;
        {
            Query r(into, "SELECT run_id FROM staging.runs ORDER BY run_id", into_file);
            while (r.next()) staged_runs.push_back(r.integer(0));
        }
        std::vector<std::string> run_columns = shared_columns(into, "runs", into_file);
        std::erase(run_columns, std::string("run_id"));
        std::string run_list;
        for (const std::string& c : run_columns) run_list += (run_list.empty() ? "" : ", ") + ("\"" + c + "\"");
        for (int64_t old_id : staged_runs) {
            Query insert(into, "INSERT INTO main.runs (" + run_list + ") SELECT " + run_list + " FROM staging.runs WHERE run_id = ?1", into_file);
            insert.bind(1, old_id);
            insert.run();
            const int64_t new_id = sqlite3_last_insert_rowid(into);
            for (const std::string& table : tables) {
                const std::vector<std::string> columns = shared_columns(into, table, into_file);
                std::string names, values;
                for (const std::string& c : columns) {
                    names += (names.empty() ? "" : ", ") + ("\"" + c + "\"");
                    values += (values.empty() ? "" : ", ") + (c == "run_id" ? std::string("?2") : "\"" + c + "\"");
                }
                Query copy(into, "INSERT INTO main.\"" + table + "\" (" + names + ") SELECT " + values + " FROM staging.\"" + table +
                                                   "\" WHERE run_id = ?1",
                                         into_file);
                copy.bind(1, old_id).bind(2, new_id);
                copy.run();
            }
            Query status(into, "UPDATE main.runs SET status = ?2 WHERE run_id = ?1 AND status = 'running'", into_file);
            status.bind(1, new_id).bind(2, unfinished_status);
            status.run();
            Query experiments(into, "UPDATE main.experiments SET status = ?2 WHERE run_id = ?1 AND status IN ('pending', 'running')", into_file);
            experiments.bind(1, new_id).bind(2, unfinished_status);
            experiments.run();
            added.push_back(new_id);
        }
        exec(into, "COMMIT", into_file);
    } catch (...) {
        sqlite3_exec(into, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_exec(into, "DETACH DATABASE staging", nullptr, nullptr, nullptr);
        throw;
    }
    exec(into, "DETACH DATABASE staging", into_file);
    return added;
}

}  // namespace orrery
