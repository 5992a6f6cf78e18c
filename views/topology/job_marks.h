#pragma once
// Where the jobs of a mix (workload.kind "jobs") sit, as the canvas shows it: each server's GPUs coloured by the
// job that holds them (the engine's own placement, workload/placement.h), and the hosts of selected servers as a
// job's explicit placement ("hosts": ["0-7", "16-23"]).
#include <QColor>
#include <QString>
#include <QStringList>

#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/presets.h"
#include "views/topology/topology_doc.h"

namespace orrery::views {

struct JobMarks {
    std::map<uint64_t, std::vector<int>> gpu_job;  // per server box: per GPU the job holding it, -1 none
    QStringList names;                             // per job
    QString problem;                               // the placement's refusal, when it has one
    bool any() const { return !names.isEmpty(); }
};

// The jobs' placement on `doc`'s servers (GPU g of the k-th server box is the fabric's host of that order); empty
// when the scenario is not a mix or cannot be read.
JobMarks job_marks(const TopoDoc& doc, const nlohmann::json& scenario, const PresetLibrary& presets);

// A job's colour (by index), the same on the canvas and in the legend.
QColor job_color(int job);

// The host indices of the GPUs of `servers` (box ids), as ranges in host order: ["0-7", "16-23"].
nlohmann::json host_ranges_of(const TopoDoc& doc, const std::set<uint64_t>& servers);

}  // namespace orrery::views
