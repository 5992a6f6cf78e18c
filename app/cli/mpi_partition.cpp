// Map: MpiComm (PartitionComm over MPI_COMM_WORLD: nonblocking sends to the neighbour ranks and probed receives;
// allgather of sizes, then of bytes) → run_partitioned_over_ranks: MPI up, the job's batch compiled on every
// rank, an agreement that every rank got that far, the run, the ranks' figures printed by rank 0, MPI down.
#include "cli/mpi_partition.h"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <numeric>
#include <string>

#include "cli/inputs.h"
#include "scenario/scenario.h"
#include "common/diagnostics.h"

namespace orrery::cli {
namespace {

constexpr int kTagBoundary = 41;  // apart from the sweep's tags (mpi_sweep.cpp), though the two never run together

struct MpiComm final : PartitionComm {
    int me = 0, count = 1;
    std::vector<MPI_Request> requests;
    MpiComm() {
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &count);
    }
    int rank() const override { return me; }
    int ranks() const override { return count; }
    void exchange(const std::vector<int>& peers, const std::vector<std::vector<uint8_t>>& to, std::vector<std::vector<uint8_t>>& from) override {
        requests.assign(peers.size(), MPI_REQUEST_NULL);
        for (size_t i = 0; i < peers.size(); ++i)
            MPI_Isend(to[i].data(), int(to[i].size()), MPI_BYTE, peers[i], kTagBoundary, MPI_COMM_WORLD, &requests[i]);
        for (size_t i = 0; i < peers.size(); ++i) {
            MPI_Status status;
            MPI_Probe(peers[i], kTagBoundary, MPI_COMM_WORLD, &status);
            int size = 0;
            MPI_Get_count(&status, MPI_BYTE, &size);
            from[i].resize(size_t(size));
            MPI_Recv(from[i].data(), size, MPI_BYTE, peers[i], kTagBoundary, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    }
    void allgather(const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>& all) override {
        int size = int(mine.size());
        const size_t ranks_here = static_cast<size_t>(count);
        std::vector<int> sizes(ranks_here), offsets(ranks_here, 0);
        MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 1; r < count; ++r) offsets[size_t(r)] = offsets[size_t(r - 1)] + sizes[size_t(r - 1)];
        std::vector<uint8_t> joined(size_t(offsets.back() + sizes.back()));
        MPI_Allgatherv(mine.data(), size, MPI_BYTE, joined.data(), sizes.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
        all.assign(size_t(count), {});
        for (int r = 0; r < count; ++r) all[size_t(r)].assign(joined.begin() + offsets[size_t(r)], joined.begin() + offsets[size_t(r)] + sizes[size_t(r)]);
    }
};

}  // namespace

// What `--partition` does not split: the refusals name the field or option and say what to do instead.
void refuse_what_partitions_cannot_do(const LoadedScenario& loaded, const Backend& backend) {
    if (backend.device) throw InputError("--partition", "--partition steps on CPU ranks; drop --backend device or --partition");
    if (backend.threads != 1)
        throw InputError("--threads", "--partition steps each rank's share on one thread: start more ranks (mpirun -n) instead of --threads " +
                                          std::to_string(backend.threads));
    for (const Scenario& s : loaded.scenarios) {
        if (s.workload.trains())
            throw InputError(s.source + ": workload.kind",
                             "--partition splits flow workloads; an LLM job's driver reads every node's flows after each step, so it runs in one "
                             "process: drop --partition (mpirun without it runs the sweep's experiments over ranks)");
        if (s.skipping.enabled)
            throw InputError(s.source + ": skipping.enabled",
                             "--partition does not skip steady states (the skipper rewrites every node's rows between steps): set skipping.enabled "
                             "to false, or drop --partition");
    }
}
std::string describe_partition_rank(int rank, const PartitionStats& s) {
    char line[400];
    const double per_step_kib = s.steps ? double(s.bytes_sent) / double(s.steps) / 1024.0 : 0.0;
    std::snprintf(line, sizeof line,
                  "rank %d: %u nodes, %u boundary rings to %u rank%s; %llu steps, %.1f MiB sent (%.1f KiB per step, %llu packets); "
                  "stepping %.3f s, waiting at step boundaries %.3f s (%.0f %% of %.3f s)",
                  rank, s.nodes, s.boundary_rings, s.peers, s.peers == 1 ? "" : "s", (unsigned long long)s.steps, double(s.bytes_sent) / 1048576.0,
                  per_step_kib, (unsigned long long)s.packets_sent, s.step_seconds, s.wait_seconds,
                  s.wall_seconds > 0 ? 100.0 * s.wait_seconds / s.wall_seconds : 0.0, s.wall_seconds);
    return line;
}

int run_partitioned_over_ranks(const PartitionedJob& job) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only the main thread calls MPI
    MpiComm comm;
    ProgressLines quiet(false, false, false);
    ProgressLines& progress = comm.rank() == 0 && job.progress ? *job.progress : quiet;
    SessionResult result;
    std::exception_ptr error;
    try {
        if (comm.rank() == 0) {
            ResultsStore store(job.store_path);
            job.begin_run(store, comm.ranks());
            const FailedRunMark mark_failed(store);
            result = job.run(&store, progress, comm);
        } else {
            result = job.run(nullptr, progress, comm);
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (error) {
        // A failure while stepping ends every rank together (run_partitioned agrees on it); one before or after
        // (rank 0's store) would leave the others waiting at a collective, so the job is aborted.
        try {
            std::rethrow_exception(error);
        } catch (const InputError& e) {
            print_diagnostics(e.diagnostics());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rank %d: error: %s\n", comm.rank(), e.what());
        }
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    if (comm.rank() == 0) {
        for (size_t r = 0; r < result.partition_stats.size(); ++r) say(&progress, "%s\n", describe_partition_rank(int(r), result.partition_stats[r]).c_str());
    }
    MPI_Finalize();
    return result.cancelled ? 130 : 0;
}

}  // namespace orrery::cli
