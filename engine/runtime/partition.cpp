// Map: run_partitioned (its plan: partition_plan.cpp), per step: PartitionSteps::process (this rank's nodes)
// → exchange (boundary rings: the writer's rank reads its copy of the ring empty and sends the packets; the
// reader's rank appends them to its copy and publishes the tail its reader will see next step, as the writer
// would have) → agree (every rank's summaries and cancel/failure flags, merged in rank order) → the host step
// (stepper.h), identical on every rank. Hooks that read rows (samples, queue snapshots, the end of an
// experiment) pull first: the owners' rows of that experiment are gathered to every rank.
#include "runtime/partition.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/diagnostics.h"
#include "net/node.h"
#include "runtime/block_arena.h"
#include "runtime/stepper.h"

namespace orrery {
namespace {

using namespace net;
using Message = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

void put_bytes(Message& out, const void* from, size_t bytes) {
    const size_t at = out.size();
    out.resize(at + bytes);
    std::memcpy(out.data() + at, from, bytes);
}

void take_bytes(const Message& in, size_t& at, void* into, size_t bytes) {
    if (at + bytes > in.size()) throw std::runtime_error("partitioned run: a message from another rank is shorter than its contents");
    std::memcpy(into, in.data() + at, bytes);
    at += bytes;
}

template <class T>
void put(Message& out, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(out, &value, sizeof(T));
}

template <class T>
T take(const Message& in, size_t& at) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take_bytes(in, at, &value, sizeof(T));
    return value;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rings between this rank and one other, in ascending row order on both sides.
struct Boundary {
    int peer = 0;
    std::vector<uint32_t> out_rings;  // written by this rank's nodes, read by the peer's
    std::vector<uint32_t> in_rings;   // written by the peer's nodes, read by this rank's
};

uint32_t ring_writer(const Batch& b, uint32_t row) { return b.port[b.port[row].peer_port].node; }

struct PartitionSteps final : StepBackend {
    Batch& b;
    const PartitionPlan& plan;
    PartitionComm& comm;
    std::vector<ExperimentResult>& results;
    const int me;
    NetView view;
    WorkerStorage worker;
    std::vector<uint32_t> nodes;                       // this rank's, in locality order
    std::vector<std::vector<uint32_t>> nodes_of;       // per experiment: this rank's nodes
    std::vector<Boundary> boundaries;
    std::vector<int> peer_ranks;
    std::vector<Message> to, from;
    std::vector<StepSummary> agreed;                   // per experiment, after the last agreement
    std::vector<std::vector<PfcEvent>> local_pfc;      // per experiment: what this rank's nodes received (node = fabric id)
    std::atomic<bool> agreed_cancel{false};
    bool failed_somewhere = false;
    const Stepper* stepper = nullptr;
    PartitionStats stats;

    PartitionSteps(Batch& batch, const PartitionPlan& p, PartitionComm& c, std::vector<ExperimentResult>& r)
        : b(batch), plan(p), comm(c), results(r), me(c.rank()), view(batch.view()), worker(*batch.arena) {
        view.store.cache = &worker.cache;
        view.pfc_log = &worker.log;
        nodes_of.resize(b.experiments.size());
        agreed.resize(b.experiments.size());
        local_pfc.resize(b.experiments.size());
        for (uint32_t e = 0; e < b.experiments.size(); ++e) {
            const ExperimentSlice& x = b.experiments[e];
            for (uint32_t n : locality_order(b, x.node_begin, x.node_end))
                if (plan.owner[n] == me) nodes_of[e].push_back(n), nodes.push_back(n);
        }
        std::map<int, Boundary> by_peer;
        for (uint32_t row = 0; row < b.port.size(); ++row) {
            const int writer = plan.owner[ring_writer(b, row)], reader = plan.owner[b.port[row].node];
            if (writer == reader) continue;
            if (writer == me) by_peer[reader].out_rings.push_back(row);
            if (reader == me) by_peer[writer].in_rings.push_back(row);
        }
        for (auto& [peer, boundary] : by_peer) {
            boundary.peer = peer;
            stats.boundary_rings += uint32_t(boundary.out_rings.size() + boundary.in_rings.size());
            peer_ranks.push_back(peer);
            boundaries.push_back(std::move(boundary));
        }
        to.resize(boundaries.size());
        from.resize(boundaries.size());
        stats.nodes = uint32_t(nodes.size());
        stats.peers = uint32_t(boundaries.size());
    }

    void process() {
        const auto t0 = Clock::now();
        NetView v = view;
        for (uint32_t n : nodes) process_node(v, n, StepClock{stepper->step, stepper->window_end[b.node_experiment[n]]});
        stats.step_seconds += seconds_since(t0);
    }

