#include "session/llm_session.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "common/diagnostics.h"
#include "common/parallel_tasks.h"
#include "imports/import_job.h"
#include "imports/simai_busbw.h"
#include "runtime/batch.h"
#include "session/mix_report.h"
#include "session/timeline_writer.h"
#include "workload/flow_mode.h"
#include "workload/flow_network.h"
#include "workload/llm_driver.h"
#include "workload/llm_job.h"
#include "workload/placement.h"

namespace orrery {
namespace {

using Metrics = std::vector<std::tuple<std::string, double, std::string>>;
using Clock = std::chrono::steady_clock;

Metrics llm_metrics(const LlmOutcome& o) {
    const nlohmann::json j = llm_summary_json(o);
    Metrics m{{"iteration_time", o.iteration_time_s, "s"}};
    if (j.contains("breakdown_mean_per_rank"))
        for (const auto& [k, v] : j["breakdown_mean_per_rank"].items()) m.emplace_back(k.substr(0, k.size() - 2) + "_mean_per_rank", v.get<double>(), "s");
    return m;
}

// The flow table of a job timed without packets (output.record "fct"): a row per network transfer with its
// standalone FCT (alone on its path, as the packet level records it) for slowdowns. A lockstep transfer stands
// for all its lanes' pairs in step: its row is its first pair across servers, as per-rank rows are each lane's.
std::vector<FlowRow> transfer_rows(const LlmJob& job, const LlmOutcome& o, const Fabric& fabric, const Routes& routes, uint32_t mtu) {
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
        const int priority = job.workload_of(t.rank).collectives.priority;
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

std::string without_packets_note(const LlmWorkload& w, const LlmJob& job, bool flow) {
    std::string note = flow ? "flow-level network (fluid flows, max-min fair over links and NVLink ports; no queues, PFC, congestion "
                              "control or link loss: those settings act at packet level only)"
                            : "analytic network (α-β: every transfer alone on its path, the contention-free bound)";
    // A packet-mode job whose traffic never leaves a server has no flows: it runs on the flow level, where its
    // NVLink traffic still contends, and says so.
    if (w.network_mode == NetworkMode::packet) note = "no traffic leaves a server: no packets to simulate, NVLink traffic timed on the flow level";
    if (job.graph.lockstep())
        note += "; lockstep lanes: one per pipeline stage (" + std::to_string(job.graph.lane_ranks[0].size()) +
                " ranks each, in step; each collective one task over all the stage's groups); per-rank rows and timeline "
                "spans are each lane's, under its first rank";
    return note;
}

// One run's state: experiments timed without packets are finished as they come; packet-level ones are
// gathered into one batch that runs last.
class LlmSession {
public:
    LlmSession(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets, ResultsStore& store,
               const SessionObserver& observer)
        : loaded_(loaded), fabrics_(fabrics), presets_(presets), store_(store), observer_(observer), tables_(load_workload_tables(presets)),
          count_(loaded.experiments.size()), jobs_(count_), workloads_(count_), mixes_(count_), alone_(count_) {
        out_.summaries.resize(count_);
    }

    LlmSessionResult run(const SessionBackend& backend, std::atomic<bool>& cancel) {
        const auto t0 = Clock::now();
        threads_ = backend.partition ? 1 : std::max(1, backend.threads);
        for (size_t i = 0; i < count_ && !cancel.load(); ++i) prepare(i);
        out_.cancelled = cancel.load();
        if (packet_inputs_.empty() || out_.cancelled) {
            store_.end_run(out_.cancelled ? "cancelled" : "finished", std::chrono::duration<double>(Clock::now() - t0).count());
            return std::move(out_);
        }
        run_alone_batch(backend, cancel);
        if (!cancel.load()) run_packet_batch(backend, cancel);
        else store_.end_run("cancelled", std::chrono::duration<double>(Clock::now() - t0).count());
        out_.cancelled = out_.cancelled || cancel.load();
        return std::move(out_);
    }

private:
    const std::string& id(size_t i) const { return loaded_.experiments[i].id; }

    void warn(size_t i, const Diagnostics& warnings) const {
        if (observer_.note)
            for (const Diagnostic& d : warnings.items()) observer_.note("[" + id(i) + "] " + d.where, "warning: " + d.message, false);
    }

    void started(size_t i) {
        store_.experiment_started(id(i));
        if (observer_.started) observer_.started(uint32_t(i));
    }

    // An experiment ended without packets: its summary to the observer, as a packet-level one's would go.
    void report(size_t i, nlohmann::json summary, double wall) {
        ExperimentResult none;
        none.id = id(i);
        out_.summaries[i] = summary;
        ++finished_;
        if (observer_.finished) observer_.finished(uint32_t(i), none, summary, finished_, wall);
    }

    void commit(size_t i, const std::string& status, const std::string& note, int64_t end_ps, double wall, std::vector<FlowRow> flows, const Metrics& metrics) {
        std::function<void()> committed;
        if (observer_.committed) committed = [this, i, status, wall] { observer_.committed(uint32_t(i), status, wall); };
        store_.experiment_finished(id(i), status, note, end_ps, 0, 0, wall, std::move(flows), {}, metrics, std::move(committed));
    }

    // An experiment timed without packets: its metrics, timeline and summary, as soon as it is done.
    // `streamed`: its timeline was written as it ran.
    void finish_without_packets(size_t i, const LlmOutcome& o, const std::string& mode, const std::string& note, Clock::time_point t0,
                                std::vector<FlowRow> flows, bool streamed, const std::vector<FabricEvent>& events = {}) {
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        Metrics metrics = llm_metrics(o);
        metrics.emplace_back("wall_time", wall, "s");
        if (!streamed) store_.timeline(id(i), timeline_rows(o.timeline));
        commit(i, "ok", note, int64_t(o.iteration_time_s * o.iterations * 1e12), wall, std::move(flows), metrics);
        nlohmann::json j = llm_summary_json(o);
        j["id"] = id(i);
        j["experiment"] = id(i);
        j["status"] = "ok";
        j["network_mode"] = mode;
        j["notes"] = note;
        for (const FabricEvent& ev : events) j["fabric_events"].push_back(ev.what);
        if (!events.empty()) store_.fabric_events(id(i), event_rows(events));
        j["wall_time_s"] = wall;
        report(i, j, wall);
    }

    // SimAI's closed form: no task graph, no network.
    void run_busbw(size_t i, const LlmWorkload& w) {
        started(i);
        const auto t0 = Clock::now();
        if (ratios_.nic.empty()) ratios_ = load_busbw_ratios(presets_);
        Diagnostics warnings;
        const BusbwEstimate est = estimate_simai_import(w, uint32_t(fabrics_[i]->count(NodeKind::host)), ratios_, warnings);
        warn(i, warnings);
        finish_without_packets(i, busbw_outcome(est), "busbw",
                               "SimAI's analytical bus-bandwidth estimate (SimAI_analytical): no task graph, no network; exposed DP_EP " +
                                   std::to_string(est.exposed_dp_ep_s) + " s of the exposed DP",
                               t0, {}, false);
    }

    void run_out_of_memory(size_t i, const std::string& message) {
        store_.experiment_started(id(i));
        commit(i, "oom", message, 0, 0, {}, {});
        report(i, {{"id", id(i)}, {"experiment", id(i)}, {"status", "oom"}, {"message", message}}, 0);
    }

    // The fabric as its events leave it at the start, weighted routes, paths spread (workload/flow_network.h);
    // experiments of a sweep with the fabric's plain routes share them.
    const Routes& routes_for(size_t i, const FlowNetwork& net) {
        if (net.routes) return *net.routes;
        auto cached = routes_of_.find(fabrics_[i]);
        if (cached == routes_of_.end()) cached = routes_of_.emplace(fabrics_[i], build_routes(*fabrics_[i])).first;
        return cached->second;
    }

    void run_without_packets(size_t i, const LlmWorkload& w) {
        const Scenario& s = loaded_.scenarios[i];
        const LlmJob& job = *jobs_[i];
        started(i);
        const auto t0 = Clock::now();
        const FlowNetwork net = flow_network(s, *fabrics_[i]);
        const Fabric* fabric = &net.fabric(*fabrics_[i]);
        const Routes* routes = &routes_for(i, net);
        const bool flow = w.network_mode != NetworkMode::analytic;
        TimelineWriter timeline(store_, id(i), job.graph, s.output.sample_interval.count);
        const uint32_t mtu = uint32_t(s.network.packet_payload.count);
        const LlmOutcome o = flow ? run_llm_flow(job, *fabric, *routes, wire_format(s), tables_, [&](const Executor& x) { timeline.write(x); }, timeline.pace(), net.split,
                                                 net.changes)
                                  : run_llm_analytic(job, *fabric, *routes, mtu);
        finish_without_packets(i, o, flow ? "flow" : "analytic", without_packets_note(w, job, flow), t0,
                               s.output.record_fct ? transfer_rows(job, o, *fabric, *routes, mtu) : std::vector<FlowRow>{}, flow,
                               net.events);
        jobs_[i].reset();  // its graph is done with: a sweep of large jobs holds one at a time
    }

    // Experiment i: run at once unless it is timed at packet level, which joins the batch.
    void prepare(size_t i) {
        const Scenario& s = loaded_.scenarios[i];
        if (s.workload.jobs) return prepare_mix(i);
        workloads_[i] = std::make_unique<LlmWorkload>(*s.workload.llm);  // with its custom algorithms read
        LlmWorkload& w = *workloads_[i];
        if (!w.compute.operator_table.empty()) load_operator_table(tables_, w.compute.operator_table);
        if (w.collectives.model == CollectiveModel::busbw) return run_busbw(i, w);
        Diagnostics warnings;
        jobs_[i] = std::make_unique<LlmJob>(prepare_any_llm_job(w, *fabrics_[i], tables_, warnings));
        warn(i, warnings);
        if (!jobs_[i]->oom_message.empty()) return run_out_of_memory(i, jobs_[i]->oom_message);
        if (w.network_mode != NetworkMode::packet || jobs_[i]->transfers.empty()) return run_without_packets(i, w);
        packet_inputs_.push_back({id(i), &s, fabrics_[i], llm_flows(*jobs_[i], w.collectives.priority)});
        packet_index_.push_back(i);
    }

    // A mix of jobs: placed, prepared and merged (session/mix_prepare.h); run at once off the packet level,
    // else its merged job joins the packet batch (and each job alone the batch before it).
    void prepare_mix(size_t i) {
        const Scenario& s = loaded_.scenarios[i];
        for (const JobSpec& j : s.workload.jobs->jobs)
            if (!j.llm.compute.operator_table.empty()) load_operator_table(tables_, j.llm.compute.operator_table);
        Diagnostics warnings;
        mixes_[i] = std::make_unique<PreparedMix>(prepare_job_mix(s, *fabrics_[i], tables_, warnings));
        warn(i, warnings);
        const PreparedMix& m = *mixes_[i];
        if (!m.oom_message.empty()) return run_out_of_memory(i, m.oom_message);
        store_.jobs(id(i), job_rows(m, *fabrics_[i]));  // the inspector names each job's ranks while it runs
        const LlmJob& merged = m.mix.merged;
        if (m.workloads[0]->network_mode != NetworkMode::packet || merged.transfers.empty()) return run_mix_without_packets(i);
        packet_inputs_.push_back({id(i), &s, fabrics_[i], llm_flows(merged, m.workloads[0]->collectives.priority)});
        packet_index_.push_back(i);
    }

    void run_mix_without_packets(size_t i) {
        const Scenario& s = loaded_.scenarios[i];
        PreparedMix& m = *mixes_[i];
        started(i);
        const auto t0 = Clock::now();
        const FlowNetwork net = flow_network(s, *fabrics_[i]);
        const Fabric& fabric = net.fabric(*fabrics_[i]);
        const Routes& routes = routes_for(i, net);
        const bool flow = m.workloads[0]->network_mode != NetworkMode::analytic;
        const uint32_t mtu = uint32_t(s.network.packet_payload.count);
        auto run = [&](const LlmJob& job, const Summarize& summarize, const std::function<void(const Executor&)>& watch, int64_t pace) {
            return flow ? run_llm_flow(job, fabric, routes, wire_format(s), tables_, watch, pace, net.split, net.changes, summarize)
                        : run_llm_analytic(job, fabric, routes, mtu, summarize);
        };
        // The mix and, for its slowdowns, each job alone: independent runs, spread over the backend's threads
        // (the mix, the longest, first).
        std::vector<double> alone(s.workload.jobs->isolation ? m.mix.parts.size() : 0);
        TimelineWriter timeline(store_, id(i), m.mix.merged.graph, s.output.sample_interval.count, job_of_rank(m.mix));
        std::vector<LlmOutcome> per_job;
        LlmOutcome all;
        run_tasks(1 + alone.size(), threads_, [&](size_t task) {
            if (task > 0) {
                alone[task - 1] = job_measure(m.mix.parts[task - 1], run(m.mix.parts[task - 1].job, {}, {}, 0));
                return;
            }
            all = run(
                m.mix.merged,
                [&](const Executor& x) {
                    timeline.write(x);  // what finished since the last piece (the analytic bound: all of it)
                    return summarize_mix(m.mix, x.times(), per_job);
                },
                [&](const Executor& x) { timeline.write(x); }, timeline.pace());
        });
        const MixResults r = mix_results(m, *fabrics_[i], per_job, alone);
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        Metrics metrics = r.metrics;
        metrics.emplace_back("wall_time", wall, "s");
        store_.jobs(id(i), r.rows);
        if (!net.events.empty()) store_.fabric_events(id(i), event_rows(net.events));
        const std::string note = without_packets_note(*m.workloads[0], m.mix.merged, flow) + "; " + std::to_string(m.mix.parts.size()) + " jobs" +
                                 (alone.empty() ? "" : ", each also run alone on its hosts for its slowdown");
        commit(i, "ok", note, int64_t(r.iteration_time_s * 1e12), wall,
               s.output.record_fct ? transfer_rows(m.mix.merged, all, fabric, routes, mtu) : std::vector<FlowRow>{}, metrics);
        nlohmann::json j = mix_summary(i, all, r);
        j["network_mode"] = flow ? "flow" : "analytic";
        j["notes"] = note;
        for (const FabricEvent& ev : net.events) j["fabric_events"].push_back(ev.what);
        j["wall_time_s"] = wall;
        report(i, j, wall);
        mixes_[i].reset();
    }

    nlohmann::json mix_summary(size_t i, const LlmOutcome& all, const MixResults& r) const {
        nlohmann::json j;
        j["id"] = id(i);
        j["experiment"] = id(i);
        j["status"] = "ok";
        j["iteration_time_s"] = r.iteration_time_s;
        j["iterations"] = all.iterations;
        j["ops"] = all.ops;
        j["network_flows"] = all.flows;
        j["jobs"] = r.jobs;
        return j;
    }

    // Each job of every packet-level mix alone on its hosts, as a batch of its own before the packet batch, not
    // stored: its iteration time is the slowdown's denominator.
    void run_alone_batch(const SessionBackend& backend, std::atomic<bool>& cancel) {
        std::vector<ExperimentInput> inputs;
        std::vector<std::pair<size_t, size_t>> which;  // per alone experiment: (experiment, job)
        for (size_t i : packet_index_) {
            if (!mixes_[i] || !loaded_.scenarios[i].workload.jobs->isolation) continue;
            const PreparedMix& m = *mixes_[i];
            alone_[i].assign(m.mix.parts.size(), 0);
            for (size_t p = 0; p < m.mix.parts.size(); ++p) {
                const LlmJob& job = m.mix.parts[p].job;
                if (job.transfers.empty()) continue;  // nothing leaves its servers: its flow-level time below
                inputs.push_back({id(i) + "/alone/" + m.mix.parts[p].name, &loaded_.scenarios[i], fabrics_[i], llm_flows(job, job.workload->collectives.priority)});
                which.emplace_back(i, p);
            }
            std::optional<FlowNetwork> net;  // built once, for the jobs whose traffic never leaves their servers
            for (size_t p = 0; p < m.mix.parts.size(); ++p) {
                if (!m.mix.parts[p].job.transfers.empty()) continue;
                if (!net) net = flow_network(loaded_.scenarios[i], *fabrics_[i]);
                alone_[i][p] = job_measure(m.mix.parts[p], run_llm_flow(m.mix.parts[p].job, net->fabric(*fabrics_[i]), routes_for(i, *net),
                                                                        wire_format(loaded_.scenarios[i]), tables_));
            }
        }
        if (inputs.empty()) return;
        if (observer_.note) observer_.note("jobs", "running " + std::to_string(inputs.size()) + " jobs alone on their hosts first (workload.isolation)", false);
        Batch batch = compile_batch(inputs);
        std::vector<std::unique_ptr<LlmDriver>> drivers;
        for (size_t e = 0; e < inputs.size(); ++e) {
            const auto [i, p] = which[e];
            drivers.push_back(std::make_unique<LlmDriver>(mixes_[i]->mix.parts[p].job, batch, uint32_t(e), *fabrics_[i], tables_));
        }
        SessionWorkload hooks;
        hooks.drive = [&](uint32_t e, int64_t now, uint32_t done) { return drivers[e]->drive(now, done); };
        hooks.on_done = [&](uint32_t e, std::string& status, nlohmann::json&, Metrics&) {
            const auto [i, p] = which[e];
            const Executor& x = drivers[e]->executor();
            if (!x.finished()) return;
            status = "ok";
            alone_[i][p] = job_measure(mixes_[i]->mix.parts[p], summarize_llm(mixes_[i]->mix.parts[p].job, x));
        };
        SessionObserver quiet;
        quiet.note = observer_.note;
        run_session(batch, inputs, nullptr, backend, hooks, quiet, cancel);
    }

    const LlmJob& job_of(size_t i) const { return mixes_[i] ? mixes_[i]->mix.merged : *jobs_[i]; }

    // The observer of the packet batch's session, in the scenario's experiment indices.
    SessionObserver batch_observer() const {
        SessionObserver inner;
        const std::vector<size_t>& index = packet_index_;
        const SessionObserver& o = observer_;
        if (o.started) inner.started = [&index, &o](uint32_t e) { o.started(uint32_t(index[e])); };
        if (o.progress)
            inner.progress = [&index, &o](uint32_t e, int64_t t, uint32_t done, uint32_t flows, double wall) { o.progress(uint32_t(index[e]), t, done, flows, wall); };
        if (o.committed) inner.committed = [&index, &o](uint32_t e, const std::string& status, double wall) { o.committed(uint32_t(index[e]), status, wall); };
        const size_t before = finished_;
        if (o.finished)
            inner.finished = [&index, &o, before](uint32_t e, const ExperimentResult& r, const nlohmann::json& summary, size_t n, double wall) {
                o.finished(uint32_t(index[e]), r, summary, before + n, wall);
            };
        inner.note = o.note;
        return inner;
    }

    void run_packet_batch(const SessionBackend& backend, std::atomic<bool>& cancel) {
        Batch batch = compile_batch(packet_inputs_);
        std::vector<std::unique_ptr<LlmDriver>> drivers;
        std::vector<std::unique_ptr<TimelineWriter>> timelines;
        for (size_t e = 0; e < packet_inputs_.size(); ++e) {
            const size_t i = packet_index_[e];
            drivers.push_back(std::make_unique<LlmDriver>(job_of(i), batch, uint32_t(e), *fabrics_[i], tables_));
            timelines.push_back(std::make_unique<TimelineWriter>(store_, id(i), job_of(i).graph, loaded_.scenarios[i].output.sample_interval.count,
                                                                 mixes_[i] ? job_of_rank(mixes_[i]->mix) : std::vector<uint32_t>{}));
        }
        SessionWorkload hooks;
        hooks.drive = [&](uint32_t e, int64_t now, uint32_t done) {
            const DriverStatus status = drivers[e]->drive(now, done);
            timelines[e]->at(drivers[e]->executor(), now);
            return status;
        };
        hooks.on_done = [&](uint32_t e, std::string& status, nlohmann::json& summary, Metrics& metrics) {
            const size_t i = packet_index_[e];
            const LlmJob& job = job_of(i);
            const Executor& x = drivers[e]->executor();
            timelines[e]->write(x);  // what finished since the last write (a cancelled run keeps what it ran)
            if (!x.finished()) {
                status = summary.value("status", "error") == "cancelled" ? "cancelled" : "error";
                summary["message"] = std::to_string(x.unfinished()) + " of " + std::to_string(job.graph.size()) + " tasks did not run";
                return;
            }
            status = "ok";
            if (mixes_[i]) {
                std::vector<LlmOutcome> per_job;
                const LlmOutcome all = summarize_mix(mixes_[i]->mix, x.times(), per_job);
                const MixResults r = mix_results(*mixes_[i], *fabrics_[i], per_job, alone_[i]);
                store_.jobs(id(i), r.rows);
                const nlohmann::json mixed = mix_summary(i, all, r);
                for (const auto& [k, v] : mixed.items()) summary[k] = v;
                summary["network_mode"] = "packet";
                metrics.insert(metrics.begin(), r.metrics.begin(), r.metrics.end());
                return;
            }
            const LlmOutcome o = summarize_llm(job, x);
            const nlohmann::json j = llm_summary_json(o);
            for (const auto& [k, v] : j.items()) summary[k] = v;
            summary["id"] = packet_inputs_[e].id;
            summary["network_mode"] = "packet";
            const Metrics extra = llm_metrics(o);
            metrics.insert(metrics.begin(), extra.begin(), extra.end());
        };
        const SessionResult session = run_session(batch, packet_inputs_, &store_, backend, hooks, batch_observer(), cancel);
        for (size_t e = 0; e < packet_inputs_.size(); ++e) out_.summaries[packet_index_[e]] = session.summaries[e];
        out_.cancelled = session.cancelled;
    }

    const LoadedScenario& loaded_;
    const std::vector<const Fabric*>& fabrics_;
    const PresetLibrary& presets_;
    ResultsStore& store_;
    const SessionObserver& observer_;
    WorkloadTables tables_;
    size_t count_;
    LlmSessionResult out_;
    size_t finished_ = 0;
    std::vector<std::unique_ptr<LlmJob>> jobs_;
    std::vector<std::unique_ptr<LlmWorkload>> workloads_;
    int threads_ = 1;                                    // the backend's: a mix's runs off the packet level share them
    std::vector<std::unique_ptr<PreparedMix>> mixes_;   // experiments of several jobs
    std::vector<std::vector<double>> alone_;             // packet-level mixes: per job its iteration time alone
    std::vector<ExperimentInput> packet_inputs_;
    std::vector<size_t> packet_index_;  // batch experiment → experiment index
    std::map<const Fabric*, Routes> routes_of_;
    BusbwRatios ratios_;  // read once, on the first busbw experiment
};

}  // namespace

void precheck_llm_experiments(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets) {
    std::optional<WorkloadTables> tables;
    Diagnostics problems;
    std::set<std::string> seen;  // each distinct job once
    for (size_t i = 0; i < loaded.scenarios.size(); ++i) {
        const Scenario& s = loaded.scenarios[i];
        if (s.workload.jobs) {  // a mix: each job's rules and its placement
            if (!seen.insert(s.document["workload"].dump() + s.document["topology"].dump()).second) continue;
            for (const std::string& p : check_jobs(*s.workload.jobs, *fabrics[i], topology_node_names(s.topology))) {
                const size_t colon = p.find(": ");
                const std::string which = loaded.experiments.size() > 1 ? "experiment " + loaded.experiments[i].id + ": " : "";
                problems.error(s.source + ": " + p.substr(0, colon), which + p.substr(colon + 2));
            }
            continue;
        }
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

LlmSessionResult run_llm_session(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const SessionBackend& backend, const SessionObserver& observer, std::atomic<bool>& cancel) {
    LlmSession session(loaded, fabrics, presets, store, observer);
    return session.run(backend, cancel);
}

}  // namespace orrery
