#include "cli/run_session.h"

#include "runtime/device/device_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <thread>

#include "common/diagnostics.h"
#include "telemetry/samples.h"
#include "wormhole/memo.h"

namespace orrery::cli {
namespace {

std::atomic<bool> g_cancel{false};  // set by SIGINT/SIGTERM: the only state a signal handler may touch
// The handler this one replaced, when it is a function (an MPI rank 0's, which says at once what the stopped job
// lost: the launcher may kill it a few milliseconds after SIGTERM).
std::atomic<void (*)(int)> g_chained{nullptr};
extern "C" void on_signal(int signal) {
    g_cancel.store(true);
    if (void (*chained)(int) = g_chained.load()) chained(signal);
}

// Ctrl-C and SIGTERM cancel the run while this lives; the previous handlers come back however it ends.
struct SignalsCancel {
    void (*previous_int)(int) = std::signal(SIGINT, on_signal);
    void (*previous_term)(int) = std::signal(SIGTERM, on_signal);
    SignalsCancel() {
        if (previous_term != SIG_DFL && previous_term != SIG_IGN && previous_term != SIG_ERR && previous_term != on_signal) g_chained.store(previous_term);
    }
    SignalsCancel(const SignalsCancel&) = delete;
    SignalsCancel& operator=(const SignalsCancel&) = delete;
    ~SignalsCancel() {
        std::signal(SIGINT, previous_int);
        std::signal(SIGTERM, previous_term);
        g_chained.store(nullptr);
    }
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

struct Summary {
    nlohmann::json json;
    std::vector<std::tuple<std::string, double, std::string>> metrics;
};

Summary summarize(const Batch& b, uint32_t e, const ExperimentResult& r, double wall) {
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
    Summary s;
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
                 {"simulated_time", double(r.end_time - b.flow[b.experiments[e].flow_begin].start) / 1e6, "us"},
                 {"events", double(r.events), "events"},
                 {"packet_hops", double(r.packet_hops), "packets"},
                 {"engine_memory", double(b.experiment_memory_bytes(e)) / double(1 << 20), "MiB"},
                 {"wall_time", wall, "s"}};
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
    return s;
}

}  // namespace

void ProgressLines::line(const nlohmann::json& j) {
    const std::string text = j.dump() + "\n";
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
}

void ProgressLines::summary(const nlohmann::json& j) {
    if (!summaries_) return;
    std::lock_guard<std::mutex> g(lock_);
    const std::string text = j.dump() + "\n";
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
}

void ProgressLines::run(int64_t run_id, size_t experiments, const std::filesystem::path& store) {
    if (!on_) return;
    std::lock_guard<std::mutex> g(lock_);
    line({{"event", "run"}, {"run_id", run_id}, {"experiments", experiments}, {"store", std::filesystem::absolute(store).string()}});
}

void ProgressLines::start(const std::string& experiment) {
    if (!on_) return;
    std::lock_guard<std::mutex> g(lock_);
    line({{"event", "start"}, {"experiment", experiment}});
}

void ProgressLines::progress(const std::string& experiment, int64_t sim_time_ps, uint64_t flows_done, uint64_t flows, double wall_s) {
    if (!on_) return;
    std::lock_guard<std::mutex> g(lock_);
    auto [it, fresh] = last_wall_.try_emplace(experiment, wall_s);
    if (!fresh && wall_s - it->second < 0.2) return;
    it->second = wall_s;
    line({{"event", "progress"}, {"experiment", experiment}, {"sim_time_ps", sim_time_ps}, {"flows_done", flows_done}, {"flows", flows}, {"wall_s", wall_s}});
}

void ProgressLines::done(const std::string& experiment, const std::string& status, double wall_s) {
    if (!on_) return;
    std::lock_guard<std::mutex> g(lock_);
    line({{"event", "done"}, {"experiment", experiment}, {"status", status}, {"wall_s", wall_s}});
}

void say(ProgressLines* progress, const char* format, ...) {
    if (progress && !progress->lines()) return;
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
}

FailedRunMark::~FailedRunMark() {
    if (std::uncaught_exceptions() <= exceptions_) return;
    try {
        store_.end_run("failed", 0);
    } catch (const std::exception& e) {  // the store itself failed: the error being thrown already says so
        std::fprintf(stderr, "warning: could not mark the run failed in the store: %s\n", e.what());
    }
}

void add_backend_options(CLI::App& app, Backend& backend) {
    app.add_option("--threads", backend.threads, "CPU threads (results are identical for any number)")->check(CLI::Range(1, 1024));
    const std::string system = device_backend_system();
    if (system.empty()) return;  // a build without a device backend does not offer one
    app.add_option_function<std::string>(
           "--backend", [&backend](const std::string& b) { backend.device = b == "device"; },
           "cpu (default) or device: the same steps on this build's device system (" + system +
               (system == "OpenMP" ? ": CPU cores, --threads of them" : ": a CUDA GPU") + "); results are identical")
        ->check(CLI::IsMember({"cpu", "device"}));
}

std::string describe_backend(const Backend& backend) {
    const std::string threads = std::to_string(backend.threads) + " thread" + (backend.threads == 1 ? "" : "s");
    if (!backend.device) return "CPU backend, " + threads;
    const std::string system = device_backend_system();
    return "device backend (" + system + " device system" + (system == "OpenMP" ? ", " + threads : "") + ")";
}

RunRecord cli_run_record(const std::string& name, const std::filesystem::path& file, const std::string& sha256, const Backend& backend,
                         const nlohmann::json& document) {
    RunRecord record;
    if (!document.is_null()) record.scenario_json = document.dump();
    record.scenario_name = name;
    record.scenario_file = std::filesystem::absolute(file).string();
    record.scenario_sha256 = sha256;
    record.threads = backend.threads;
    record.device = describe_backend(backend) + "; " + std::to_string(std::thread::hardware_concurrency()) + " CPU threads available";
    return record;
}

SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, const Backend& backend,
                          const SessionWorkload& workload, ProgressLines* progress) {
    SessionResult out;
    out.summaries.resize(inputs.size());
    const auto t0 = std::chrono::steady_clock::now();
    std::mutex report_lock;
    std::vector<std::chrono::steady_clock::time_point> started(inputs.size(), t0);
    size_t finished = 0;
    g_cancel.store(false);
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
    if (!memo_file.empty()) say(progress, "memo: %zu transients read from %s\n", memo.size(), memo_file.string().c_str());
    if (memo.outdated)
        say(progress, "memo: %zu transients in %s were written by an older Orrery (without each flow's congestion-control state or its bytes in flight at the key): set aside, measured again\n",
            memo.outdated, memo_file.string().c_str());
    RunOptions options;
    options.threads = backend.threads;
    options.memo = &memo;
    options.cancel = &g_cancel;
    options.drive = workload.drive;
    options.on_experiment_start = [&](uint32_t e) {
        started[e] = std::chrono::steady_clock::now();
        if (store) store->experiment_started(inputs[e].id);
        if (progress) progress->start(inputs[e].id);
    };
    if (progress && progress->on())
        options.on_progress = [&](uint32_t e, int64_t clock, uint32_t flows_done) {
            const ExperimentSlice& x = batch.experiments[e];
            progress->progress(inputs[e].id, clock, flows_done, x.flow_end - x.flow_begin,
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started[e]).count());
        };
    // Every rank of a partitioned run sets the same hooks (a hook that reads rows gathers them from all
    // ranks), though only rank 0 stores.
    if (store || backend.partition)
        options.on_sample = [&](uint32_t e, int64_t time) {
            if (!store) return;
            const OutputSpec& o = inputs[e].scenario->output;
            if (!o.record_queues && !o.record_flow_rates) return;  // nothing to take: no empty write every sample
            SampleSet s = take_samples(batch, e, o.record_queues, o.record_flow_rates);
            store->samples(inputs[e].id, time, std::move(s.queues), std::move(s.tiers), std::move(s.rates));
        };
    options.on_experiment_done = [&](uint32_t e, const ExperimentResult& r) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started[e]).count();
        Summary sum = summarize(batch, e, r, wall);
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
            // "done" is announced once the experiment's rows are on disk, so a program that reads the store
            // on that line finds them.
            std::function<void()> committed;
            if (progress) committed = [progress, id = r.id, status, wall] { progress->done(id, status, wall); };
            store->experiment_finished(r.id, status, r.stalled ? "nothing left to happen with flows unfinished" : "", r.end_time,
                                       r.events, r.packet_hops, wall, std::move(flows), std::move(pfc), sum.metrics, std::move(committed));
        } else if (progress) {
            progress->done(r.id, status, wall);
        }
        std::lock_guard<std::mutex> g(report_lock);
        out.summaries[e] = sum.json;
        if (progress) progress->summary(sum.json);
        ++finished;
        if (workload.on_done) {
            say(progress, "[%zu/%zu] %s %s: iteration %.6f s, %zu network flows, %.3f s wall\n", finished, inputs.size(), r.id.c_str(),
                         status.c_str(), sum.json.value("iteration_time_s", 0.0), r.flows.size(), wall);
            return;
        }
        say(progress, "[%zu/%zu] %s %s: %zu flows, mean FCT %.3f us, p99 %.3f us, %.0f PFC pauses, %.3f s wall\n", finished,
                     inputs.size(), r.id.c_str(), sum.json["status"].get<std::string>().c_str(), r.flows.size(),
                     sum.json["fct_mean"]["value"].get<double>(), sum.json["fct_p99"]["value"].get<double>(),
                     sum.json["pfc_pauses"]["value"].get<double>(), wall);
    };
    {
        const SignalsCancel while_running;
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
                std::fprintf(stderr, "%s: %zu experiments need %.1f MiB before packets; %zu group%s (the largest %.1f MiB) on %d %s%s of at most %.1f MiB each\n",
                             describe_backend(backend).c_str(), inputs.size(), double(total) / (1 << 20), plan.groups.size(),
                             plan.groups.size() == 1 ? "" : "s", double(largest) / (1 << 20), plan.devices, unit, plan.devices == 1 ? "" : "s",
                             double(plan.device_bytes) / (1 << 20));
                out.results = run_device(batch, options, device);
                std::fprintf(stderr, "%s: %llu steps in %llu passes; a group held at most %.1f MiB on its device (%llu packet blocks)\n",
                             describe_backend(backend).c_str(), (unsigned long long)report.steps, (unsigned long long)report.passes,
                             double(report.device_bytes) / (1 << 20), (unsigned long long)report.block_capacity);
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
        std::fprintf(stderr, "memo: %zu new transients saved to %s\n", added, memo_file.string().c_str());
    }
    out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.cancelled = g_cancel.load();
    if (store) store->end_run(out.cancelled ? "cancelled" : "finished", out.wall_seconds);
    return out;
}

}  // namespace orrery::cli
