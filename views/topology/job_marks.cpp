#include "views/topology/job_marks.h"

#include "scenario/build.h"
#include "scenario/load.h"
#include "workload/placement.h"

namespace orrery::views {

QColor job_color(int job) {
    static const QColor palette[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),  QColor(214, 39, 40),
                                     QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(23, 190, 207)};
    return palette[size_t(job) % (sizeof palette / sizeof palette[0])];
}

JobMarks job_marks(const TopoDoc& doc, const nlohmann::json& scenario, const PresetLibrary& presets) {
    JobMarks marks;
    if (!scenario.contains("workload") || !scenario["workload"].is_object() || scenario["workload"].value("kind", "") != "jobs") return marks;
    nlohmann::json base = scenario;
    base.erase("sweep");
    try {
        const LoadedScenario loaded = load_scenario_document(base, "scenario", ".", presets, LoadOptions{false});
        const Scenario& s = loaded.base;
        if (!s.workload.jobs) return marks;
        for (const JobSpec& j : s.workload.jobs->jobs) marks.names << QString::fromStdString(j.name);
        const Fabric f = build_fabric(s.topology);
        const std::vector<std::vector<NodeId>> hosts = place_jobs(f, topology_node_names(s.topology), job_requests(*s.workload.jobs));
        std::vector<int> job_of_host;
        const std::vector<uint32_t> index_of = host_indices(f);
        job_of_host.assign(f.count(NodeKind::host), -1);
        for (size_t j = 0; j < hosts.size(); ++j)
            for (NodeId h : hosts[j]) job_of_host[size_t(index_of[h])] = int(j);
        size_t next = 0;
        for (const TopoBox& b : doc.boxes) {
            if (b.kind != BoxKind::server) continue;
            std::vector<int>& gpus = marks.gpu_job[b.id];
            for (int g = 0; g < b.gpus; ++g) gpus.push_back(next < job_of_host.size() ? job_of_host[next++] : -1);
        }
    } catch (const InputError& e) {
        marks.problem = QString::fromStdString(e.diagnostics().items().empty() ? std::string(e.what()) : e.diagnostics().items().front().message);
        marks.gpu_job.clear();
    }
    return marks;
}

nlohmann::json host_ranges_of(const TopoDoc& doc, const std::set<uint64_t>& servers) {
    std::vector<int> indices;
    int next = 0;
    for (const TopoBox& b : doc.boxes) {
        if (b.kind != BoxKind::server) continue;
        for (int g = 0; g < b.gpus; ++g, ++next)
            if (servers.count(b.id)) indices.push_back(next);
    }
    nlohmann::json out = nlohmann::json::array();
    for (size_t a = 0; a < indices.size();) {
        size_t b = a;
        while (b + 1 < indices.size() && indices[b + 1] == indices[b] + 1) ++b;
        out.push_back(b > a ? std::to_string(indices[a]) + "-" + std::to_string(indices[b]) : std::to_string(indices[a]));
        a = b + 1;
    }
    return out;
}

}  // namespace orrery::views
