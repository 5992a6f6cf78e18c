#include "session/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "common/diagnostics.h"
#include "runtime/device/device_runner.h"
#include "telemetry/samples.h"
#include "telemetry/uplink_load.h"
#include "wormhole/memo.h"

namespace orrery {
namespace {

void say(const SessionObserver& observer, const std::string& text, const std::string& subject, bool always = false) {
    if (observer.note) observer.note(subject, text, always);
}

// Drops with PFC on say what lets a lossless switch drop (it drops only what reaches a port after the port paused
// its sender) and the setting that stops it: engine/net/README.md, "PFC settings".
std::string lossless_drops_note(const net::ExperimentParams& ep, uint32_t drops) {
    if (drops == 0 || !ep.pfc_enabled) return "";
    const char* in_flight = "data still in flight when the pause arrived: a link whose headroom (3 x rate x delay) is under a round trip plus a packet";
    std::string text = std::to_string(drops);
    text += " packets dropped although PFC is on: a switch drops only what reaches a port it has paused, ";
    if (ep.ack_pause_class == 0 && ep.ack_switch_class == 0xFF)
        text += "here most likely ACKs, which the NICs send while paused (cc.ack_high_priority) and the switches count in the data's class "
                "(network.ack.switch_queue \"data\", the reference's): \"control\" gives them queue 0. Otherwise it is ";
    text += in_flight;
    return text;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

std::vector<std::pair<int64_t, std::string>> event_rows(const std::vector<FabricEvent>& events) {
    std::vector<std::pair<int64_t, std::string>> rows;
    for (const FabricEvent& ev : events) rows.emplace_back(ev.at_ps, ev.what);
    return rows;
}

SessionSummary summarize_experiment(const Batch& b, uint32_t e, const ExperimentResult& r, double wall) {
    std::vector<double> fct_us, slowdown;
    for (const FlowResult& f : r.flows) {
        if (f.finish == net::kNever) continue;
        const net::FlowInfo& info = b.flow[f.flow];
        fct_us.push_back(double(f.finish - info.start) / 1e6);
        slowdown.push_back(double(f.finish - info.start) / 1000.0 / double(info.standalone_fct_ns));
    }
    size_t pauses = 0;
    for (const net::PfcEvent& p : r.pfc) pauses += p.pause;
    double mean = 0;
    for (double x : fct_us) mean += x / double(fct_us.size());
    double mean_slowdown = 0;
    for (double x : slowdown) mean_slowdown += x / double(slowdown.size());
    SessionSummary s;
    s.metrics = {{"flows", double(r.flows.size()), "flows"},
                 {"flows_finished", double(fct_us.size()), "flows"},
                 {"fct_mean", mean, "us"},
                 {"fct_p50", percentile(fct_us, 0.5), "us"},
                 {"fct_p99", percentile(fct_us, 0.99), "us"},
                 {"fct_max", fct_us.empty() ? 0 : *std::max_element(fct_us.begin(), fct_us.end()), "us"},
                 {"slowdown_mean", mean_slowdown, "ratio"},
                 {"slowdown_p99", percentile(slowdown, 0.99), "ratio"},
                 {"pfc_pauses", double(pauses), "frames"},
                 {"drops", double(r.drops), "packets"},
                 {"lost_on_links", double(r.lost), "packets"},
                 {"lost_to_failures", double(r.lost_to_failures), "packets"},
                 {"retransmits", double(r.retransmits), "packets"},
                 {"timeouts", double(r.timeouts), "timeouts"},
                 {"simulated_time", double(r.end_time - b.flow[b.experiments[e].flow_begin].start) / 1e6, "us"},
                 {"events", double(r.events), "events"},
                 {"packet_hops", double(r.packet_hops), "packets"},
                 {"engine_memory", double(b.experiment_memory_bytes(e)) / double(1 << 20), "MiB"},
                 {"wall_time", wall, "s"}};
    for (const TierImbalance& t : uplink_imbalance(b, e))
        s.metrics.push_back({"uplink_imbalance_tier" + std::to_string(t.tier), t.max_over_mean, "ratio"});
    if (b.experiments[e].skipping.enabled) {
        const wormhole::SkipReport& k = r.skipping;
        const double saved = double(k.events_saved);
        s.metrics.push_back({"skips", double(k.skips.size()), "spans"});
        s.metrics.push_back({"bytes_skipped", double(k.bytes_credited), "bytes"});
        s.metrics.push_back({"events_skipped_estimate", saved, "events"});
        s.metrics.push_back({"events_skipped_share", saved + double(r.events) > 0 ? saved / (saved + double(r.events)) : 0.0, "ratio"});
        s.metrics.push_back({"memo_hits", double(k.memo_hits), "lookups"});
        s.metrics.push_back({"memo_misses", double(k.memo_misses), "lookups"});
        s.metrics.push_back({"memo_follows", double(k.memo_follows), "lookups"});
        s.metrics.push_back({"tails_measured", double(k.tails_measured), "tails"});
        s.metrics.push_back({"tail_replays", double(k.tail_replays), "skips"});
    }
    s.json = {{"experiment", r.id},
              {"status", r.cancelled ? "cancelled" : r.stalled ? "stalled" : "finished"}};
    for (const auto& [name, value, unit] : s.metrics) s.json[name] = {{"value", value}, {"unit", unit}};
    for (const FabricEvent& ev : r.fabric_events) s.json["fabric_events"].push_back(ev.what);
    return s;
}

SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, const SessionBackend& backend,
                          const SessionWorkload& workload, const SessionObserver& observer, std::atomic<bool>& cancel) {
    SessionResult out;
    out.summaries.resize(inputs.size());
    const auto t0 = std::chrono::steady_clock::now();
    std::mutex report_lock;
    std::vector<std::chrono::steady_clock::time_point> started(inputs.size(), t0);
    size_t finished = 0;
    // The memo every experiment reads (as it stood before the run) and the file it persists in.
    std::filesystem::path memo_file;
    for (const ExperimentInput& in : inputs) {
        const SkippingSpec& k = in.scenario->skipping;
        if (!k.enabled || !k.memo || k.memo_file.empty()) continue;
        if (!memo_file.empty() && memo_file != k.memo_file)
            throw InputError(in.scenario->source + ": skipping.memo_file", "the experiments of one run share one memo file; found both " + memo_file.string() + " and " +
                                                                                k.memo_file.string());
        memo_file = k.memo_file;
    }
    const wormhole::MemoTable memo = memo_file.empty() ? wormhole::MemoTable{} : wormhole::load_memo(memo_file);
    if (!memo_file.empty()) say(observer, std::to_string(memo.size()) + " transients read from " + memo_file.string(), "memo");
    if (memo.outdated)
        say(observer, std::to_string(memo.outdated) + " transients in " + memo_file.string() +
                          " were written by an older Orrery (without each flow's congestion-control state or its bytes in flight at the key): set aside, measured again",
            "memo");
    RunOptions options;
    options.threads = backend.threads;
    options.memo = &memo;
    options.cancel = &cancel;
    options.drive = workload.drive;
    options.on_experiment_start = [&](uint32_t e) {
        started[e] = std::chrono::steady_clock::now();
        if (store) store->experiment_started(inputs[e].id);
        if (observer.started) observer.started(e);
    };
    if (observer.progress)
        options.on_progress = [&](uint32_t e, int64_t clock, uint32_t flows_done) {
            const ExperimentSlice& x = batch.experiments[e];
            observer.progress(e, clock, flows_done, x.flow_end - x.flow_begin,
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - started[e]).count());
        };
    // Every rank of a partitioned run sets the same hooks (a hook that reads rows gathers them from all
    // ranks), though only rank 0 stores.
    // Each experiment's uplinks as the last sample found them (its own slot: experiments sample on their workers).
    std::vector<std::pair<int64_t, std::vector<UplinkBusy>>> last_busy(inputs.size());
    if (store || backend.partition)
        options.on_sample = [&](uint32_t e, int64_t time) {
            if (!store) return;
            const OutputSpec& o = inputs[e].scenario->output;
            if (!o.record_queues && !o.record_flow_rates) return;  // nothing to take: no empty write every sample
            SampleSet s = take_samples(batch, e, o.record_queues, o.record_flow_rates);
            store->samples(inputs[e].id, time, std::move(s.queues), std::move(s.tiers), std::move(s.rates));
            if (!o.record_queues) return;
            // The uplinks' utilization since the last sample, and what was lost and resent so far.
            auto& [before_ps, before] = last_busy[e];
            std::vector<UplinkBusy> now = uplink_busy(batch, e);
            const int64_t from = before.empty() ? 0 : before_ps;  // the run starts at 0
            std::vector<UplinkUtilization> uplinks;
            for (const UplinkBusy& u : now) {
                const UplinkBusy* prev = nullptr;
                for (const UplinkBusy& p : before)
                    if (p.tier == u.tier) prev = &p;
                uplinks.push_back({u.tier, utilization_permille(prev ? prev->busy_ns : std::vector<uint64_t>{}, u.busy_ns, time - from)});
            }
            store->fabric_samples(inputs[e].id, time, std::move(uplinks), fabric_counters(batch, e));
            before_ps = time;
            before = std::move(now);
        };
    options.on_experiment_done = [&](uint32_t e, const ExperimentResult& r) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started[e]).count();
        SessionSummary sum = summarize_experiment(batch, e, r, wall);
        if (const std::string why = lossless_drops_note(batch.params[e], r.drops); !why.empty()) say(observer, why, inputs[e].id, true);
        std::string status = sum.json["status"];
        if (workload.on_done) {
            workload.on_done(e, status, sum.json, sum.metrics);
            sum.json["status"] = status;
        }
        if (store) {
            std::vector<FlowRow> flows;
            const OutputSpec& o = inputs[e].scenario->output;
            if (o.record_fct)
                for (const FlowResult& f : r.flows) {
                    const net::FlowInfo& i = batch.flow[f.flow];
                    flows.push_back({f.flow - batch.experiments[e].flow_begin, batch.node_fabric_id[i.src], batch.node_fabric_id[i.dst], i.sport,
                                     i.dport, i.pg, i.size, i.start, f.finish == net::kNever ? -1 : f.finish, int64_t(i.standalone_fct_ns) * 1000});
                }
            std::vector<std::tuple<int64_t, uint32_t, uint32_t, uint32_t, uint32_t>> pfc;
            if (o.record_pfc)
                for (const net::PfcEvent& p : r.pfc) pfc.emplace_back(p.time, p.node, p.node_type, p.ifindex, p.pause);
            if (batch.experiments[e].skipping.enabled) store->skipping(r.id, r.skipping);
            if (!r.fabric_events.empty()) store->fabric_events(r.id, event_rows(r.fabric_events));
            // "done" is announced once the experiment's rows are on disk, so a program that reads the store
            // on that line finds them.
            std::function<void()> committed;
            if (observer.committed) committed = [&observer, e, status, wall] { observer.committed(e, status, wall); };
            store->experiment_finished(r.id, status, r.stalled ? "nothing left to happen with flows unfinished" : "", r.end_time,
                                       r.events, r.packet_hops, wall, std::move(flows), std::move(pfc), sum.metrics, std::move(committed));
        } else if (observer.committed) {
            observer.committed(e, status, wall);
        }
        std::lock_guard<std::mutex> g(report_lock);
        out.summaries[e] = sum.json;
        ++finished;
        if (observer.finished) observer.finished(e, r, sum.json, finished, wall);
    };
    {
        try {
            if (backend.device) {
                // What each device will hold before packets (blocks grow as the run needs, up to the device's memory).
                DeviceReport report;
                DeviceOptions device;
                device.report = &report;
                const DevicePlan plan = plan_device_run(batch, backend.threads, device);
                uint64_t largest = 0, total = 0;
                for (const DeviceGroup& g : plan.groups) largest = std::max(largest, g.bytes), total += g.bytes;
                // Under OpenMP each "device" is a CPU thread stepping its groups.
                const char* unit = device_backend_system() == "OpenMP" ? "thread" : "device";
                char line[320];
                std::snprintf(line, sizeof line, "%zu experiments need %.1f MiB before packets; %zu group%s (the largest %.1f MiB) on %d %s%s of at most %.1f MiB each",
                              inputs.size(), double(total) / (1 << 20), plan.groups.size(), plan.groups.size() == 1 ? "" : "s", double(largest) / (1 << 20),
                              plan.devices, unit, plan.devices == 1 ? "" : "s", double(plan.group_bytes) / (1 << 20));
                say(observer, line, backend.name, true);
                out.results = run_device(batch, options, device);
                std::snprintf(line, sizeof line, "%llu steps in %llu passes; a group held at most %.1f MiB on its device (%llu packet blocks)",
                              (unsigned long long)report.steps, (unsigned long long)report.passes, double(report.device_bytes) / (1 << 20),
                              (unsigned long long)report.block_capacity);
                say(observer, line, backend.name, true);
            } else if (backend.partition) {
                const PartitionPlan plan = plan_partition(batch, backend.partition->ranks());
                out.results = run_partitioned(batch, options, plan, *backend.partition, &out.partition_stats);
            } else {
                out.results = run_cpu(batch, options);
            }
        } catch (...) {
            if (store) store->end_run("failed", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            throw;
        }
    }
    if (!memo_file.empty()) {
        std::vector<wormhole::MemoEntry> learned;  // in experiment order, whatever order they finished in
        for (const ExperimentResult& r : out.results)
            for (const wormhole::MemoEntry& m : r.skipping.learned) learned.push_back(m);
        const size_t added = wormhole::save_memo(memo_file, learned);
        say(observer, std::to_string(added) + " new transients saved to " + memo_file.string(), "memo", true);
    }
    out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.cancelled = cancel.load();
    if (store) store->end_run(out.cancelled ? "cancelled" : "finished", out.wall_seconds);
    return out;
}

}  // namespace orrery
