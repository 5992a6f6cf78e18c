#include "telemetry/results_store.h"

#include <sqlite3.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <ctime>
#include <stdexcept>
#include <tuple>

#include "common/diagnostics.h"
#include "common/version.h"
#include "telemetry/packed_samples.h"
#include "wormhole/skipper.h"

namespace orrery {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS orrery_store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_utc TEXT NOT NULL, scenario_name TEXT, scenario_file TEXT, scenario_sha256 TEXT,
  engine_version TEXT NOT NULL, git_revision TEXT NOT NULL, backend TEXT NOT NULL, device TEXT, threads INTEGER,
  status TEXT NOT NULL, wall_seconds REAL);
CREATE TABLE IF NOT EXISTS experiments (
  run_id INTEGER NOT NULL REFERENCES runs(run_id), experiment TEXT NOT NULL, idx INTEGER NOT NULL, seed INTEGER NOT NULL,
  sha256 TEXT NOT NULL, status TEXT NOT NULL, message TEXT, sim_end_ps INTEGER, events INTEGER, packet_hops INTEGER,
  wall_seconds REAL, PRIMARY KEY (run_id, experiment));
CREATE TABLE IF NOT EXISTS parameters (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, path TEXT NOT NULL, value_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, name TEXT NOT NULL, value REAL, unit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS flows (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, flow INTEGER NOT NULL, src INTEGER, dst INTEGER, sport INTEGER,
  dport INTEGER, priority INTEGER, size_bytes INTEGER, start_ps INTEGER, finish_ps INTEGER, fct_ps INTEGER,
  standalone_fct_ps INTEGER, slowdown REAL, job INTEGER);
CREATE TABLE IF NOT EXISTS pfc (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, node INTEGER, node_type INTEGER,
  ifindex INTEGER, pause INTEGER);
CREATE TABLE IF NOT EXISTS queue_samples (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, node INTEGER, ifindex INTEGER, bytes INTEGER);
CREATE TABLE IF NOT EXISTS queue_tiers (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, tier INTEGER, ports INTEGER,
  max_bytes INTEGER, p99_bytes INTEGER, median_bytes INTEGER);
CREATE TABLE IF NOT EXISTS flow_rates (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, flow INTEGER, rate_bps INTEGER);
CREATE TABLE IF NOT EXISTS queue_sample_sets (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, ports INTEGER NOT NULL, packed BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS flow_rate_sets (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, flows INTEGER NOT NULL, total_bps INTEGER NOT NULL,
  packed BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS timeline (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, rank INTEGER NOT NULL, stream TEXT NOT NULL, task TEXT NOT NULL,
  kind TEXT NOT NULL, start_ps INTEGER NOT NULL, end_ps INTEGER NOT NULL, bytes INTEGER, peers TEXT,
  iteration INTEGER NOT NULL DEFAULT 0, job INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS skips (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, partition INTEGER NOT NULL, flows INTEGER NOT NULL,
  start_ps INTEGER NOT NULL, end_ps INTEGER NOT NULL, bytes INTEGER NOT NULL, events_saved INTEGER NOT NULL, from_memo INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memo_events (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, partition INTEGER NOT NULL, flows INTEGER NOT NULL,
  kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS uplink_tiers (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, tier INTEGER NOT NULL, uplinks INTEGER NOT NULL,
  busiest_permille INTEGER NOT NULL, mean_permille INTEGER NOT NULL, packed BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS fabric_counters (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, drops INTEGER NOT NULL, lost_to_failures INTEGER NOT NULL,
  retransmits INTEGER NOT NULL, timeouts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, job INTEGER NOT NULL, name TEXT NOT NULL, first_rank INTEGER NOT NULL,
  ranks INTEGER NOT NULL, hosts TEXT NOT NULL, start_ps INTEGER NOT NULL, iteration_time_s REAL, alone_iteration_time_s REAL, slowdown REAL,
  first_flow INTEGER NOT NULL, flows INTEGER NOT NULL, kind TEXT NOT NULL DEFAULT 'llm', leaves TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS fabric_events (
  run_id INTEGER NOT NULL, experiment TEXT NOT NULL, time_ps INTEGER NOT NULL, what TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS flows_by_experiment ON flows (run_id, experiment);
CREATE INDEX IF NOT EXISTS timeline_by_rank ON timeline (run_id, experiment, rank, start_ps);
CREATE INDEX IF NOT EXISTS queue_samples_by_time ON queue_samples (run_id, experiment, time_ps);
CREATE INDEX IF NOT EXISTS queue_tiers_by_time ON queue_tiers (run_id, experiment, time_ps);
CREATE INDEX IF NOT EXISTS queue_sample_sets_by_time ON queue_sample_sets (run_id, experiment, time_ps);
CREATE INDEX IF NOT EXISTS flow_rate_sets_by_time ON flow_rate_sets (run_id, experiment, time_ps);
)sql";

void exec(sqlite3* db, const char* sql, const std::filesystem::path& file) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : "unknown error";
        sqlite3_free(message);
        throw InputError(file.string(), "results store: " + text);
    }
}

// A prepared statement bound by position and stepped once per row.
struct Statement {
    sqlite3_stmt* s = nullptr;
    Statement(sqlite3* db, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) throw InputError(sqlite3_db_filename(db, "main"), std::string("results store: ") + sqlite3_errmsg(db));
    }
    ~Statement() { sqlite3_finalize(s); }
    Statement& bind(int i, int64_t v) { sqlite3_bind_int64(s, i, v); return *this; }
    Statement& bind(int i, double v) { sqlite3_bind_double(s, i, v); return *this; }
    Statement& bind(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); return *this; }
    Statement& null(int i) { sqlite3_bind_null(s, i); return *this; }
    Statement& blob(int i, const std::string& v) { sqlite3_bind_blob(s, i, v.data(), int(v.size()), SQLITE_TRANSIENT); return *this; }
    Statement& bind_value(int i, const sqlite3_value* v) { sqlite3_bind_value(s, i, v); return *this; }
    // For reading: true while there is a row.
    bool step() {
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw InputError(sqlite3_db_filename(sqlite3_db_handle(s), "main"), std::string("results store: ") + sqlite3_errmsg(sqlite3_db_handle(s)));
    }
    const sqlite3_value* value(int column) const { return sqlite3_column_value(s, column); }
    std::string text(int column) const {
        const unsigned char* t = sqlite3_column_text(s, column);
        return t ? reinterpret_cast<const char*>(t) : "";
    }
    void row() {
        if (sqlite3_step(s) != SQLITE_DONE) throw InputError(sqlite3_db_filename(sqlite3_db_handle(s), "main"), std::string("results store: ") + sqlite3_errmsg(sqlite3_db_handle(s)));
        sqlite3_reset(s);
    }
};

std::string this_host() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

// When the process started, in clock ticks since boot (/proc/PID/stat field 22): with the pid it names one
// process, so a pid reused by another process is not taken for the run's. -1 when unknown.
int64_t process_start_ticks(int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) return -1;
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i)
        if (i == 22) return std::stoll(field);
    return -1;
}

// A process that has exited but is not yet reaped (a zombie, state Z in /proc/PID/stat) runs nothing.
bool zombie(int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

bool process_alive(int64_t pid, int64_t started) {
    if (pid <= 0) return false;
    if (::kill(pid_t(pid), 0) != 0 && errno != EPERM) return false;
    if (zombie(pid)) return false;
    return started < 0 || process_start_ticks(pid) == started;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

int64_t pragma_integer(sqlite3* db, const char* sql) {
    sqlite3_stmt* q = nullptr;
    int64_t value = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) value = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return value;
}

// A SQLite file is whole pages; one cut short (a copy broken off, a full disk) is damaged even where
// quick_check reads its last page as zeros.
std::string cut_short_problem(sqlite3* db, const std::filesystem::path& file) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(file, ec);
    const int64_t page = pragma_integer(db, "PRAGMA page_size");
    if (ec || page <= 0 || size % uintmax_t(page) == 0) return "";
    return "its size (" + std::to_string(size) + " bytes) is not a whole number of its " + std::to_string(page) + "-byte pages: the file was cut short";
}

}  // namespace

ResultsStore::ResultsStore(const std::filesystem::path& file) : file_(file) {
    if (sqlite3_open_v2(file.string().c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        throw InputError(file.string(), "cannot open the results store: " + why);
    }
    sqlite3_busy_timeout(db_, 30000);
    auto refuse = [&](const std::string& why) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(db_);
        db_ = nullptr;
        throw InputError(file.string(), why);
    };
    // Checking what is there and creating the tables is one write transaction, taken before the first read:
    // a second process creating the same store waits for it (busy timeout) and then finds a whole store,
    // never a half-created one it would call foreign.
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
        refuse(std::string("cannot be used as an Orrery results store or project (") + sqlite3_errmsg(db_) + "): choose another file");
    // An existing database must be an Orrery store (or empty): never write into someone else's file.
    int existing = 0;
    sqlite3_stmt* tables = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1, &tables, nullptr) != SQLITE_OK) {
        const std::string why = sqlite3_errmsg(db_);  // e.g. "file is not a database": some other file is there
        refuse("cannot be used as an Orrery results store or project (" + why + "): choose another file");
    }
    if (sqlite3_step(tables) == SQLITE_ROW) existing = sqlite3_column_int(tables, 0);
    sqlite3_finalize(tables);
    if (existing > 0) {
        if (const std::string why = not_a_store_problem(db_); !why.empty()) refuse(why + ": not appending to it");
        // A damaged file is refused before anything is written into it.
        std::string verdict = cut_short_problem(db_, file);
        if (verdict.empty()) {
            sqlite3_stmt* check = nullptr;
            verdict = "ok";
            if (sqlite3_prepare_v2(db_, "PRAGMA quick_check", -1, &check, nullptr) == SQLITE_OK && sqlite3_step(check) == SQLITE_ROW)
                verdict = reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
            else
                verdict = sqlite3_errmsg(db_);
            sqlite3_finalize(check);
            if (verdict == "ok") verdict.clear();
        }
        if (!verdict.empty())
            refuse("the results store is damaged (" + verdict + "): not appending to it; keep a copy and run 'sqlite3 " + file.string() +
                   " .recover' to salvage what it holds");
    }
    try {
        exec(db_, kSchema, file_);
        add_missing_columns();
        // A store of an older schema (refused above if newer) now holds rows only this one reads: it takes this version.
        const std::string facts = "INSERT OR IGNORE INTO orrery_store VALUES ('format', 'orrery-results'); "
                                  "INSERT OR REPLACE INTO orrery_store VALUES ('schema_version', '" + std::to_string(schema_version()) + "');";
        exec(db_, facts.c_str(), file_);
        exec(db_, "COMMIT;", file_);
    } catch (const InputError& e) {
        refuse(e.diagnostics().items().empty() ? "results store: cannot create its tables" : e.diagnostics().items().front().message);
    }
    switch_to_wal();
    exec(db_, "PRAGMA synchronous = NORMAL;", file_);
    thread_ = std::thread([this] { writer(); });
    mark_interrupted_runs();
}