    // The packets this step put into rings read elsewhere go to their readers' ranks, and this rank's
    // readers get what other ranks' nodes sent them, visible from the next step on.
    void exchange() {
        NetView v = view;
        // A packet travels as its slot holds it: half a line in a batch without HPCC (net/blocks.h); every rank
        // compiles the same batch, so reader and writer agree on the size.
        const size_t packet_bytes = size_t(1) << v.store.packet_shift;
        for (size_t i = 0; i < boundaries.size(); ++i) {
            Message& out = to[i];
            out.clear();
            const std::vector<uint32_t>& rings = boundaries[i].out_rings;
            for (uint32_t k = 0; k < rings.size(); ++k) {
                const uint32_t row = rings[k];
                const uint64_t count = b.ring_tail[row].tail - b.ring_head[row].head;
                if (count == 0) continue;
                put(out, k);
                put(out, uint32_t(count));
                // This rank's copy of the ring is read empty, as its reader would, so its blocks come back.
                const uint32_t writer = ring_writer(b, row);
                for (uint64_t j = 0; j < count; ++j) put_bytes(out, &ring_pop(v, writer, row), packet_bytes);
                stats.packets_sent += count;
            }
            stats.bytes_sent += out.size();
        }
        const auto t0 = Clock::now();
        comm.exchange(peer_ranks, to, from);
        stats.wait_seconds += seconds_since(t0);
        const StepClock clock{stepper->step, 0};
        for (size_t i = 0; i < boundaries.size(); ++i) {
            const std::vector<uint32_t>& rings = boundaries[i].in_rings;
            const Message& in = from[i];
            for (size_t at = 0; at < in.size();) {
                const uint32_t k = take<uint32_t>(in, at), count = take<uint32_t>(in, at);
                if (k >= rings.size()) throw std::runtime_error("partitioned run: rank " + std::to_string(boundaries[i].peer) + " sent packets for a ring it does not write");
                const uint32_t row = rings[k], reader = b.port[row].node;
                for (uint32_t j = 0; j < count; ++j) {
                    // Without a block (flagged in the node's overflow: the run stops after this step) it is read past.
                    Packet unstored;
                    Packet* into = ring_push_slot(v, row, reader);
                    take_bytes(in, at, into ? into : &unstored, packet_bytes);
                }
            }
            for (uint32_t row : rings) publish_tail(b.ring_tail[row], b.out.data(), clock.read_slot(), clock.write_slot());
        }
    }

    // Every rank's `mine`, by rank; the time it takes counts as waiting at the step boundary.
    std::vector<Message> gather(const Message& mine) {
        std::vector<Message> all;
        const auto t0 = Clock::now();
        comm.allgather(mine, all);
        stats.wait_seconds += seconds_since(t0);
        return all;
    }

    // Every rank's summaries of its nodes, merged in rank order, and whether any rank was cancelled or failed.
    void agree(bool cancel_here, bool failed_here) {
        Message mine;
        put(mine, uint8_t(cancel_here));
        put(mine, uint8_t(failed_here));
        for (uint32_t e = 0; e < b.experiments.size(); ++e) {
            StepSummary s;
            for (uint32_t n : nodes_of[e]) s = merge_summaries(s, node_summary(b.out[n], n));
            put(mine, s);
        }
        const std::vector<Message> all = gather(mine);
        bool cancel = false;
        std::fill(agreed.begin(), agreed.end(), StepSummary{});
        for (const Message& theirs : all) {
            size_t at = 0;
            cancel = take<uint8_t>(theirs, at) || cancel;
            failed_somewhere = take<uint8_t>(theirs, at) || failed_somewhere;
            for (StepSummary& s : agreed) s = merge_summaries(s, take<StepSummary>(theirs, at));
        }
        agreed_cancel.store(cancel, std::memory_order_relaxed);
    }

    // Rows of experiment e's owners to every rank: the columns host hooks read (net/columns.h: gather), row by
    // row from each row's owner.
    template <class Visit>
    void each_row(uint32_t e, Visit visit) {
        const ExperimentSlice& x = b.experiments[e];
        for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
#define ORRERY_COLUMN(T, name, access, dim, hooks, share, gather) \
    if constexpr (net::ColumnGather::gather == net::ColumnGather::Node) visit(b.name[n], plan.owner[n]);
            ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
        }
        for (uint32_t row = x.port_begin; row < x.port_end; ++row) {
            const int owner = plan.owner[b.port[row].node];
#define ORRERY_COLUMN(T, name, access, dim, hooks, share, gather) \
    if constexpr (net::ColumnGather::gather == net::ColumnGather::Port) visit(b.name[row], owner);
            ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
            if (!b.qlen_hist[e].empty())
                for (uint32_t i = 0; i < b.qlen_buckets[row]; ++i) visit(b.qlen_hist[e][b.qlen_offset[row] + i], owner);
        }
        for (uint32_t f = x.flow_begin; f < x.flow_end; ++f) {
            const int sender = plan.owner[b.flow[f].src], receiver = plan.owner[b.flow[f].dst];
#define ORRERY_COLUMN(T, name, access, dim, hooks, share, gather)                                      \
    if constexpr (net::ColumnGather::gather == net::ColumnGather::Sender) visit(b.name[f], sender); \
    if constexpr (net::ColumnGather::gather == net::ColumnGather::Receiver) visit(b.name[f], receiver);
            ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
        }
    }

