#pragma once
// Runs the scenario in a child `orrery-cli run … --out STAGING --progress-json` process, so a crash or a cancel never takes
// the workbench down: progress per experiment (fraction of flows done, ETA), the run id in the project's
// store, the log, and Cancel (SIGINT, which the CLI turns into "stop and keep what finished"; killed if it
// has not exited within 0.9 s).
#include <map>

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryFile>
#include <memory>
#include <nlohmann/json.hpp>

namespace orrery::views {

struct ExperimentProgress {
    QString status = "pending";   // pending, running, then the CLI's status (finished, ok, oom, cancelled, …)
    double fraction = 0;          // flows finished / flows
    double wall_s = 0;
    double sim_time_s = 0;
    double eta_s = -1;            // -1: unknown
};

class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QString cli_path, QObject* parent = nullptr);
    ~RunController() override;
    bool running() const { return process_ != nullptr; }
    // Writes `document` beside the project (relative paths in it resolve there) and starts the run.
    // Returns false with `why` when the process cannot start.
    bool start(const nlohmann::json& document, const QString& project_file, int threads, QString* why);
    // Runs from now on step on the build's device backend (orrery-cli run --backend device) or on CPU threads.
    void set_device_backend(bool on) { device_backend_ = on; }
    bool device_backend() const { return device_backend_; }
    void cancel();
    int64_t run_id() const { return run_id_; }
    const std::map<QString, ExperimentProgress>& progress() const { return progress_; }
    // Forgets the last run's progress (another project was opened); nothing while a run is going.
    void forget_progress() {
        if (!process_) progress_.clear();
    }
    double overall_fraction() const;
    double overall_eta_s() const;  // -1 when unknown or when the run is over or being cancelled
    const QString& cli_path() const { return cli_; }
    // The store the child writes (beside the project, .orrery-run-*.sqlite): the project itself is written
    // by the workbench alone, which copies the run in when it ends (ProjectFile::import_runs).
    const QString& staging_store() const { return staging_; }
    // What a run the child left `running` ended as: it was cancelled, or it failed or crashed.
    QString unfinished_status() const { return cancelling_ ? "cancelled" : "failed"; }

signals:
    void started(qint64 run_id, int experiments);
    void progressed();
    void logLine(QString line);
    // ok: the run ended by itself (every experiment has its status); otherwise `message` says why
    // (cancelled, or the engine failed / crashed with its last words).
    void finished(bool ok, QString message);

private:
    void read_stderr();
    void handle_line(const QString& line);
    QString cli_;
    bool device_backend_ = false;
    QProcess* process_ = nullptr;
    std::unique_ptr<QTemporaryFile> scenario_file_;
    QString staging_;
    QByteArray pending_;
    QStringList tail_;
    std::map<QString, ExperimentProgress> progress_;
    int64_t run_id_ = 0;
    bool cancelling_ = false;
    QElapsedTimer clock_;
};

}  // namespace orrery::views