// SQLite switches a file to WAL under a read lock it then upgrades, and answers SQLITE_BUSY at once, without
// the busy handler, while another process holds a lock (a second run creating the same store at the same
// moment): the switch is retried here for as long as the busy timeout would have waited.
void ResultsStore::switch_to_wal() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        sqlite3_stmt* q = nullptr;
        int rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode = WAL", -1, &q, nullptr);
        if (rc == SQLITE_OK) rc = sqlite3_step(q);
        sqlite3_finalize(q);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) return;
        if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
            throw InputError(file_.string(), std::string("results store: cannot switch to write-ahead logging: ") + sqlite3_errmsg(db_));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

std::string ResultsStore::newer_schema_problem(sqlite3* db) {
    sqlite3_stmt* v = nullptr;
    std::string text;
    bool found = false;
    if (sqlite3_prepare_v2(db, "SELECT value FROM orrery_store WHERE key = 'schema_version'", -1, &v, nullptr) == SQLITE_OK && sqlite3_step(v) == SQLITE_ROW) {
        found = true;
        const unsigned char* t = sqlite3_column_text(v, 0);
        text = t ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_finalize(v);
    if (!found) return "has no schema_version in its orrery_store table: it is damaged or was not written by Orrery";
    const bool digits = !text.empty() && text.size() <= 9 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int version = digits ? std::atoi(text.c_str()) : 0;
    if (version < 1)
        return "has the schema_version \"" + text + "\", which no Orrery writes (a positive integer): the store is damaged";
    if (version <= schema_version()) return "";
    return "was written by a newer Orrery (results store schema version " + std::to_string(version) + "; this build knows version " +
           std::to_string(schema_version()) + ")";
}

std::string ResultsStore::not_a_store_problem(sqlite3* db) {
    sqlite3_stmt* check = nullptr;
    bool ours = false;
    if (sqlite3_prepare_v2(db, "SELECT value FROM orrery_store WHERE key = 'format'", -1, &check, nullptr) == SQLITE_OK && sqlite3_step(check) == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(check, 0);
        ours = t && std::string(reinterpret_cast<const char*>(t)) == "orrery-results";
    }
    sqlite3_finalize(check);
    if (!ours) return "is a SQLite database but not an Orrery results store or project (one written by the workbench or by orrery-cli run)";
    return newer_schema_problem(db);
}

void ResultsStore::add_missing_columns() {
    // Stores written before a column existed gain it, with its default, instead of failing every insert. One row
    // per column added since a table first shipped: (table, column and its declaration).
    static const std::pair<const char*, const char*> kAdded[] = {
        {"timeline", "iteration INTEGER NOT NULL DEFAULT 0"},
        {"timeline", "job INTEGER NOT NULL DEFAULT 0"},
        {"flows", "job INTEGER"},
        {"jobs", "first_flow INTEGER NOT NULL DEFAULT 0"},
        {"jobs", "flows INTEGER NOT NULL DEFAULT 0"},
        {"jobs", "kind TEXT NOT NULL DEFAULT 'llm'"},
        {"jobs", "leaves TEXT NOT NULL DEFAULT ''"},
        // Who runs it: an interrupted run is one whose process is gone (mark_interrupted_runs).
        {"runs", "host TEXT"},
        {"runs", "pid INTEGER"},
        {"runs", "pid_started INTEGER"},
        {"runs", "ranks INTEGER NOT NULL DEFAULT 1"},
        {"runs", "scenario_json TEXT"},
    };
    std::map<std::string, std::set<std::string>> columns;  // per table, the columns it has
    for (const auto& [table, column] : kAdded) {
        auto [it, fresh] = columns.emplace(table, std::set<std::string>{});
        if (fresh) {
            sqlite3_stmt* info = nullptr;
            if (sqlite3_prepare_v2(db_, ("PRAGMA table_info(" + std::string(table) + ")").c_str(), -1, &info, nullptr) == SQLITE_OK)
                while (sqlite3_step(info) == SQLITE_ROW) it->second.insert(reinterpret_cast<const char*>(sqlite3_column_text(info, 1)));
            sqlite3_finalize(info);
        }
        const std::string declaration = column;
        if (!it->second.count(declaration.substr(0, declaration.find(' '))))
            exec(db_, ("ALTER TABLE " + std::string(table) + " ADD COLUMN " + declaration + ";").c_str(), file_);
    }
}

ResultsStore::~ResultsStore() {
    {
        std::lock_guard<std::mutex> g(lock_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (db_) sqlite3_close(db_);
}

void ResultsStore::post(std::function<void(sqlite3*)> job, std::function<void()> committed) {
    {
        std::lock_guard<std::mutex> g(lock_);
        if (!error_.empty()) throw InputError(file_.string(), "results store: " + error_);
        jobs_.push_back({std::move(job), std::move(committed)});
    }
    wake_.notify_one();
}

void ResultsStore::writer() {
    for (;;) {
        std::deque<Job> batch;
        {
            std::unique_lock<std::mutex> g(lock_);
            wake_.wait(g, [this] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty() && stopping_) return;
            batch.swap(jobs_);
            in_flight_ = batch.size();
        }
        // One transaction per batch of jobs: what is committed survives a crash of the run.
        try {
            // Immediate: the write lock is taken (waiting on the busy timeout) before the first read, so a
            // transaction never has to upgrade a read lock another process's write has made stale.
            if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_));
            for (auto& job : batch) job.write(db_);
            if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_));
            for (auto& job : batch)
                if (job.committed) job.committed();
        } catch (const std::exception& e) {
            sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
            std::lock_guard<std::mutex> g(lock_);
            error_ = e.what();
        }
        {
            std::lock_guard<std::mutex> g(lock_);
            in_flight_ = 0;
        }
        drained_.notify_all();
    }
}

