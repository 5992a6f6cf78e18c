#include "cli/llm_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "cli/run_session.h"
#include "common/diagnostics.h"
#include "runtime/batch.h"
#include "imports/import_job.h"
#include "imports/simai_busbw.h"
#include "workload/flow_mode.h"
#include "workload/llm_driver.h"
#include "workload/llm_job.h"
#include "workload/timeline_stream.h"

namespace orrery::cli {
namespace {

std::vector<TimelineRow> timeline_rows(const std::vector<TimelineSpan>& spans) {
    std::vector<TimelineRow> rows;
    rows.reserve(spans.size());
    for (const TimelineSpan& s : spans) rows.push_back({s.rank, s.iteration, s.stream, s.name, s.kind, s.start_ps, s.end_ps, s.bytes, s.peers});
    return rows;
}

// An experiment's timeline written while it runs, at its telemetry's pace (output.sample_interval of simulated
// time): the spans finished since the last write, so the workbench draws the timeline as the run goes.
class TimelineWriter {
public:
    TimelineWriter(ResultsStore& store, std::string experiment, const TaskGraph& graph, int64_t pace_ps)
        : store_(store), experiment_(std::move(experiment)), stream_(graph), pace_(std::max<int64_t>(1, pace_ps)) {}
    // At simulated time `now`: writes what finished once `now` has passed the next multiple of the pace.
    void at(const Executor& x, int64_t now) {
        if (now < next_) return;
        next_ = (now / pace_ + 1) * pace_;
        write(x);
    }
    // Everything finished and not yet written (the experiment's end, or the pieces of a flow-level run).
    void write(const Executor& x) {
        std::vector<TimelineSpan> spans = stream_.take(x);
        if (!spans.empty()) store_.timeline(experiment_, timeline_rows(spans));
    }
    int64_t pace() const { return pace_; }

private:
    ResultsStore& store_;
    std::string experiment_;
    TimelineStream stream_;
    int64_t pace_;
    int64_t next_ = 0;
};

std::vector<std::tuple<std::string, double, std::string>> llm_metrics(const LlmOutcome& o) {
    const nlohmann::json j = llm_summary_json(o);
    std::vector<std::tuple<std::string, double, std::string>> m{{"iteration_time", o.iteration_time_s, "s"}};
    if (j.contains("breakdown_mean_per_rank"))
        for (const auto& [k, v] : j["breakdown_mean_per_rank"].items()) m.emplace_back(k.substr(0, k.size() - 2) + "_mean_per_rank", v.get<double>(), "s");
    return m;
}

// The flow table of a job timed without packets (output.record "fct"): a row per network transfer with its
// standalone FCT (alone on its path, as the packet level records it) for slowdowns. A lockstep transfer stands
// for all its lanes' pairs in step: its row is its first pair across servers, as per-rank rows are each lane's.
std::vector<FlowRow> transfer_rows(const LlmJob& job, const LlmOutcome& o, const Fabric& fabric, const Routes& routes, uint32_t mtu, int priority) {
    std::vector<FlowRow> rows;
    std::map<std::pair<uint32_t, uint32_t>, PathMetrics> paths;
    auto standalone_ps = [&](uint32_t src, uint32_t dst, int64_t bytes) {
        auto it = paths.find({src, dst});
        if (it == paths.end()) it = paths.emplace(std::make_pair(src, dst), path_metrics(fabric, routes, src, dst, mtu)).first;
        return int64_t(standalone_fct_ns(it->second, uint64_t(bytes), mtu)) * 1000;
    };
    for (size_t i = 0; i < job.transfers.size() && i < o.transfer_times.size(); ++i) {
        const Op& t = job.graph.ops[job.transfers[i]];
        const auto [start, end] = o.transfer_times[i];
        auto add = [&](uint32_t from, uint32_t to, uint16_t sport, int64_t bytes) {
            const uint32_t src = job.place.host[from], dst = job.place.host[to];
            rows.push_back({uint32_t(rows.size()), src, dst, sport, kLlmDestinationPort, uint32_t(priority), uint64_t(bytes), start, end,
                            standalone_ps(src, dst, bytes)});
        };
        if (t.pairs == UINT32_MAX) {
            add(t.rank, t.peer, job.source_port[i], t.bytes);
            continue;
        }
        for (const RankPair& pr : job.graph.pair_sets[t.pairs].pairs)
            if (job.place.server[pr.first] != job.place.server[pr.second]) {
                add(pr.first, pr.second, 0, t.bytes / int64_t(std::max<uint32_t>(1, t.steps)));
                break;
            }
    }
    return rows;
}

}  // namespace

void precheck_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets) {
    std::optional<WorkloadTables> tables;
    Diagnostics problems;
    std::set<std::string> seen;  // each distinct job once
    for (size_t i = 0; i < loaded.scenarios.size(); ++i) {
        const Scenario& s = loaded.scenarios[i];
        if (!s.workload.llm || s.workload.llm->trace || s.workload.llm->collectives.model == CollectiveModel::busbw) continue;
        const LlmWorkload& w = *s.workload.llm;
        if (!seen.insert(s.document["workload"].dump() + s.document["topology"].dump()).second) continue;
        std::vector<std::string> found = check_llm_workload(w, fabrics[i]);
        if (found.empty()) {
            try {
                if (!tables) tables = load_workload_tables(presets);
                if (memory_per_rank(w, workload_gpu(w, *tables)).fits())
                    refuse_graph_beyond_memory(w, *tables, place_ranks(w.parallel, *fabrics[i]), lockstep_lanes(w, uint32_t(w.parallel.world())));
            } catch (const InputError& e) {
                for (const Diagnostic& d : e.diagnostics().items()) found.push_back(d.where + ": " + d.message);
            }
        }
        for (const std::string& p : found) {
            const size_t colon = p.find(": ");
            const std::string which = loaded.experiments.size() > 1 ? "experiment " + loaded.experiments[i].id + ": " : "";
            problems.error(s.source + ": " + p.substr(0, colon), which + p.substr(colon + 2));
        }
    }
    if (problems.has_errors()) throw InputError(problems);
}