    StepSummary summary(uint32_t e) override { return agreed[e]; }
    void drain_pfc(std::vector<PfcEvent>&) override {
        for (uint32_t i = 0; i < worker.log.count; ++i) {
            const PfcEvent& ev = worker.log.events[i];
            local_pfc[b.node_experiment[ev.node]].push_back({ev.time, b.node_fabric_id[ev.node], ev.ifindex, ev.node_type, ev.pause});
        }
        worker.log.count = 0;
    }
    void size_pfc_logs(uint64_t events) override { worker.reserve_log(events); }
    void pull(uint32_t e, bool packets) override {
        if (comm.ranks() == 1) {  // every row is this rank's
            if (packets) results[e].pfc = local_pfc[e];
            return;
        }
        Message mine;
        each_row(e, [&](const auto& row, int owner) {
            if (owner == me) put(mine, row);
        });
        if (packets) {  // the experiment ends: its PFC events too
            put(mine, uint64_t(local_pfc[e].size()));
            for (const PfcEvent& ev : local_pfc[e]) put(mine, ev);
        }
        std::vector<Message> all = gather(mine);
        if (packets) results[e].pfc.clear();
        for (int r = 0; r < int(all.size()); ++r) {
            size_t at = 0;
            each_row(e, [&](auto& row, int owner) {
                if (owner != r) return;
                const auto value = take<std::remove_reference_t<decltype(row)>>(all[r], at);
                if (r != me) row = value;
            });
            if (!packets) continue;
            const uint64_t count = take<uint64_t>(all[r], at);
            for (uint64_t i = 0; i < count; ++i) results[e].pfc.push_back(take<PfcEvent>(all[r], at));
        }
    }
    void push(uint32_t) override {}  // every rank ran the same hooks on the same rows
    void release(uint32_t e) override { release_experiment_storage(b, e, worker.cache); }
    void with_block_cache(uint32_t, const std::function<void(BlockCache&)>& use) override { use(worker.cache); }
    void monitor_allocated(uint32_t) override {}
};

}  // namespace

std::vector<ExperimentResult> run_partitioned(Batch& b, const RunOptions& options, const PartitionPlan& plan, PartitionComm& comm,
                                              std::vector<PartitionStats>* stats) {
    if (options.drive) throw std::invalid_argument("a partitioned run cannot drive a workload (an LLM job's driver rewrites any node's flows between steps)");
    for (const ExperimentSlice& x : b.experiments)
        if (x.skipping.enabled) throw std::invalid_argument("experiment " + x.id + ": a partitioned run does not skip steady states (the skipper rewrites every node's rows)");
    for (const ExperimentSlice& x : b.experiments)
        if (x.next_change < x.changes.size())
            throw InputError("experiment " + x.id + ": topology.events", "a partitioned run keeps the fabric as it starts: run events after the start "
                                                                       "in one process, or give them at \"0us\"");
    if (plan.ranks != comm.ranks() || plan.owner.size() != b.node_role.size())
        throw std::invalid_argument("the partition plan was made for another batch or rank count");
    const auto t0 = Clock::now();
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    if (b.experiments.empty()) return results;
    PartitionSteps steps(b, plan, comm, results);
    RunOptions agreed = options;
    agreed.threads = 1;
    agreed.cancel = &steps.agreed_cancel;
    std::vector<uint32_t> all(b.experiments.size());
    for (uint32_t e = 0; e < all.size(); ++e) all[e] = e;
    Stepper stepper(b, steps, results, all, &agreed);
    steps.stepper = &stepper;
    for (;;) {
        if (!stepper.finished) steps.process();
        steps.exchange();
        steps.agree(options.cancel && options.cancel->load(std::memory_order_relaxed), stepper.error != nullptr);
        if (steps.failed_somewhere || stepper.finished) break;
        stepper.run();
        ++steps.stats.steps;
    }
    steps.stats.wall_seconds = seconds_since(t0);
    // Every rank's figures, gathered while all are still here (rank 0 may fail in its own hooks after this).
    std::vector<Message> figures;
    Message mine;
    put(mine, steps.stats);
    comm.allgather(mine, figures);
    if (stats) {
        stats->clear();
        for (const Message& theirs : figures) {
            size_t at = 0;
            stats->push_back(take<PartitionStats>(theirs, at));
        }
    }
    if (stepper.error) std::rethrow_exception(stepper.error);
    if (steps.failed_somewhere) throw std::runtime_error("the partitioned run failed on another rank");
    return results;
}

}  // namespace orrery