void ResultsStore::flush() {
    std::unique_lock<std::mutex> g(lock_);
    drained_.wait(g, [this] { return jobs_.empty() && in_flight_ == 0; });
    if (!error_.empty()) throw InputError(file_.string(), "results store: " + error_);
}

int64_t ResultsStore::begin_run(const RunRecord& run, const std::vector<ExperimentRecord>& experiments) {
    // The run row is written synchronously: its id keys everything that follows.
    Statement insert(db_, "INSERT INTO runs (started_utc, scenario_name, scenario_file, scenario_sha256, engine_version, git_revision, "
                          "backend, device, threads, status, host, pid, pid_started, ranks, scenario_json) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)");
    insert.bind(1, utc_now()).bind(2, run.scenario_name).bind(3, run.scenario_file).bind(4, run.scenario_sha256).bind(5, version())
        .bind(6, git_revision()).bind(7, run.backend).bind(8, run.device).bind(9, int64_t(run.threads)).bind(10, this_host())
        .bind(11, int64_t(::getpid())).bind(12, process_start_ticks(::getpid())).bind(13, int64_t(run.ranks));
    if (run.scenario_json.empty()) insert.null(14);
    else insert.bind(14, run.scenario_json);
    insert.row();
    run_id_ = sqlite3_last_insert_rowid(db_);
    const int64_t id = run_id_;
    post([id, experiments](sqlite3* db) {
        Statement e(db, "INSERT INTO experiments (run_id, experiment, idx, seed, sha256, status) VALUES (?, ?, ?, ?, ?, 'pending')");
        Statement p(db, "INSERT INTO parameters VALUES (?, ?, ?, ?)");
        for (const ExperimentRecord& x : experiments) {
            e.bind(1, id).bind(2, x.id).bind(3, int64_t(x.index)).bind(4, int64_t(x.seed)).bind(5, x.sha256).row();
            for (const auto& param : x.parameters)
                p.bind(1, id).bind(2, x.id).bind(3, param["path"].get<std::string>()).bind(4, param["value"].dump()).row();
        }
    });
    return run_id_;
}

