#pragma once
// File ▸ Export cluster job…: the project's scenario and an sbatch script that runs its sweep over MPI ranks
// on a Slurm cluster, written by `orrery-cli slurm` (so the script is the one the CLI documents). Offered by
// builds with MPI only: without it the CLI would run the whole sweep once per rank.
#include <QString>
#include <QWidget>

#include <nlohmann/json.hpp>

namespace orrery {

struct ClusterJob {
    int nodes = 1, ranks_per_node = 1, threads = 1;
    QString time_limit = "01:00:00";  // HH:MM:SS
    bool partition = false;           // each experiment split over all ranks (orrery-cli run --partition); threads 1
};

// Asks for the job's shape; false when the user cancels.
bool ask_cluster_job(QWidget* parent, ClusterJob& job);

// Writes `document` as SCRIPT's name with .json beside `script`, then the script through `cli` (`orrery-cli
// slurm`), its results store named like the script with .sqlite. On success `done` says what was written and
// how to submit it; else `why` holds the CLI's error (the scenario as the cluster would refuse it).
bool export_cluster_job(const QString& cli, const nlohmann::json& document, const QString& script, const ClusterJob& job, QString* done, QString* why);

}  // namespace orrery
