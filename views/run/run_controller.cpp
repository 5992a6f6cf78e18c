#include "views/run/run_controller.h"

#include <csignal>

#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <QPointer>
#include <QTimer>

namespace orrery::views {

RunController::RunController(QString cli_path, QObject* parent) : QObject(parent), cli_(std::move(cli_path)) {}

RunController::~RunController() {
    if (process_) {
        process_->kill();
        process_->waitForFinished(2000);
    }
}

bool RunController::start(const nlohmann::json& document, const QString& project_file, int threads, QString* why) {
    if (process_) {
        *why = "a run is already going on";
        return false;
    }
    const QString dir = QFileInfo(project_file).absolutePath();
    scenario_file_ = std::make_unique<QTemporaryFile>(dir + "/.orrery-run-XXXXXX.json");
    if (!scenario_file_->open()) {
        *why = "cannot write the scenario beside the project in " + dir + ": " + scenario_file_->errorString();
        return false;
    }
    scenario_file_->write(QByteArray::fromStdString(document.dump(2)));
    scenario_file_->flush();
    staging_ = scenario_file_->fileName().chopped(5) + ".sqlite";  // .orrery-run-XXXXXX.sqlite, named like its scenario
    progress_.clear();
    tail_.clear();
    pending_.clear();
    run_id_ = 0;
    cancelling_ = false;
    process_ = new QProcess(this);
    process_->setProgram(cli_);
    QStringList arguments{"run", scenario_file_->fileName(), "--out", staging_, "--threads", QString::number(threads), "--progress-json"};
    if (device_backend_) arguments << "--backend" << "device";
    process_->setArguments(arguments);
    process_->setProcessChannelMode(QProcess::SeparateChannels);
    // The engine runs niced: on a machine with few cores the workbench keeps its frame rate while it streams.
    process_->setChildProcessModifier([] {
        if (::nice(5) == -1) return;  // not fatal: the run goes on at normal priority
    });
    process_->setStandardOutputFile(QProcess::nullDevice());
    connect(process_, &QProcess::readyReadStandardError, this, &RunController::read_stderr);
    connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        read_stderr();
        if (!pending_.isEmpty()) handle_line(QString::fromUtf8(pending_));
        QString message;
        bool ok = false;
        if (status == QProcess::CrashExit && !cancelling_)
            message = "the engine crashed (" + process_->errorString() + "); its last words:\n" + tail_.join("\n");
        else if (cancelling_ || code == 130)
            message = "cancelled; the experiments that finished are kept in the project";
        else if (code != 0)
            message = QString("the engine stopped with exit code %1:\n").arg(code) + tail_.join("\n");
        else
            ok = true;
        for (auto& [id, p] : progress_)
            if (p.status == "running" || p.status == "pending") p.status = cancelling_ ? "cancelled" : "not run";
        process_->deleteLater();
        process_ = nullptr;
        scenario_file_.reset();
        emit progressed();
        emit finished(ok, message);
    });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart || !process_) return;
        const QString message = "cannot start " + cli_ + ": " + process_->errorString();
        process_->deleteLater();
        process_ = nullptr;
        scenario_file_.reset();
        emit finished(false, message);
    });
    clock_.start();
    process_->start();
    return true;
}

void RunController::cancel() {
    if (!process_ || cancelling_) return;
    cancelling_ = true;
    ::kill(pid_t(process_->processId()), SIGINT);
    QPointer<QProcess> p = process_;
    QTimer::singleShot(900, this, [p] {
        if (p && p->state() != QProcess::NotRunning) p->kill();
    });
}

void RunController::read_stderr() {
    if (!process_) return;
    pending_ += process_->readAllStandardError();
    int newline;
    while ((newline = pending_.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(pending_.left(newline));
        pending_.remove(0, newline + 1);
        handle_line(line);
    }
}

void RunController::handle_line(const QString& line) {
    if (!line.startsWith('{')) {
        if (line.isEmpty()) return;
        tail_ << line;
        if (tail_.size() > 20) tail_.removeFirst();
        emit logLine(line);
        return;
    }
    const nlohmann::json j = nlohmann::json::parse(line.toStdString(), nullptr, false);
    if (j.is_discarded() || !j.contains("event")) {
        emit logLine(line);
        return;
    }
    const std::string event = j["event"];
    const QString id = QString::fromStdString(j.value("experiment", std::string()));
    if (event == "run") {
        run_id_ = j.value("run_id", int64_t(0));
        for (int i = 0; i < j.value("experiments", 0); ++i) progress_[QString("e%1").arg(i, 4, 10, QChar('0'))];  // ids as the sweep numbers them
        emit started(run_id_, j.value("experiments", 0));
    } else if (event == "start") {
        progress_[id].status = "running";
    } else if (event == "progress") {
        ExperimentProgress& p = progress_[id];
        p.status = "running";
        const double flows = j.value("flows", 0.0);
        p.fraction = flows > 0 ? j.value("flows_done", 0.0) / flows : 0;
        p.wall_s = j.value("wall_s", 0.0);
        p.sim_time_s = j.value("sim_time_ps", 0.0) * 1e-12;
        p.eta_s = p.fraction > 0.02 ? p.wall_s * (1 - p.fraction) / p.fraction : -1;
    } else if (event == "done") {
        ExperimentProgress& p = progress_[id];
        p.status = QString::fromStdString(j.value("status", std::string("finished")));
        // An experiment stopped early (cancelled, failed, stalled) keeps the share it had reached.
        if (p.status == "finished" || p.status == "ok" || p.status == "oom") p.fraction = 1;
        p.wall_s = j.value("wall_s", 0.0);
        p.eta_s = -1;
        emit logLine(QString("%1: %2 in %3 s wall").arg(id, p.status).arg(p.wall_s, 0, 'f', 2));
    }
    emit progressed();
}

double RunController::overall_fraction() const {
    if (progress_.empty()) return 0;
    double sum = 0;
    for (const auto& [id, p] : progress_) sum += p.fraction;
    return sum / double(progress_.size());
}

double RunController::overall_eta_s() const {
    const double f = overall_fraction();
    if (!running() || cancelling_ || f < 0.02) return -1;  // nothing left to wait for
    const double elapsed = clock_.elapsed() / 1000.0;
    return elapsed * (1 - f) / f;
}

}  // namespace orrery::views