void ResultsStore::experiment_started(const std::string& experiment) {
    const int64_t id = run_id_;
    post([id, experiment](sqlite3* db) {
        Statement(db, "UPDATE experiments SET status = 'running' WHERE run_id = ? AND experiment = ?").bind(1, id).bind(2, experiment).row();
    });
}

void ResultsStore::experiment_finished(const std::string& experiment, const std::string& status, const std::string& message,
                                       int64_t sim_end_ps, uint64_t events, uint64_t packet_hops, double wall_seconds,
                                       std::vector<FlowRow> flows, std::vector<std::tuple<int64_t, uint32_t, uint32_t, uint32_t, uint32_t>> pfc,
                                       std::vector<std::tuple<std::string, double, std::string>> metrics,
                                       std::function<void()> committed) {
    const int64_t id = run_id_;
    post([=, flows = std::move(flows), pfc = std::move(pfc), metrics = std::move(metrics)](sqlite3* db) {
        Statement(db, "UPDATE experiments SET status = ?, message = ?, sim_end_ps = ?, events = ?, packet_hops = ?, wall_seconds = ? "
                      "WHERE run_id = ? AND experiment = ?")
            .bind(1, status).bind(2, message).bind(3, sim_end_ps).bind(4, int64_t(events)).bind(5, int64_t(packet_hops))
            .bind(6, wall_seconds).bind(7, id).bind(8, experiment).row();
        Statement f(db, "INSERT INTO flows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)");
        for (const FlowRow& r : flows) {
            f.bind(1, id).bind(2, experiment).bind(3, int64_t(r.flow)).bind(4, int64_t(r.src)).bind(5, int64_t(r.dst))
                .bind(6, int64_t(r.sport)).bind(7, int64_t(r.dport)).bind(8, int64_t(r.priority)).bind(9, int64_t(r.size_bytes))
                .bind(10, r.start_ps).bind(13, r.standalone_fct_ps);
            if (r.finish_ps >= 0) {
                f.bind(11, r.finish_ps).bind(12, r.finish_ps - r.start_ps).bind(14, double(r.finish_ps - r.start_ps) / double(r.standalone_fct_ps));
            } else {
                f.null(11).null(12).null(14);
            }
            f.row();
        }
        // A mix of jobs: each flow's job from the ranges its jobs rows (stored before) give.
        Statement(db, "UPDATE flows SET job = (SELECT j.job FROM jobs j WHERE j.run_id = flows.run_id AND j.experiment = flows.experiment AND "
                      "flows.flow >= j.first_flow AND flows.flow < j.first_flow + j.flows) WHERE run_id = ? AND experiment = ? AND "
                      "EXISTS (SELECT 1 FROM jobs WHERE run_id = ? AND experiment = ?)")
            .bind(1, id).bind(2, experiment).bind(3, id).bind(4, experiment).row();
        Statement p(db, "INSERT INTO pfc VALUES (?, ?, ?, ?, ?, ?, ?)");
        for (const auto& [t, node, type, ifindex, pause] : pfc)
            p.bind(1, id).bind(2, experiment).bind(3, t).bind(4, int64_t(node)).bind(5, int64_t(type)).bind(6, int64_t(ifindex))
                .bind(7, int64_t(pause)).row();
        Statement m(db, "INSERT INTO metrics VALUES (?, ?, ?, ?, ?)");
        for (const auto& [name, value, unit] : metrics) m.bind(1, id).bind(2, experiment).bind(3, name).bind(4, value).bind(5, unit).row();
    }, std::move(committed));
}