LlmRunResult run_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const Backend& backend, ProgressLines* progress) {
    WorkloadTables tables = load_workload_tables(presets);
    const size_t count = loaded.experiments.size();
    LlmRunResult out;
    out.summaries.resize(count);
    std::vector<std::unique_ptr<LlmJob>> jobs(count);
    std::vector<std::unique_ptr<LlmWorkload>> workloads(count);  // each experiment's, with its custom algorithms read
    std::vector<ExperimentInput> packet_inputs;
    std::vector<size_t> packet_index;  // batch experiment → experiment index
    std::map<const Fabric*, Routes> routes_of;
    BusbwRatios ratios;  // read once, on the first busbw experiment
    // An experiment timed without packets: its metrics, timeline and summary, as soon as it is done.
    // `streamed`: its timeline was written as it ran.
    auto finish_without_packets = [&](size_t i, const LlmOutcome& o, const std::string& mode, const std::string& note,
                                  std::chrono::steady_clock::time_point t0, std::vector<FlowRow> flows, bool streamed) {
        const std::string& id = loaded.experiments[i].id;
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        auto metrics = llm_metrics(o);
        metrics.emplace_back("wall_time", wall, "s");
        if (!streamed) store.timeline(id, timeline_rows(o.timeline));
        store.experiment_finished(id, "ok", note, int64_t(o.iteration_time_s * o.iterations * 1e12), 0, 0, wall, std::move(flows), {}, metrics,
                                  progress ? std::function<void()>([progress, id, wall] { progress->done(id, "ok", wall); }) : nullptr);
        nlohmann::json j = llm_summary_json(o);
        j["id"] = id;
        j["experiment"] = id;
        j["status"] = "ok";
        j["network_mode"] = mode;
        j["notes"] = note;
        j["wall_time_s"] = wall;
        out.summaries[i] = j;
        if (progress) progress->summary(j);
        say(progress, "[%s] ok: iteration %.6f s (%s), %zu ops, %.3f s wall\n", id.c_str(), o.iteration_time_s, mode.c_str(), o.ops, wall);
    };
    for (size_t i = 0; i < count; ++i) {
        const Scenario& s = loaded.scenarios[i];
        workloads[i] = std::make_unique<LlmWorkload>(*s.workload.llm);
        LlmWorkload& w = *workloads[i];
        if (!w.compute.operator_table.empty()) load_operator_table(tables, w.compute.operator_table);
        const std::string& id = loaded.experiments[i].id;
        Diagnostics warnings;
        if (w.collectives.model == CollectiveModel::busbw) {  // SimAI's closed form: no task graph, no network
            store.experiment_started(id);
            if (progress) progress->start(id);
            const auto t0 = std::chrono::steady_clock::now();
            if (ratios.nic.empty()) ratios = load_busbw_ratios(presets);
            const BusbwEstimate est = estimate_simai_import(w, uint32_t(fabrics[i]->count(NodeKind::host)), ratios, warnings);
            for (const Diagnostic& d : warnings.items()) say(progress, "[%s] %s: warning: %s\n", id.c_str(), d.where.c_str(), d.message.c_str());
            finish_without_packets(i, busbw_outcome(est), "busbw",
                               "SimAI's analytical bus-bandwidth estimate (SimAI_analytical): no task graph, no network; exposed DP_EP " +
                                   std::to_string(est.exposed_dp_ep_s) + " s of the exposed DP",
                               t0, {}, false);
            continue;
        }
        jobs[i] = std::make_unique<LlmJob>(prepare_any_llm_job(w, *fabrics[i], tables, warnings));
        for (const Diagnostic& d : warnings.items()) say(progress, "[%s] %s: warning: %s\n", id.c_str(), d.where.c_str(), d.message.c_str());
        LlmJob& job = *jobs[i];
        if (!job.oom_message.empty()) {
            store.experiment_started(id);
            store.experiment_finished(id, "oom", job.oom_message, 0, 0, 0, 0, {}, {}, {},
                                      progress ? std::function<void()>([progress, id] { progress->done(id, "oom", 0); }) : nullptr);
            out.summaries[i] = {{"id", id}, {"experiment", id}, {"status", "oom"}, {"message", job.oom_message}};
            if (progress) progress->summary(out.summaries[i]);
            say(progress, "[%s] oom: %s\n", id.c_str(), job.oom_message.c_str());
            continue;
        }
        if (w.network_mode != NetworkMode::packet || job.transfers.empty()) {
            store.experiment_started(id);
            if (progress) progress->start(id);
            const auto t0 = std::chrono::steady_clock::now();
            auto routes = routes_of.find(fabrics[i]);  // experiments of a sweep share their fabric and its routes
            if (routes == routes_of.end()) routes = routes_of.emplace(fabrics[i], build_routes(*fabrics[i])).first;
            // A packet-mode job whose traffic never leaves a server has no flows: it runs on the flow level,
            // where its NVLink traffic still contends, and says so.
            const bool flow = w.network_mode != NetworkMode::analytic;
            const std::string mode = flow ? "flow" : "analytic";
            TimelineWriter timeline(store, id, job.graph, s.output.sample_interval.count);
            const LlmOutcome o = flow ? run_llm_flow(job, *fabrics[i], routes->second, wire_format(s), tables,
                                                     [&](const Executor& x) { timeline.write(x); }, timeline.pace())
                                      : run_llm_analytic(job, *fabrics[i], routes->second, uint32_t(s.network.packet_payload.count));
            std::string note = flow ? "flow-level network (fluid flows, max-min fair over links and NVLink ports; no queues, PFC, congestion "
                                      "control or link loss: those settings act at packet level only)"
                                    : "analytic network (α-β: every transfer alone on its path, the contention-free bound)";
            if (w.network_mode == NetworkMode::packet)
                note = "no traffic leaves a server: no packets to simulate, NVLink traffic timed on the flow level";
            if (job.graph.lockstep())
                note += "; lockstep lanes: one per pipeline stage (" + std::to_string(job.graph.lane_ranks[0].size()) +
                        " ranks each, in step; each collective one task over all the stage's groups); per-rank rows and timeline "
                        "spans are each lane's, under its first rank";
            const uint32_t mtu = uint32_t(s.network.packet_payload.count);
            finish_without_packets(i, o, mode, note, t0,
                                   s.output.record_fct ? transfer_rows(job, o, *fabrics[i], routes->second, mtu, w.collectives.priority) : std::vector<FlowRow>{},
                                   flow);
            jobs[i].reset();  // its graph is done with: a sweep of large jobs holds one at a time
            continue;
        }
        packet_inputs.push_back({id, &s, fabrics[i], llm_flows(job, w.collectives.priority)});
        packet_index.push_back(i);
    }
    if (packet_inputs.empty()) {
        store.end_run("finished", 0);
        return out;
    }
    Batch batch = compile_batch(packet_inputs);
    std::vector<std::unique_ptr<LlmDriver>> drivers;
    std::vector<std::unique_ptr<TimelineWriter>> timelines;
    for (size_t e = 0; e < packet_inputs.size(); ++e) {
        const LlmJob& job = *jobs[packet_index[e]];
        drivers.push_back(std::make_unique<LlmDriver>(job, batch, uint32_t(e), *fabrics[packet_index[e]], tables));
        timelines.push_back(std::make_unique<TimelineWriter>(store, packet_inputs[e].id, job.graph, packet_inputs[e].scenario->output.sample_interval.count));
    }
    SessionWorkload hooks;
    hooks.drive = [&](uint32_t e, int64_t now, uint32_t done) {
        const DriverStatus status = drivers[e]->drive(now, done);
        timelines[e]->at(drivers[e]->executor(), now);
        return status;
    };
    hooks.on_done = [&](uint32_t e, std::string& status, nlohmann::json& summary, std::vector<std::tuple<std::string, double, std::string>>& metrics) {
        const LlmJob& job = *jobs[packet_index[e]];
        const Executor& x = drivers[e]->executor();
        timelines[e]->write(x);  // what finished since the last write (a cancelled run keeps what it ran)
        if (!x.finished()) {
            status = summary.value("status", "error") == "cancelled" ? "cancelled" : "error";
            summary["message"] = std::to_string(x.unfinished()) + " of " + std::to_string(job.graph.size()) + " tasks did not run";
            return;
        }
        const LlmOutcome o = summarize_llm(job, x);
        status = "ok";
        const nlohmann::json j = llm_summary_json(o);
        for (const auto& [k, v] : j.items()) summary[k] = v;
        summary["id"] = packet_inputs[e].id;
        summary["network_mode"] = "packet";
        auto extra = llm_metrics(o);
        metrics.insert(metrics.begin(), extra.begin(), extra.end());
    };
    const SessionResult session = run_session(batch, packet_inputs, &store, backend, hooks, progress);
    for (size_t e = 0; e < packet_inputs.size(); ++e) out.summaries[packet_index[e]] = session.summaries[e];
    out.cancelled = session.cancelled;
    return out;
}

}  // namespace orrery::cli
