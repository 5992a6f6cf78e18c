#include "workload/placement.h"

#include <algorithm>
#include <map>

#include "common/diagnostics.h"
#include "common/splitmix.h"
#include "workload/build.h"

namespace orrery {
namespace {

// The fabric's servers in fabric order, each its hosts in node order; a fabric without NVLink domains has a
// server per host.
struct Servers {
    std::vector<std::vector<NodeId>> hosts;
    std::vector<NodeId> leaf;               // per server: its first host's switch (kNone: none)
    std::vector<NodeId> all_hosts;          // every host in node order
};

Servers servers_of(const Fabric& f) {
    Servers s;
    std::map<int32_t, size_t> index;
    for (NodeId n = 0; n < f.node_count(); ++n) {
        if (!f.is_host(n)) continue;
        s.all_hosts.push_back(n);
        const int32_t server = f.gpus_per_server > 0 && f.node_server[n] >= 0 ? f.node_server[n] : -1 - int32_t(n);
        auto [it, fresh] = index.emplace(server, s.hosts.size());
        if (fresh) {
            s.hosts.emplace_back();
            s.leaf.push_back(leaf_of(f, n));
        }
        s.hosts[it->second].push_back(n);
    }
    return s;
}

std::string host_label(NodeId n, const std::vector<std::string>& names, const std::vector<uint32_t>& host_index) {
    if (n < names.size() && !names[n].empty()) return "host " + names[n];
    return "host " + std::to_string(host_index[n]) + " (node " + std::to_string(n) + ")";
}

// "hosts": names, host indices (the i-th GPU in fabric order) and ranges "a-b" of them.
std::vector<NodeId> listed_hosts(const JobRequest& j, const Servers& s, const std::vector<std::string>& names) {
    std::vector<NodeId> out;
    const std::string where = j.where + ".placement.hosts";
    auto index = [&](const std::string& text) -> std::optional<size_t> {
        if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
        return size_t(std::stoul(text));
    };
    for (size_t i = 0; i < j.placement.hosts.size(); ++i) {
        const std::string& item = j.placement.hosts[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        const auto named = std::find(names.begin(), names.end(), item);
        if (named != names.end()) {
            const NodeId n = NodeId(named - names.begin());
            if (!std::binary_search(s.all_hosts.begin(), s.all_hosts.end(), n))
                throw InputError(at, "\"" + item + "\" is not a host (a GPU) of the fabric");
            out.push_back(n);
            continue;
        }
        const size_t dash = item.find('-', 1);
        const std::optional<size_t> a = index(dash == std::string::npos ? item : item.substr(0, dash));
        const std::optional<size_t> b = dash == std::string::npos ? a : index(item.substr(dash + 1));
        if (!a || !b || *b < *a)
            throw InputError(at, "expected a host name, a host index or a range like \"0-31\" of host indices, found \"" + item + "\"" +
                                     (names.empty() ? "" : " (no host has that name)"));
        if (*b >= s.all_hosts.size())
            throw InputError(at, "the fabric has " + std::to_string(s.all_hosts.size()) + " hosts (0.." + std::to_string(s.all_hosts.size() - 1) +
                                     "), found " + std::to_string(*b));
        for (size_t h = *a; h <= *b; ++h) out.push_back(s.all_hosts[h]);
    }
    return out;
}

// Whole free servers for a job of `gpus` GPUs, in the order the policy takes them.
std::vector<size_t> pick_servers(const JobRequest& j, const Servers& s, const std::vector<bool>& server_free) {
    std::vector<size_t> free;
    for (size_t i = 0; i < s.hosts.size(); ++i)
        if (server_free[i]) free.push_back(i);
    std::vector<size_t> order;
    if (j.placement.policy == PlacementPolicy::spread) {
        // Round robin over the leaves in the order they first appear, each leaf's free servers in fabric order.
        std::vector<NodeId> leaves;
        std::map<NodeId, std::vector<size_t>> under;
        for (size_t i : free) {
            auto [it, fresh] = under.emplace(s.leaf[i], std::vector<size_t>{});
            if (fresh) leaves.push_back(s.leaf[i]);
            it->second.push_back(i);
        }
        for (size_t round = 0; order.size() < free.size(); ++round)
            for (NodeId l : leaves)
                if (round < under[l].size()) order.push_back(under[l][round]);
    } else {
        order = free;
        if (j.placement.policy == PlacementPolicy::random) draw_front(order, order.size(), j.placement.seed);
    }
    std::vector<size_t> taken;
    size_t gpus = 0;
    for (size_t i : order) {
        if (gpus >= j.gpus) break;
        taken.push_back(i);
        gpus += s.hosts[i].size();
    }
    if (gpus < j.gpus) return {};
    std::sort(taken.begin(), taken.end());  // ranks follow fabric order inside the servers taken
    return taken;
}

void check_tp_inside_servers(const JobRequest& j, const Fabric& f, const std::vector<NodeId>& hosts, const std::vector<std::string>& names,
                             const std::vector<uint32_t>& host_index) {
    if (!j.parallel || j.parallel->tp <= 1 || f.gpus_per_server <= 0 || j.parallel->tp > f.gpus_per_server) return;
    std::map<std::pair<int, int>, uint32_t> first;  // (dp, pp) → the group's first rank
    for (uint32_t r = 0; r < hosts.size(); ++r) {
        const RankCoord c = rank_coord(*j.parallel, r);
        auto [it, fresh] = first.emplace(std::make_pair(c.dp, c.pp), r);
        const NodeId a = hosts[it->second], b = hosts[r];
        if (!fresh && f.node_server[a] != f.node_server[b])
            throw InputError(j.where + ".placement",
                             "job \"" + j.name + "\": its TP group of rank " + std::to_string(it->second) + " would cross servers (rank " + std::to_string(it->second) +
                                 " on " + host_label(a, names, host_index) + ", rank " + std::to_string(r) + " on " + host_label(b, names, host_index) +
                                 "): list the hosts of each TP group inside one server");
    }
}

}  // namespace

std::vector<uint32_t> host_indices(const Fabric& f) {
    std::vector<uint32_t> index(f.node_count(), kNotAHost);
    for (NodeId n = 0, i = 0; n < f.node_count(); ++n)
        if (f.is_host(n)) index[n] = i++;
    return index;
}

Placement place_on_hosts(const Fabric& f, const std::vector<NodeId>& hosts) {
    Placement pl;
    pl.gpus_per_server = std::max(1, f.gpus_per_server);
    const std::vector<uint32_t> host_index = host_indices(f);
    std::map<int32_t, int32_t> seen_in_server;
    for (NodeId h : hosts) {
        const int32_t server = f.gpus_per_server > 0 && f.node_server[h] >= 0 ? f.node_server[h] : int32_t(host_index[h]);
        pl.host.push_back(h);
        pl.server.push_back(server);
        pl.local.push_back(seen_in_server[server]++);
    }
    for (size_t i = 0; i < f.port_link.size(); ++i)  // the NVLink delay of the first host–NVSwitch link
        if (f.node_kind[f.link_a[f.port_link[i]]] == NodeKind::nvswitch || f.node_kind[f.link_b[f.port_link[i]]] == NodeKind::nvswitch) {
            pl.nvlink_hop_ps = 2 * f.link_delay[f.port_link[i]].count;
            pl.nvlink_bytes_per_s = double(f.link_rate[f.port_link[i]].count) / 8;
            pl.nvlink_rate_is_bus_bandwidth = f.nvlink_rate_is_bus_bandwidth;
            break;
        }
    index_ranks_by_server(pl);
    return pl;
}

void index_ranks_by_server(Placement& pl) {
    int32_t max_server = 0;
    for (int32_t s : pl.server) max_server = std::max(max_server, s);
    pl.rank_at.assign(size_t(max_server + 1) * size_t(pl.gpus_per_server), UINT32_MAX);
    for (size_t r = 0; r < pl.host.size(); ++r) {
        if (pl.local[r] >= pl.gpus_per_server) continue;
        uint32_t& cell = pl.rank_at[size_t(pl.server[r]) * size_t(pl.gpus_per_server) + size_t(pl.local[r])];
        if (cell == UINT32_MAX) cell = uint32_t(r);
    }
}

NodeId leaf_of(const Fabric& f, NodeId host) {
    for (uint32_t p = f.port_begin[host]; p < f.port_begin[host + 1]; ++p)
        if (f.node_kind[f.port_peer[p]] == NodeKind::network_switch) return f.port_peer[p];
    return kNone;
}

std::vector<std::vector<NodeId>> place_jobs(const Fabric& f, const std::vector<std::string>& names, const std::vector<JobRequest>& jobs) {
    const Servers s = servers_of(f);
    const std::vector<uint32_t> host_index = host_indices(f);
    std::vector<size_t> server_of(f.node_count(), SIZE_MAX);
    for (size_t i = 0; i < s.hosts.size(); ++i)
        for (NodeId h : s.hosts[i]) server_of[h] = i;
    std::vector<uint32_t> holder(f.node_count(), UINT32_MAX);  // per host: the job holding it
    std::vector<std::vector<NodeId>> out(jobs.size());
    auto hold = [&](uint32_t job, NodeId h) {
        if (holder[h] == job)
            throw InputError(jobs[job].where + ".placement.hosts", "job \"" + jobs[job].name + "\" lists " + host_label(h, names, host_index) + " twice");
        if (holder[h] != UINT32_MAX)
            throw InputError(jobs[job].where + ".placement.hosts", "jobs \"" + jobs[holder[h]].name + "\" and \"" + jobs[job].name + "\" both hold " +
                                                                       host_label(h, names, host_index));
        holder[h] = job;
        out[job].push_back(h);
    };
    for (uint32_t j = 0; j < jobs.size(); ++j) {
        if (!jobs[j].holds_hosts || jobs[j].placement.policy != PlacementPolicy::hosts) continue;
        for (NodeId h : listed_hosts(jobs[j], s, names)) hold(j, h);
        if (jobs[j].gpus != 0 && out[j].size() != jobs[j].gpus)
            throw InputError(jobs[j].where + ".placement.hosts", "job \"" + jobs[j].name + "\" has " + std::to_string(jobs[j].gpus) + " ranks but " +
                                                                     std::to_string(out[j].size()) + " hosts are listed");
        check_tp_inside_servers(jobs[j], f, out[j], names, host_index);
    }
    for (uint32_t j = 0; j < jobs.size(); ++j) {
        if (!jobs[j].holds_hosts || jobs[j].placement.policy == PlacementPolicy::hosts) continue;
        std::vector<bool> server_free(s.hosts.size());
        size_t free_gpus = 0, free_servers = 0;
        for (size_t i = 0; i < s.hosts.size(); ++i) {
            server_free[i] = std::all_of(s.hosts[i].begin(), s.hosts[i].end(), [&](NodeId h) { return holder[h] == UINT32_MAX; });
            free_gpus += server_free[i] ? s.hosts[i].size() : 0;
            free_servers += server_free[i];
        }
        const std::vector<size_t> taken = pick_servers(jobs[j], s, server_free);
        if (taken.empty()) {
            std::string before;
            for (uint32_t k = 0; k < j; ++k)
                if (jobs[k].holds_hosts) before += (before.empty() ? "" : ", ") + ("\"" + jobs[k].name + "\"");
            for (uint32_t k = j + 1; k < jobs.size(); ++k)
                if (jobs[k].holds_hosts && jobs[k].placement.policy == PlacementPolicy::hosts) before += (before.empty() ? "" : ", ") + ("\"" + jobs[k].name + "\"");
            throw InputError(jobs[j].where + ".placement",
                             "job \"" + jobs[j].name + "\" asks for " + std::to_string(jobs[j].gpus) + " GPUs but " + std::to_string(free_gpus) + " are free (" +
                                 std::to_string(free_servers) + " whole servers of " + std::to_string(s.all_hosts.size()) + " GPUs in all" +
                                 (before.empty() ? "" : ", after jobs " + before) + ")");
        }
        for (size_t i : taken)
            for (NodeId h : s.hosts[i])
                if (out[j].size() < jobs[j].gpus) hold(j, h);
                else holder[h] = j;  // the rest of a server it holds whole stays its own
        check_tp_inside_servers(jobs[j], f, out[j], names, host_index);
    }
    return out;
}

std::string in_job(const JobSpec& job, const std::string& problem) {
    const std::string prefix = "workload.";
    return problem.rfind(prefix, 0) == 0 ? job.where + "." + problem.substr(prefix.size()) : problem;
}

std::vector<JobRequest> job_requests(const JobsWorkload& w) {
    std::vector<JobRequest> out;
    for (const JobSpec& j : w.jobs) {
        if (j.background()) {
            out.push_back({j.name, j.where, j.placement, 0, nullptr, false});
            continue;
        }
        JobRequest r{j.name, j.where, j.placement, j.placement.gpus, j.llm.trace ? nullptr : &j.llm.parallel, true};
        if (r.gpus == 0 && !j.llm.trace) r.gpus = uint32_t(j.llm.parallel.world());  // an imported job's listed hosts are its world
        out.push_back(r);
    }
    return out;
}

std::vector<std::string> check_jobs(const JobsWorkload& w, const Fabric& f, const std::vector<std::string>& names) {
    std::vector<std::string> found;
    const JobSpec* first_training = nullptr;
    for (const JobSpec& j : w.jobs)
        if (!j.background() && !first_training) first_training = &j;
    if (!first_training) found.push_back(w.jobs.empty() ? "workload.jobs: no jobs" : w.jobs[0].where + ": a mix needs a training job beside background flows");
    for (const JobSpec& j : w.jobs) {
        if (j.background()) {  // its flows' ends must be hosts of this fabric
            for (const BackgroundFlow& fl : j.flows)
                for (const auto& [end, key] : {std::pair{fl.src, "src"}, std::pair{fl.dst, "dst"}})
                    if (end >= f.node_count() || !f.is_host(end))
                        found.push_back(fl.where + "." + key + ": node " + std::to_string(end) +
                                        " is not a host (a GPU) of the fabric (" + std::to_string(f.count(NodeKind::host)) + " hosts, nodes 0.." +
                                        std::to_string(f.node_count() - 1) + ")");
            continue;
        }
        if (j.llm.gpu != first_training->llm.gpu)
            found.push_back(j.where + ".gpu: the fabric's GPUs are " + first_training->llm.gpu + " (job \"" + first_training->name + "\"); job \"" + j.name +
                            "\" asks for " + j.llm.gpu + ": every job of a mix runs on the same GPUs");
        if (j.llm.trace) continue;
        for (const std::string& p : check_llm_workload(j.llm, nullptr)) found.push_back(in_job(j, p));
        if (j.placement.gpus != 0 && j.placement.gpus != uint32_t(j.llm.parallel.world()))
            found.push_back(j.where + ".placement.gpus: job \"" + j.name + "\" has TP × PP × DP = " + std::to_string(j.llm.parallel.world()) +
                            " ranks, not " + std::to_string(j.placement.gpus));
    }
    if (!found.empty()) return found;
    try {
        place_jobs(f, names, job_requests(w));
    } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics().items()) found.push_back(d.where + ": " + d.message);
    }
    return found;
}

}  // namespace orrery
