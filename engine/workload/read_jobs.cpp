#include "workload/read_jobs.h"

#include <set>

#include "workload/read_llm.h"

namespace orrery {

const char* placement_policy_name(PlacementPolicy p) {
    switch (p) {
        case PlacementPolicy::packed: return "packed";
        case PlacementPolicy::spread: return "spread";
        case PlacementPolicy::random: return "random";
        case PlacementPolicy::hosts: return "hosts";
    }
    return "?";
}

namespace {

PlacementSpec read_placement(JsonReader& p) {
    PlacementSpec s;
    if (auto policy = p.choice("policy", Need::required, {"packed", "spread", "random", "hosts"}))
        for (PlacementPolicy x : {PlacementPolicy::packed, PlacementPolicy::spread, PlacementPolicy::random, PlacementPolicy::hosts})
            if (*policy == placement_policy_name(x)) s.policy = x;
    s.seed = uint64_t(p.integer("seed", Need::optional, 0, INT64_MAX).value_or(1));
    if (p.has("seed") && s.policy != PlacementPolicy::random) p.error("seed", "only the \"random\" policy draws: remove \"seed\"");
    s.gpus = uint32_t(p.integer("gpus", Need::optional, 1, 1 << 24).value_or(0));
    const bool listed = s.policy == PlacementPolicy::hosts;
    if (const nlohmann::json* hosts = p.array("hosts", listed ? Need::required : Need::optional, "an array of host names, indices or ranges (\"0-31\")")) {
        if (!listed) p.error("hosts", "a list of hosts is the \"hosts\" policy: set \"policy\": \"hosts\" or remove \"hosts\"");
        for (size_t i = 0; i < hosts->size(); ++i) {
            const nlohmann::json& h = (*hosts)[i];
            if (h.is_number_integer() && h.get<int64_t>() >= 0) s.hosts.push_back(std::to_string(h.get<int64_t>()));
            else if (h.is_string() && !h.get<std::string>().empty()) s.hosts.push_back(h.get<std::string>());
            else p.error(index_path("hosts", i), "expected a host name, a host index or a range like \"0-31\", found " + describe_json(h));
        }
        if (listed && hosts->empty()) p.error("hosts", "expected at least one host");
    }
    p.finish();
    return s;
}

StragglerSpec read_stragglers(JsonReader& job) {
    StragglerSpec s;
    const nlohmann::json* raw = job.raw("stragglers");
    if (!raw) return s;
    const std::string example = "[{\"rank\": 17, \"slowdown\": 1.3}] or {\"count\": 2, \"slowdown\": 1.2, \"seed\": 1}";
    if (raw->is_object()) {
        JsonReader r(*raw, job.source(), job.path_of("stragglers"), job.diagnostics());
        s.count = uint32_t(r.integer("count", Need::required, 1, 1 << 24).value_or(0));
        s.slowdown = r.number("slowdown", Need::required, 1, 1000).value_or(1);
        s.seed = uint64_t(r.integer("seed", Need::optional, 0, INT64_MAX).value_or(1));
        r.finish();
        return s;
    }
    if (!raw->is_array()) {
        job.error("stragglers", "expected " + example + ", found " + describe_json(*raw));
        return s;
    }
    std::set<int64_t> seen;
    for (size_t i = 0; i < raw->size(); ++i) {
        JsonReader r((*raw)[i], job.source(), index_path(job.path_of("stragglers"), i), job.diagnostics());
        if (!r.is_object()) {
            job.error(index_path("stragglers", i), "expected {\"rank\": 17, \"slowdown\": 1.3}, found " + describe_json((*raw)[i]));
            continue;
        }
        const auto rank = r.integer("rank", Need::required, 0, 1 << 24);
        const auto slowdown = r.number("slowdown", Need::required, 1, 1000);
        r.finish();
        if (!rank || !slowdown) continue;
        if (!seen.insert(*rank).second) r.error("rank", "rank " + std::to_string(*rank) + " is listed twice");
        s.ranks.emplace_back(uint32_t(*rank), *slowdown);
    }
    return s;
}

void read_background_flows(JsonReader& j, JobSpec& job) {
    job.priority = int(j.integer("priority", Need::optional, 1, 7).value_or(3));
    job.start = j.time("start", Need::optional).value_or(Picoseconds(0));
    if (job.start.count < 0) j.error("start", "expected a time from the experiment's start (≥ 0)");
    const nlohmann::json* list = j.array("flows", Need::required, "an array of flows like {\"src\": 0, \"dst\": 9, \"size\": \"64MB\", \"start\": \"0us\"}");
    if (list && list->empty()) j.error("flows", "expected at least one flow");
    for (size_t i = 0; list && i < list->size(); ++i) {
        JsonReader f((*list)[i], j.source(), index_path(j.path_of("flows"), i), j.diagnostics());
        if (!f.is_object()) {
            j.error(index_path("flows", i), "expected a flow like {\"src\": 0, \"dst\": 9, \"size\": \"64MB\"}, found " + describe_json((*list)[i]));
            continue;
        }
        const auto src = f.integer("src", Need::required, 0, 0xffffff), dst = f.integer("dst", Need::required, 0, 0xffffff);
        const auto size = f.size("size", Need::required);
        const Picoseconds start = f.time("start", Need::optional).value_or(Picoseconds(0));
        f.finish();
        if (!src || !dst || !size) continue;
        if (*src == *dst) f.error("dst", "a flow needs two different hosts; src and dst are both " + std::to_string(*src));
        else if (size->count <= 0) f.error("size", "expected a positive size");
        else job.flows.push_back({uint32_t(*src), uint32_t(*dst), size->count, job.start.count + start.count, f.path()});
    }
}

}  // namespace

JobsWorkload read_jobs_workload(JsonReader& r, const std::filesystem::path& base_dir) {
    JobsWorkload out;
    NetworkMode mode = NetworkMode::packet;
    if (auto m = r.choice("network_mode", Need::optional, {"packet", "flow", "analytic"}))
        mode = *m == "analytic" ? NetworkMode::analytic : *m == "flow" ? NetworkMode::flow : NetworkMode::packet;
    out.isolation = r.boolean("isolation", Need::optional).value_or(true);
    const nlohmann::json* list = r.array("jobs", Need::required, "an array of jobs, each an LLM workload with \"name\" and \"placement\"");
    if (!list) return out;
    if (list->empty()) r.error("jobs", "expected at least one job");
    std::set<std::string> names;
    for (size_t i = 0; i < list->size(); ++i) {
        const std::string where = index_path(r.path_of("jobs"), i);
        JsonReader j((*list)[i], r.source(), where, r.diagnostics());
        if (!j.is_object()) {
            r.error(index_path("jobs", i), "expected a job like {\"name\": \"a\", \"placement\": {\"policy\": \"packed\"}, \"model\": …, \"parallel\": …}, found " +
                                               describe_json((*list)[i]));
            continue;
        }
        JobSpec job;
        job.where = where;
        job.name = j.string("name", Need::required).value_or("");
        if (!job.name.empty() && !names.insert(job.name).second) j.error("name", "another job is named \"" + job.name + "\": names must be unique");
        const std::string kind = j.choice("kind", Need::optional, {"llm", "flows"}).value_or("llm");
        if (kind == "flows") {  // background traffic: its flows name their hosts; no placement, model or strategy
            read_background_flows(j, job);
            job.llm.network_mode = mode;
            j.finish();
            out.jobs.push_back(std::move(job));
            continue;
        }
        if (auto p = j.object("placement", Need::required)) job.placement = read_placement(*p);
        job.start = j.time("start", Need::optional).value_or(Picoseconds(0));
        if (job.start.count < 0) j.error("start", "expected a time from the experiment's start (≥ 0)");
        job.stragglers = read_stragglers(j);
        job.llm = read_llm_workload(j, base_dir, mode);
        if (job.llm.collectives.model == CollectiveModel::busbw)
            j.error("collectives.model", "SimAI's busbw estimate has no network for jobs to share: jobs run with \"model\": \"nccl\"");
        if (job.llm.trace && job.placement.gpus == 0 && job.placement.policy != PlacementPolicy::hosts)
            j.error("placement.gpus", "an imported job brings its own world size: say how many GPUs it holds (\"gpus\") or list its hosts");
        j.finish();
        out.jobs.push_back(std::move(job));
    }
    return out;
}

}  // namespace orrery
