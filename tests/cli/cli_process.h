#pragma once
// Running the orrery-cli under test as a user would, from a folder: its exit code and what it printed.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace orrery::testing {

struct CliResult {
    int code;  // -1 when it crashed or did not end in 2 minutes
    QString out, err;
};

inline CliResult run_cli(const QStringList& args, const QString& dir) {
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(ORRERY_CLI, args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace orrery::testing