void ResultsStore::samples(const std::string& experiment, int64_t time_ps, std::vector<QueueSample> queues, std::vector<TierSample> tiers,
                           std::vector<RateSample> rates) {
    const int64_t id = run_id_;
    // Packed on the run's thread, not the writer's: the writer serves every experiment of the run.
    const size_t ports = queues.size(), flows = rates.size();
    uint64_t total_bps = 0;
    for (const RateSample& r : rates) total_bps += r.rate_bps;
    std::string packed_queues = queues.empty() ? std::string() : pack_queue_samples(std::move(queues));
    std::string packed_rates = rates.empty() ? std::string() : pack_rate_samples(std::move(rates));
    post([=, tiers = std::move(tiers), packed_queues = std::move(packed_queues), packed_rates = std::move(packed_rates)](sqlite3* db) {
        if (ports)
            Statement(db, "INSERT INTO queue_sample_sets VALUES (?, ?, ?, ?, ?)")
                .bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, int64_t(ports)).blob(5, packed_queues).row();
        Statement t(db, "INSERT INTO queue_tiers VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const TierSample& s : tiers)
            t.bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, int64_t(s.tier)).bind(5, int64_t(s.ports))
                .bind(6, int64_t(s.max_bytes)).bind(7, int64_t(s.p99_bytes)).bind(8, int64_t(s.median_bytes)).row();
        if (flows)
            Statement(db, "INSERT INTO flow_rate_sets VALUES (?, ?, ?, ?, ?, ?)")
                .bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, int64_t(flows)).bind(5, int64_t(total_bps)).blob(6, packed_rates).row();
    });
}

