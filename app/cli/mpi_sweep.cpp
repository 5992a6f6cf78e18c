// Map: run_sweep_over_ranks → rank 0: coordinate (hands out experiments, runs some on a thread of its own,
// merges every finished experiment's private store into the results store) · other ranks: serve (run what
// they are given, send back their private store's bytes).
#include "cli/mpi_sweep.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <numeric>
#include <thread>

#include "common/diagnostics.h"

namespace orrery::cli {
namespace {

constexpr int kTagWork = 1, kTagHeader = 2, kTagBytes = 3;
constexpr int kStop = -1;
constexpr size_t kChunk = size_t(1) << 30;  // MPI counts are ints: a store travels in pieces of at most 1 GiB

// Set by SIGTERM or SIGINT on rank 0: the launcher is ending the job (a rank died, or it was cancelled).
std::atomic<int> g_stop_signal{0};
// What rank 0 says when the job is stopped, kept ready by the coordinator: mpirun sends SIGTERM and then SIGKILL
// within milliseconds once a second rank has gone, so the handler writes it itself (write(2) is
// async-signal-safe). Two buffers, so the handler never reads one being rewritten.
struct StopMessage {
    char text[2][16384];
    std::atomic<size_t> length[2] = {0, 0};
    std::atomic<int> ready{-1};     // which buffer holds the current message
    std::atomic<bool> said{false};  // written once
};
StopMessage g_stop_message;
extern "C" void note_stop_signal(int signal) {
    g_stop_signal.store(signal);
    // Nothing ready yet: the coordinator's loop says it (stop_job). Once `said` is set no message is prepared again,
    // and one being prepared meanwhile goes to the other buffer.
    const int b = g_stop_message.ready.load();
    if (b < 0 || g_stop_message.said.exchange(true)) return;
    const size_t n = g_stop_message.length[b].load();
    for (size_t at = 0; at < n;) {
        const ssize_t w = ::write(2, g_stop_message.text[b] + at, n - at);
        if (w <= 0) break;
        at += size_t(w);
    }
}
void prepare_stop_message(const std::string& message) {
    if (g_stop_message.said.load()) return;
    const int b = g_stop_message.ready.load() == 0 ? 1 : 0;
    const size_t n = std::min(message.size(), sizeof g_stop_message.text[b]);
    std::memcpy(g_stop_message.text[b], message.data(), n);
    g_stop_message.length[b].store(n);
    g_stop_message.ready.store(b);
}

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// Where the private stores go: TMPDIR when the user set it, else shared memory (/dev/shm) when it has room,
// else the system's temporary folder. Each experiment's store is created, checkpointed, read and deleted within
// seconds; on a disk its fsyncs made rank 0's experiments 16 % slower than rank 1's (rank 0 also merges).
std::filesystem::path scratch_directory() {
    if (env("TMPDIR")) return std::filesystem::temp_directory_path();
    std::error_code error;
    const std::filesystem::path shm = "/dev/shm";
    const std::filesystem::space_info room = std::filesystem::space(shm, error);
    if (!error && std::filesystem::is_directory(shm, error) && ::access(shm.c_str(), W_OK) == 0 && room.available >= (uint64_t(1) << 30)) return shm;
    return std::filesystem::temp_directory_path();
}

std::filesystem::path private_store(int rank, const std::string& id, const char* what) {
    static const std::filesystem::path directory = scratch_directory();
    return directory /
           ("orrery-" + std::string(what) + "-rank" + std::to_string(rank) + "-pid" + std::to_string(::getpid()) + "-" + id + ".sqlite");
}

void remove_store(const std::filesystem::path& file) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(file.string() + suffix, ignored);
}

std::string read_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(file.string() + ": cannot read the experiment's private store");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::filesystem::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error(file.string() + ": cannot write an experiment's results received from another rank");
}

struct Finished {
    size_t index = 0;
    int rank = 0;
    nlohmann::json summary;
    std::string error;                // what the experiment failed with; empty when it ran
    std::filesystem::path store;      // its private store, on rank 0
};

// Runs experiment `i` into a private store of this rank.
Finished run_private(const RankedSweep& sweep, size_t i, int rank, ProgressLines& progress) {
    Finished f;
    f.index = i;
    f.rank = rank;
    f.store = private_store(rank, sweep.ids[i], "ran");
    remove_store(f.store);
    try {
        ResultsStore store(f.store);
        f.summary = sweep.run_one(i, store, progress);
        store.flush();
    } catch (const std::exception& e) {
        f.error = e.what();
    }
    return f;
}

