#include "views/cluster_job.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpressionValidator>
#include <QSpinBox>

namespace orrery {

bool ask_cluster_job(QWidget* parent, ClusterJob& job) {
    QDialog dialog(parent);
    dialog.setWindowTitle("Export cluster job");
    auto* form = new QFormLayout(&dialog);
    auto spin = [&](int value, int max, const QString& name, const QString& tip) {
        auto* s = new QSpinBox(&dialog);
        s->setRange(1, max);
        s->setValue(value);
        s->setObjectName(name);
        s->setToolTip(tip);
        return s;
    };
    QSpinBox* nodes = spin(job.nodes, 100000, "cluster-nodes", "Cluster nodes the job asks Slurm for");
    QSpinBox* ranks = spin(job.ranks_per_node, 4096, "cluster-ranks-per-node", "MPI ranks per node; each runs one experiment at a time, or its share of each experiment when they are split");
    QSpinBox* threads = spin(job.threads, 1024, "cluster-threads", "CPU threads of each rank");
    auto* time = new QLineEdit(job.time_limit, &dialog);
    time->setObjectName("cluster-time");
    time->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]+:[0-5][0-9]:[0-5][0-9]"), time));
    time->setToolTip("Slurm's time limit, hours:minutes:seconds");
    form->addRow("Nodes", nodes);
    form->addRow("MPI ranks per node", ranks);
    form->addRow("Threads per rank", threads);
    form->addRow("Time limit (h:mm:ss)", time);
    auto* partition = new QCheckBox("Split each experiment over all ranks", &dialog);
    partition->setObjectName("cluster-partition");
    partition->setChecked(job.partition);
    partition->setToolTip("orrery-cli run --partition: each experiment's fabric is cut by pod over the ranks, which exchange boundary packets "
                          "every step (flow workloads without skipping; one thread per rank). Unchecked, ranks run whole experiments.");
    auto follow = [threads](bool split) {
        threads->setEnabled(!split);
        if (split) threads->setValue(1);
    };
    QObject::connect(partition, &QCheckBox::toggled, &dialog, follow);
    follow(job.partition);
    form->addRow("", partition);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted || !time->hasAcceptableInput()) return false;
    job.nodes = nodes->value();
    job.ranks_per_node = ranks->value();
    job.threads = threads->value();
    job.time_limit = time->text();
    job.partition = partition->isChecked();
    return true;
}

bool export_cluster_job(const QString& cli, const nlohmann::json& document, const QString& script, const ClusterJob& job, QString* done, QString* why) {
    const QFileInfo info(script);
    const QString base = info.absolutePath() + "/" + info.completeBaseName();
    const QString scenario = base + ".json";
    QFile out(scenario);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *why = "cannot write the scenario to " + scenario + ": " + out.errorString();
        return false;
    }
    out.write(QByteArray::fromStdString(document.dump(2) + "\n"));
    out.close();
    QStringList args = {"slurm", scenario, "--nodes", QString::number(job.nodes), "--ranks-per-node", QString::number(job.ranks_per_node), "--threads",
                        QString::number(job.threads), "--time", job.time_limit, "--out", base + ".sqlite", "-o", info.absoluteFilePath(), "--force"};
    if (job.partition) args << "--partition";
    QProcess p;
    p.start(cli, args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
        *why = err.isEmpty() ? "orrery-cli slurm did not finish (" + cli + ")" : err;
        return false;
    }
    *done = QString::fromUtf8(p.readAllStandardError()).trimmed() + " (scenario: " + scenario + ")";
    return true;
}

}  // namespace orrery