void ResultsStore::timeline(const std::string& experiment, std::vector<TimelineRow> rows) {
    const int64_t id = run_id_;
    post([=, rows = std::move(rows)](sqlite3* db) {
        Statement t(db, "INSERT INTO timeline (run_id, experiment, rank, stream, task, kind, start_ps, end_ps, bytes, peers, iteration, job) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const TimelineRow& r : rows)
            t.bind(1, id).bind(2, experiment).bind(3, int64_t(r.rank)).bind(4, r.stream).bind(5, r.task).bind(6, r.kind).bind(7, r.start_ps)
                .bind(8, r.end_ps).bind(9, r.bytes).bind(10, r.peers).bind(11, int64_t(r.iteration)).bind(12, int64_t(r.job)).row();
    });
}

void ResultsStore::jobs(const std::string& experiment, std::vector<JobRow> rows) {
    const int64_t id = run_id_;
    post([=, rows = std::move(rows)](sqlite3* db) {
        Statement(db, "DELETE FROM jobs WHERE run_id = ? AND experiment = ?").bind(1, id).bind(2, experiment).row();
        Statement t(db, "INSERT INTO jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const JobRow& r : rows)
            t.bind(1, id).bind(2, experiment).bind(3, int64_t(r.job)).bind(4, r.name).bind(5, int64_t(r.first_rank)).bind(6, int64_t(r.ranks))
                .bind(7, r.hosts).bind(8, r.start_ps).bind(9, r.iteration_time_s).bind(10, r.alone_iteration_time_s).bind(11, r.slowdown)
                .bind(12, int64_t(r.first_flow)).bind(13, int64_t(r.flows)).bind(14, r.kind).bind(15, r.leaves).row();
    });
}

void ResultsStore::fabric_samples(const std::string& experiment, int64_t time_ps, std::vector<UplinkUtilization> uplinks, FabricCounters counters) {
    const int64_t id = run_id_;
    struct Packed {
        int tier;
        size_t uplinks;
        int64_t busiest, mean;
        std::string blob;
    };
    std::vector<Packed> packed;
    for (const UplinkUtilization& u : uplinks) {
        if (u.permille.empty()) continue;
        std::vector<RateSample> entries;  // (uplink index, utilization): the flow-rate packing's varints
        int64_t busiest = 0, sum = 0;
        for (size_t i = 0; i < u.permille.size(); ++i) {
            entries.push_back({uint32_t(i), u.permille[i]});
            busiest = std::max<int64_t>(busiest, u.permille[i]), sum += u.permille[i];
        }
        packed.push_back({u.tier, u.permille.size(), busiest, (sum + int64_t(u.permille.size()) / 2) / int64_t(u.permille.size()), pack_rate_samples(std::move(entries))});
    }
    post([=, packed = std::move(packed)](sqlite3* db) {
        Statement t(db, "INSERT INTO uplink_tiers VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const Packed& p : packed)
            t.bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, int64_t(p.tier)).bind(5, int64_t(p.uplinks)).bind(6, p.busiest).bind(7, p.mean)
                .blob(8, p.blob).row();
        Statement(db, "INSERT INTO fabric_counters VALUES (?, ?, ?, ?, ?, ?, ?)")
            .bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, int64_t(counters.drops)).bind(5, int64_t(counters.lost_to_failures))
            .bind(6, int64_t(counters.retransmits)).bind(7, int64_t(counters.timeouts)).row();
    });
}

void ResultsStore::fabric_events(const std::string& experiment, std::vector<std::pair<int64_t, std::string>> events) {
    const int64_t id = run_id_;
    post([=, events = std::move(events)](sqlite3* db) {
        Statement t(db, "INSERT INTO fabric_events VALUES (?, ?, ?, ?)");
        for (const auto& [time_ps, what] : events) t.bind(1, id).bind(2, experiment).bind(3, time_ps).bind(4, what).row();
    });
}

namespace {
std::string memo_kind(wormhole::MemoRecord::Kind kind) {
    switch (kind) {
        case wormhole::MemoRecord::kHit: return "hit";
        case wormhole::MemoRecord::kMiss: return "miss";
        case wormhole::MemoRecord::kStored: return "stored";
        case wormhole::MemoRecord::kFollow: return "follow";
    }
    return "?";
}
}  // namespace

void ResultsStore::skipping(const std::string& experiment, const wormhole::SkipReport& report) {
    const int64_t id = run_id_;
    post([=, skips = report.skips, memo = report.memo](sqlite3* db) {
        Statement t(db, "INSERT INTO skips VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const wormhole::SkipRecord& r : skips)
            t.bind(1, id).bind(2, experiment).bind(3, int64_t(r.partition)).bind(4, int64_t(r.flows)).bind(5, r.start_ps).bind(6, r.end_ps)
                .bind(7, int64_t(r.bytes)).bind(8, int64_t(r.events_saved)).bind(9, int64_t(r.from_memo)).row();
        Statement m(db, "INSERT INTO memo_events VALUES (?, ?, ?, ?, ?, ?)");
        for (const wormhole::MemoRecord& r : memo)
            m.bind(1, id).bind(2, experiment).bind(3, r.time_ps).bind(4, int64_t(r.partition)).bind(5, int64_t(r.flows))
                .bind(6, memo_kind(r.kind)).row();
    });
}

void ResultsStore::merge_experiment(const std::filesystem::path& other, const std::string& experiment, std::function<void()> committed) {
    const int64_t id = run_id_;
    post([=](sqlite3* db) {
        sqlite3* src = nullptr;
        if (sqlite3_open_v2(other.c_str(), &src, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            const std::string why = src ? sqlite3_errmsg(src) : "out of memory";
            sqlite3_close(src);
            throw std::runtime_error(other.string() + ": " + why);
        }
        try {
            // The experiment's row: what the rank's run recorded when it finished.
            Statement read(src, "SELECT status, message, sim_end_ps, events, packet_hops, wall_seconds FROM experiments WHERE experiment = ?");
            read.bind(1, experiment);
            if (!read.step()) throw std::runtime_error(other.string() + ": no experiment " + experiment);
            Statement update(db, "UPDATE experiments SET status = ?, message = ?, sim_end_ps = ?, events = ?, packet_hops = ?, wall_seconds = ? "
                                 "WHERE run_id = ? AND experiment = ?");
            for (int c = 0; c < 6; ++c) update.bind_value(c + 1, read.value(c));
            update.bind(7, id).bind(8, experiment).row();
            // Every table keyed by run and experiment, but the ones begin_run wrote here already.
            std::vector<std::string> tables;
            Statement list(src, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
            while (list.step()) tables.push_back(list.text(0));
            for (const std::string& table : tables) {
                if (table == "runs" || table == "experiments" || table == "parameters") continue;
                std::vector<std::string> columns;
                Statement info(src, ("PRAGMA table_info(" + table + ")").c_str());
                while (info.step()) columns.push_back(info.text(1));
                if (columns.empty() || columns[0] != "run_id" || std::find(columns.begin(), columns.end(), "experiment") == columns.end()) continue;
                std::string names, marks;
                for (size_t c = 0; c < columns.size(); ++c) names += (c ? ", " : "") + columns[c], marks += c ? ", ?" : "?";
                Statement rows(src, ("SELECT " + names + " FROM " + table + " WHERE experiment = ? ORDER BY rowid").c_str());
                rows.bind(1, experiment);
                Statement insert(db, ("INSERT INTO " + table + " (" + names + ") VALUES (" + marks + ")").c_str());
                while (rows.step()) {
                    insert.bind(1, id);
                    for (size_t c = 1; c < columns.size(); ++c) insert.bind_value(int(c + 1), rows.value(int(c)));
                    insert.row();
                }
            }
        } catch (...) {
            sqlite3_close(src);
            throw;
        }
        sqlite3_close(src);
    }, std::move(committed));
}

void ResultsStore::end_run(const std::string& status, double wall_seconds) {
    const int64_t id = run_id_;
    post([=](sqlite3* db) {
        Statement(db, "UPDATE runs SET status = ?, wall_seconds = ? WHERE run_id = ?").bind(1, status).bind(2, wall_seconds).bind(3, id).row();
        if (status != "finished")
            Statement(db, "UPDATE experiments SET status = ? WHERE run_id = ? AND status IN ('pending', 'running')").bind(1, status).bind(2, id).row();
    });
    flush();
}

int ResultsStore::mark_interrupted_runs() {
    flush();
    const std::string host = this_host();
    std::vector<int64_t> gone;
    {
        Statement q(db_, "SELECT run_id, host, pid, pid_started FROM runs WHERE status = 'running'");
        while (sqlite3_step(q.s) == SQLITE_ROW) {
            const char* h = reinterpret_cast<const char*>(sqlite3_column_text(q.s, 1));
            // A run from before these columns, or from another host, is left as it is: nothing says it ended.
            if (!h || host != h || sqlite3_column_type(q.s, 2) == SQLITE_NULL) continue;
            const int64_t pid = sqlite3_column_int64(q.s, 2), started = sqlite3_column_int64(q.s, 3);
            if (!process_alive(pid, started)) gone.push_back(sqlite3_column_int64(q.s, 0));
        }
    }
    exec(db_, "BEGIN IMMEDIATE", file_);
    for (int64_t id : gone) {
        Statement(db_, "UPDATE runs SET status = 'interrupted' WHERE run_id = ?").bind(1, id).row();
        Statement(db_, "UPDATE experiments SET status = 'interrupted' WHERE run_id = ? AND status IN ('pending', 'running')").bind(1, id).row();
    }
    exec(db_, "COMMIT", file_);
    return int(gone.size());
}

}  // namespace orrery