void send_text(const std::string& text, int to, int tag) { MPI_Send(text.data(), int(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD); }

std::string receive_text(int from, int tag) {
    MPI_Status status;
    MPI_Probe(from, tag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string text(size_t(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return text;
}

// A rank other than 0: runs what it is given until told to stop.
void serve(const RankedSweep& sweep, int rank) {
    ProgressLines quiet(false, false, false);
    for (;;) {
        int index = kStop;
        MPI_Recv(&index, 1, MPI_INT, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (index == kStop) return;
        Finished f = run_private(sweep, size_t(index), rank, quiet);
        std::string bytes;
        if (f.error.empty()) {
            try {
                bytes = read_bytes(f.store);
            } catch (const std::exception& e) {
                f.error = e.what();
            }
        }
        remove_store(f.store);
        send_text(nlohmann::json{{"index", index}, {"summary", f.summary}, {"error", f.error}, {"bytes", bytes.size()}}.dump(), 0, kTagHeader);
        for (size_t at = 0; at < bytes.size(); at += kChunk)
            MPI_Send(bytes.data() + at, int(std::min(kChunk, bytes.size() - at)), MPI_BYTE, 0, kTagBytes, MPI_COMM_WORLD);
    }
}

double number(const nlohmann::json& summary, const char* key) {
    if (!summary.contains(key)) return -1;
    const nlohmann::json& v = summary[key];
    if (v.is_object() && v.contains("value") && v["value"].is_number()) return v["value"].get<double>();
    return v.is_number() ? v.get<double>() : -1;
}

// The line a one-process run prints for a finished experiment, from its summary, with the rank that ran it.
void report_line(ProgressLines* progress, size_t done, size_t total, const std::string& id, int rank, const nlohmann::json& summary) {
    const std::string status = summary.value("status", "?");
    const double wall = number(summary, summary.contains("wall_time") ? "wall_time" : "wall_time_s");
    if (summary.contains("iteration_time_s"))
        say(progress, "[%zu/%zu] %s %s on rank %d: iteration %.6f s, %.3f s wall\n", done, total, id.c_str(), status.c_str(), rank,
            number(summary, "iteration_time_s"), wall);
    else if (summary.contains("fct_mean"))
        say(progress, "[%zu/%zu] %s %s on rank %d: %.0f flows, mean FCT %.3f us, p99 %.3f us, %.0f PFC pauses, %.3f s wall\n", done, total, id.c_str(),
            status.c_str(), rank, number(summary, "flows"), number(summary, "fct_mean"), number(summary, "fct_p99"), number(summary, "pfc_pauses"), wall);
    else
        say(progress, "[%zu/%zu] %s %s on rank %d\n", done, total, id.c_str(), status.c_str(), rank);
}

// Rank 0: hands out experiments longest first, runs some itself, merges all of them into the store.
int coordinate(const RankedSweep& sweep, int ranks) {
    const auto t0 = std::chrono::steady_clock::now();
    ResultsStore store(sweep.store_path);
    sweep.begin_run(store, ranks);
    const FailedRunMark mark_failed(store);
    std::signal(SIGTERM, note_stop_signal);
    std::signal(SIGINT, note_stop_signal);

    const size_t total = sweep.ids.size();
    std::vector<size_t> order(total);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sweep.expected_cost[a] > sweep.expected_cost[b]; });

    std::mutex lock;  // guards next, dispatched, local_done, local_current
    size_t next = 0, dispatched = 0;
    std::deque<Finished> local_done;
    long local_current = -1;
    std::atomic<uint64_t> changes{1};  // of what runs where or is stored: the stop message is made again
    auto take = [&]() -> long {
        std::lock_guard<std::mutex> g(lock);
        if (next >= total) return kStop;
        ++dispatched;
        return long(order[next++]);
    };
    auto started = [&](size_t i) {
        store.experiment_started(sweep.ids[i]);
        if (sweep.progress) sweep.progress->start(sweep.ids[i]);
    };

    std::thread local([&] {
        ProgressLines quiet(false, false, false);
        for (long i; (i = take()) != kStop;) {
            {
                std::lock_guard<std::mutex> g(lock);
                local_current = i;
                ++changes;
            }
            started(size_t(i));
            Finished f = run_private(sweep, size_t(i), 0, quiet);
            std::lock_guard<std::mutex> g(lock);
            local_current = -1;
            ++changes;
            local_done.push_back(std::move(f));
        }
    });

    std::vector<long> at_rank(size_t(ranks), -1);
    auto dispatch = [&](int rank) {
        const long i = take();
        const int index = int(i);
        MPI_Send(&index, 1, MPI_INT, rank, kTagWork, MPI_COMM_WORLD);
        at_rank[size_t(rank)] = i;
        ++changes;
        if (i != kStop) started(size_t(i));
    };
    for (int r = 1; r < ranks; ++r) dispatch(r);

    size_t received = 0, stored = 0;
    std::string first_error, cancelled;
    auto handle = [&](Finished f) {
        ++received;
        const std::string& id = sweep.ids[f.index];
        if (!f.error.empty()) {
            remove_store(f.store);
            if (first_error.empty()) first_error = id + " (rank " + std::to_string(f.rank) + "): " + f.error;
            std::lock_guard<std::mutex> g(lock);
            next = total;  // as a one-process run, an input error ends the run: nothing more is started
            return;
        }
        ++stored;
        ++changes;
        const std::string status = f.summary.value("status", "?");
        if (status == "cancelled" && cancelled.empty()) cancelled = id + " (rank " + std::to_string(f.rank) + ")";
        const double wall = number(f.summary, f.summary.contains("wall_time") ? "wall_time" : "wall_time_s");
        ProgressLines* progress = sweep.progress;
        const std::filesystem::path file = f.store;
        store.merge_experiment(file, id, [progress, file, id, status, wall] {
            remove_store(file);
            if (progress) progress->done(id, status, wall);
        });
        if (sweep.progress) sweep.progress->summary(f.summary);
        report_line(sweep.progress, received, total, id, f.rank, f.summary);
    };

    auto outstanding = [&] {
        std::lock_guard<std::mutex> g(lock);
        return received < dispatched || next < total;
    };
    // The launcher is ending the job (a rank died, or it was cancelled: mpirun then sends SIGTERM to the
    // others, which a running experiment takes as a cancel): say what was lost and end the run. What was
    // merged stays in the store; cancelled experiments are stored as cancelled, as in a one-process run.
    auto stop_text = [&](const std::string& why) {
        std::string lost;
        {
            std::lock_guard<std::mutex> g(lock);
            for (int r = 1; r < ranks; ++r)
                if (at_rank[size_t(r)] >= 0) lost += " " + sweep.ids[size_t(at_rank[size_t(r)])] + " (rank " + std::to_string(r) + ")";
            if (local_current >= 0) lost += " " + sweep.ids[size_t(local_current)] + " (rank 0)";
            for (size_t k = next; k < total; ++k) lost += " " + sweep.ids[order[k]] + " (not started)";
        }
        return "error: the MPI job was stopped (" + why + ": a rank died or the job was cancelled); " + std::to_string(stored) + " of " +
               std::to_string(total) + " experiments are stored in " + sweep.store_path.string() + " (run " + std::to_string(store.run_id()) +
               "); lost:" + (lost.empty() ? std::string(" none") : lost) + "\n";
    };
    // Kept ready for the signal handler, after every change of what is running or stored.
    auto ready_stop_text = [&] { prepare_stop_message(stop_text("a signal")); };
    auto stop_job = [&](const std::string& why) {
        if (!g_stop_message.said.exchange(true)) std::fputs(stop_text(why).c_str(), stderr);
        store.end_run("cancelled", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        store.flush();
        std::fflush(stderr);
        std::_Exit(130);
    };
    uint64_t prepared = 0;
    while (outstanding()) {
        if (const uint64_t c = changes.load(); c != prepared) {
            ready_stop_text();
            prepared = c;
        }
        if (const int signal = g_stop_signal.load()) stop_job("signal " + std::to_string(signal));
        if (!cancelled.empty()) stop_job(cancelled + " was cancelled");
        int arrived = 0;
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, kTagHeader, MPI_COMM_WORLD, &arrived, &status);
        if (arrived) {
            const int rank = status.MPI_SOURCE;
            const nlohmann::json header = nlohmann::json::parse(receive_text(rank, kTagHeader));
            Finished f;
            f.index = header["index"].get<size_t>();
            f.rank = rank;
            f.summary = header["summary"];
            f.error = header["error"].get<std::string>();
            std::string bytes(header["bytes"].get<size_t>(), '\0');
            for (size_t at = 0; at < bytes.size(); at += kChunk)
                MPI_Recv(bytes.data() + at, int(std::min(kChunk, bytes.size() - at)), MPI_BYTE, rank, kTagBytes, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (f.error.empty()) {
                f.store = private_store(rank, sweep.ids[f.index], "received");
                write_bytes(f.store, bytes);
            }
            at_rank[size_t(rank)] = -1;
            handle(std::move(f));
            dispatch(rank);
            continue;
        }
        std::deque<Finished> mine;
        {
            std::lock_guard<std::mutex> g(lock);
            mine.swap(local_done);
        }
        for (Finished& f : mine) handle(std::move(f));
        if (mine.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    local.join();  // every other rank has been sent kStop by now: each is dispatched again as it reports
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    store.end_run(first_error.empty() ? "finished" : "failed", wall);
    store.flush();
    if (!first_error.empty()) {
        std::fprintf(stderr, "error: %s\n%zu of %zu experiments stored in %s (run %lld)\n", first_error.c_str(), stored, total,
                     sweep.store_path.string().c_str(), (long long)store.run_id());
        return 1;
    }
    std::fprintf(stderr, "%zu experiment%s finished on %d rank%s in %.3f s; results in %s (run %lld)\n", total, total == 1 ? "" : "s", ranks,
                 ranks == 1 ? "" : "s", wall, sweep.store_path.string().c_str(), (long long)store.run_id());
    return 0;
}

}  // namespace

void refuse_what_ranks_cannot_do(const LoadedScenario& loaded) {
    for (const Scenario& s : loaded.scenarios) {
        if (s.skipping.enabled && s.skipping.memo && !s.skipping.memo_file.empty())
            throw InputError(s.source + ": skipping.memo_file",
                             "a memo file is not shared between MPI ranks yet: run this sweep in one process, or drop memo_file (skipping and its "
                             "in-run memo work over ranks)");
        if (s.skipping.enabled && s.skipping.memo && s.skipping.share_memo)
            throw InputError(s.source + ": skipping.share_memo",
                             "experiments on different MPI ranks do not share transients: run this sweep in one process, or set share_memo to false");
        const OutputSpec& out = s.output;
        if (!out.hpcc_fct_file.empty() || !out.hpcc_pfc_file.empty() || !out.hpcc_qlen_file.empty())
            throw InputError(s.source + ": output.hpcc_files",
                             "reference-format files are written by one-process runs only: run this scenario without MPI, or read the results store");
    }
}

std::string sbatch_script(const SlurmJob& job) {
    auto quote = [](const std::string& text) {  // single quotes for the shell
        std::string q = "'";
        for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return q + "'";
    };
    std::string out;
    out += "#!/bin/bash\n";
    out += "# Written by `orrery-cli slurm`: runs the sweep of " + job.scenario.string() + " over " + std::to_string(job.nodes) + " node(s) x " +
           std::to_string(job.ranks_per_node) + " MPI rank(s)" + (job.partition ? ", each experiment split over all ranks" : "") + ",\n";
    out += "# rank 0 writing the results store. Submit with: sbatch <this file>\n";
    out += "#SBATCH --job-name=" + job.name + "\n";
    out += "#SBATCH --nodes=" + std::to_string(job.nodes) + "\n";
    out += "#SBATCH --ntasks-per-node=" + std::to_string(job.ranks_per_node) + "\n";
    out += "#SBATCH --cpus-per-task=" + std::to_string(job.threads) + "\n";
    out += "#SBATCH --time=" + job.time_limit + "\n";
    out += "#SBATCH --output=" + job.name + "-%j.log\n";
    out += "set -euo pipefail\n";
    out += "# The MPI plugin this site's Slurm offers to OpenMPI: `srun --mpi=list` shows them.\n";
    out += "srun --mpi=" + job.mpi_plugin + " " + quote(job.cli.string()) + " run " + quote(job.scenario.string()) + " --out " + quote(job.store.string()) +
           " --threads " + std::to_string(job.threads) + (job.partition ? " --partition\n" : " --mpi\n");
    return out;
}

int rank_from_environment() {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (const char* v = env(name)) return std::atoi(v);
    return 0;
}

bool launched_with_several_ranks() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
        if (const char* v = env(name)) return std::atoi(v) > 1;
    return false;
}

int run_sweep_over_ranks(const RankedSweep& sweep) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only the main thread calls MPI
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int code = 0;
    if (rank == 0) code = coordinate(sweep, ranks);
    else serve(sweep, rank);
    MPI_Finalize();
    return code;
}

}  // namespace orrery::cli
