#include "cli/run_session.h"

#include "runtime/device/device_runner.h"
#include "session/session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <thread>

#include "common/diagnostics.h"

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

namespace {

// The session's events as this command prints them: `ids` names the experiments by the indices the session uses.
SessionObserver cli_observer(const std::vector<std::string>& ids, ProgressLines* progress) {
    SessionObserver observer;
    observer.started = [&ids, progress](uint32_t e) {
        if (progress) progress->start(ids[e]);
    };
    if (progress && progress->on())
        observer.progress = [&ids, progress](uint32_t e, int64_t clock, uint32_t flows_done, uint32_t flows, double wall) {
            progress->progress(ids[e], clock, flows_done, flows, wall);
        };
    observer.committed = [&ids, progress](uint32_t e, const std::string& status, double wall) {
        if (progress) progress->done(ids[e], status, wall);
    };
    observer.finished = [&ids, progress](uint32_t e, const ExperimentResult& r, const nlohmann::json& summary, size_t finished, double wall) {
        if (progress) progress->summary(summary);
        const std::string status = summary.value("status", "");
        const char* id = ids[e].c_str();
        if (summary.contains("message")) {
            say(progress, "[%zu/%zu] %s %s: %s\n", finished, ids.size(), id, status.c_str(), summary["message"].get<std::string>().c_str());
        } else if (summary.contains("iteration_time_s")) {  // an LLM job, at any network level
            say(progress, "[%zu/%zu] %s %s: iteration %.6f s (%s), %zu ops, %zu network flows, %.3f s wall\n", finished, ids.size(), id, status.c_str(),
                summary["iteration_time_s"].get<double>(), summary.value("network_mode", "").c_str(), summary.value("ops", size_t(0)),
                summary.value("network_flows", size_t(0)), wall);
        } else {
            say(progress, "[%zu/%zu] %s %s: %zu flows, mean FCT %.3f us, p99 %.3f us, %.0f PFC pauses, %.3f s wall\n", finished, ids.size(), id,
                status.c_str(), r.flows.size(), summary["fct_mean"]["value"].get<double>(), summary["fct_p99"]["value"].get<double>(),
                summary["pfc_pauses"]["value"].get<double>(), wall);
        }
    };
    observer.note = [progress](const std::string& subject, const std::string& text, bool always) {
        if (always) std::fprintf(stderr, "%s: %s\n", subject.c_str(), text.c_str());
        else say(progress, "%s: %s\n", subject.c_str(), text.c_str());
    };
    return observer;
}

SessionBackend engine_backend(const Backend& backend) {
    SessionBackend b;
    b.threads = backend.threads;
    b.device = backend.device;
    b.partition = backend.partition;
    b.name = describe_backend(backend);
    return b;
}

}  // namespace

SessionResult run_session(Batch& batch, const std::vector<ExperimentInput>& inputs, ResultsStore* store, const Backend& backend,
                          const SessionWorkload& workload, ProgressLines* progress) {
    std::vector<std::string> ids;
    for (const ExperimentInput& in : inputs) ids.push_back(in.id);
    g_cancel.store(false);
    const SignalsCancel while_running;
    return orrery::run_session(batch, inputs, store, engine_backend(backend), workload, cli_observer(ids, progress), g_cancel);
}

LlmSessionResult run_llm_session(const LoadedScenario& loaded, const std::vector<const Fabric*>& fabrics, const PresetLibrary& presets,
                                 ResultsStore& store, const Backend& backend, ProgressLines* progress) {
    std::vector<std::string> ids;
    for (const Experiment& x : loaded.experiments) ids.push_back(x.id);
    g_cancel.store(false);
    const SignalsCancel while_running;
    return orrery::run_llm_session(loaded, fabrics, presets, store, engine_backend(backend), cli_observer(ids, progress), g_cancel);
}

}  // namespace orrery::cli
