// Map: run_device → DeviceSteps (the StepBackend over DeviceTables) → Stepper (runtime/stepper.h) → per
// step: DeviceTables::step over the nodes of unfinished experiments, then the host step, which asks for
// summaries (reduced on the device) and pulls an experiment's rows only for its hooks.
#include "runtime/device/device_runner.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/diagnostics.h"
#include "common/memory_budget.h"
#include "runtime/memo_rounds.h"
#include "runtime/stepper.h"

#if defined(ORRERY_DEVICE_BACKEND)
#include "runtime/cuda/device.h"
#include "runtime/device/device_tables.h"
#endif

namespace orrery {

#if !defined(ORRERY_DEVICE_BACKEND)

std::string device_backend_system() { return ""; }
uint64_t device_memory_bytes() { return 0; }
int device_count() { return 0; }

std::vector<DeviceGroup> plan_device_groups(const Batch&, uint64_t, int) {
    throw InputError("--backend", "this build of Orrery has no device backend");
}

DevicePlan plan_device_run(const Batch&, int, const DeviceOptions&) {
    throw InputError("--backend", "this build of Orrery has no device backend");
}

std::vector<ExperimentResult> run_device(Batch&, const RunOptions&, const DeviceOptions&) {
    throw InputError("--backend", "this build of Orrery has no device backend (configure with -DORRERY_DEVICE_SYSTEM=CUDA or OMP); use the CPU backend");
}

#else

std::string device_backend_system() { return device::device_system(); }

namespace {

using namespace net;

// Experiment e's queue-monitor histograms, when it has a monitor (allocated when it starts).
uint64_t monitor_bytes(const Batch& b, uint32_t e) {
    return b.params[e].qlen_start == kNever ? 0 : queue_monitor_buckets(b, e) * sizeof(uint32_t);
}

// What experiment e needs on a device before packets: its tables, its histograms, and room for a start of
// packet blocks (four per port).
uint64_t experiment_device_bytes(const Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    return b.experiment_memory_bytes(e) + monitor_bytes(b, e) + uint64_t(x.port_end - x.port_begin) * 4 * device::DeviceTables::kBytesPerBlock;
}

// How a column's rows belong to experiments; `hooks`: hooks read or write it (pulled and pushed).
using Dim = net::ColumnDim;

struct ColumnDim {
    Dim dim;
    bool hooks;
};

// An experiment's rows of a column: [first, first + count).
struct RowRange {
    size_t first = 0, count = 0;
};

// The rows of every dimension an experiment owns (compile_batch lays experiments one after the other, so a
// run of experiments owns one contiguous range of each).
struct ExperimentRows {
    std::vector<RowRange> qps, starts;  // per experiment: its NICs' rows of nic_qps and nic_starts
    explicit ExperimentRows(const Batch& b) : qps(b.experiments.size()), starts(b.experiments.size()) {
        for (uint32_t e = 0; e < b.experiments.size(); ++e) {
            size_t q0 = SIZE_MAX, q1 = 0, s0 = SIZE_MAX, s1 = 0;
            for (uint32_t n = b.experiments[e].node_begin; n < b.experiments[e].node_end; ++n) {
                if (b.node_role[n] != kRoleHost) continue;
                const NicState& nic = b.nic[n];
                q0 = std::min<size_t>(q0, nic.qp_offset), q1 = std::max<size_t>(q1, nic.qp_offset + nic.starts_count);
                s0 = std::min<size_t>(s0, nic.starts_offset), s1 = std::max<size_t>(s1, nic.starts_offset + nic.starts_count);
            }
            qps[e] = q0 < q1 ? RowRange{q0, q1 - q0} : RowRange{};
            starts[e] = s0 < s1 ? RowRange{s0, s1 - s0} : RowRange{};
        }
    }
    // Experiments [e0, e1)'s rows of a dimension; `whole`: the column's size.
    RowRange of(const Batch& b, Dim d, uint32_t e0, uint32_t e1, size_t whole) const {
        const ExperimentSlice& x = b.experiments[e0];
        const ExperimentSlice& y = b.experiments[e1 - 1];
        auto span = [](size_t from, size_t to) { return RowRange{from, to > from ? to - from : 0}; };
        switch (d) {
            case Dim::Node: return span(x.node_begin, y.node_end);
            case Dim::NodeEdge: return span(x.node_begin, y.node_end + 1);
            case Dim::Port: return span(x.port_begin, y.port_end);
            case Dim::Flow: return span(x.flow_begin, y.flow_end);
            case Dim::Tree: return span(b.node_tree_begin[x.node_begin], b.node_tree_begin[y.node_end]);
            case Dim::Experiment: return span(e0, e1);
            case Dim::NicQps: return first_to_last(qps, e0, e1);
            case Dim::NicStarts: return first_to_last(starts, e0, e1);
            case Dim::Whole: break;
        }
        return {0, whole};
    }
    static RowRange first_to_last(const std::vector<RowRange>& r, uint32_t e0, uint32_t e1) {
        size_t from = SIZE_MAX, to = 0;
        for (uint32_t e = e0; e < e1; ++e)
            if (r[e].count) from = std::min(from, r[e].first), to = std::max(to, r[e].first + r[e].count);
        return from < to ? RowRange{from, to - from} : RowRange{};
    }
};

// One group of experiments [e0, e1) on one device: the StepBackend over its DeviceTables.
struct DeviceSteps final : StepBackend {
    Batch& b;
    const ExperimentRows& rows_of;
    // The host's packet blocks are one array for every group: a hook that brings a group's blocks to the
    // host holds this lock until it has sent them back.
    std::mutex& host_blocks;
    uint32_t e0, e1;
    DeviceOptions options;
    uint64_t memory_limit;              // this group's share of its device
    std::vector<device::Column> columns;
    std::vector<ColumnDim> dims;
    std::unique_ptr<device::DeviceTables> tables;
    std::vector<StepSummary> cached;    // this step's summaries
    bool summaries_fresh = false;
    std::vector<bool> rows_pulled;      // per experiment: its rows came to the host in this host step
    std::vector<bool> packets_pulled;   // per experiment: the blocks came to the host in this host step
    std::unique_lock<std::mutex> blocks_held;  // held while the host copy of the blocks is this group's
    bool nodes_changed = true;
    uint64_t passes = 0, steps = 0;

    template <class T, class Alloc>
    void add(const std::vector<T, Alloc>& v, size_t view_offset, Dim d, bool hooks) {
        const RowRange r = rows_of.of(b, d, e0, e1, v.size());
        columns.push_back({const_cast<T*>(v.data()), sizeof(T), r.first, r.count, view_offset});
        dims.push_back({d, hooks});
    }

    DeviceSteps(Batch& batch, const ExperimentRows& rows, std::mutex& blocks, uint32_t first, uint32_t end, const DeviceOptions& o, uint64_t limit)
        : b(batch), rows_of(rows), host_blocks(blocks), e0(first), e1(end), options(o), memory_limit(limit),
          rows_pulled(batch.experiments.size(), false), packets_pulled(batch.experiments.size(), false) {
#define ORRERY_COLUMN(T, name, access, dim, hooks, ...) add(b.name, offsetof(NetView, name), Dim::dim, hooks);
        ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    }

    // Device bytes besides the packet blocks: the columns, three node lists, queue histograms, a PFC log.
    uint64_t fixed_bytes() const {
        uint64_t total = 3 * sizeof(uint32_t) * (b.experiments[e1 - 1].node_end - b.experiments[e0].node_begin) + (1u << 16);
        for (const device::Column& c : columns) total += c.elem_bytes * c.count;
        for (uint32_t e = e0; e < e1; ++e) total += monitor_bytes(b, e);
        return total;
    }

    // Copies the tables to the device: after the stepper's constructor, whose hooks may have changed them.
    // The packet blocks may take what the rest leaves of the group's memory.
    void start(const NetView& host_view) {
        const uint64_t left = memory_limit > fixed_bytes() ? memory_limit - fixed_bytes() : 0;
        const uint64_t max_blocks = std::min<uint64_t>(left / device::DeviceTables::kBytesPerBlock, b.arena->max_blocks());
        tables = std::make_unique<device::DeviceTables>(host_view, columns, uint32_t(b.experiments.size()), std::min(options.initial_blocks, max_blocks),
                                                        max_blocks, options.growth);
        for (uint32_t e = e0; e < e1; ++e)
            if (!b.qlen_hist[e].empty()) tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
    }

    void run_step(const std::vector<int64_t>& window_end, uint64_t step) {
        if (nodes_changed) {
            std::vector<uint32_t> nodes;
            for (uint32_t e = e0; e < e1; ++e)
                if (!b.experiments[e].done)
                    for (uint32_t n = b.experiments[e].node_begin; n < b.experiments[e].node_end; ++n) nodes.push_back(n);
            tables->set_nodes(nodes);
            nodes_changed = false;
        }
        passes += tables->step(step, window_end);
        ++steps;
        summaries_fresh = false;
        std::fill(rows_pulled.begin(), rows_pulled.end(), false);
        std::fill(packets_pulled.begin(), packets_pulled.end(), false);
    }

    StepSummary summary(uint32_t e) override {
        if (!summaries_fresh) {
            cached = tables->summaries();
            summaries_fresh = true;
        }
        return cached[e];
    }
    void drain_pfc(std::vector<PfcEvent>& into) override {
        const std::vector<PfcEvent> events = tables->drain_pfc();
        into.insert(into.end(), events.begin(), events.end());
    }
    void size_pfc_logs(uint64_t events) override { tables->size_pfc_log(events); }

    // Calls move(column, first row, rows) for experiment e's rows of every column hooks read or write.
    template <class Move>
    void hook_rows(uint32_t e, Move move) {
        for (size_t c = 0; c < columns.size(); ++c) {
            if (!dims[c].hooks) continue;
            const RowRange r = rows_of.of(b, dims[c].dim, e, e + 1, columns[c].count);
            if (r.count) move(c, r.first, r.count);
        }
    }

    // Pulling again within a host step brings only what was not pulled yet: a hook may have changed the rows.
    void pull(uint32_t e, bool packets) override {
        if (!rows_pulled[e]) {
            hook_rows(e, [&](size_t c, size_t first, size_t count) { tables->download(c, first, count); });
            if (!b.qlen_hist[e].empty()) tables->download_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
            rows_pulled[e] = true;
        }
        if (packets && !packets_pulled[e]) {
            if (!blocks_held.owns_lock()) blocks_held = std::unique_lock<std::mutex>(host_blocks);
            if (!b.arena->commit_at_least(tables->block_capacity()))
                throw std::runtime_error("no host memory to copy the device's packet blocks for a hook (" +
                                         std::to_string(tables->block_capacity() * BlockArena::kBytesPerBlock >> 20) + " MiB)");
            tables->download_blocks(b.arena->blocks(), b.arena->next());
            packets_pulled[e] = true;
        }
    }
    void push(uint32_t e) override {
        hook_rows(e, [&](size_t c, size_t first, size_t count) { tables->upload(c, first, count); });
        if (!b.qlen_hist[e].empty()) tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
        if (packets_pulled[e]) {
            tables->upload_blocks(b.arena->blocks(), b.arena->next());
            packets_pulled[e] = false;
            // The host copy stays this group's while another of its experiments still has it pulled.
            if (blocks_held.owns_lock() && std::none_of(packets_pulled.begin(), packets_pulled.end(), [](bool pulled) { return pulled; }))
                blocks_held.unlock();
        }
    }
    void release(uint32_t e) override {
        // Walk its chains on the host copy, give the blocks to the device's pool, and send back the
        // emptied rings and queues.
        with_block_cache(e, [&](BlockCache& collect) { release_experiment_storage(b, e, collect); });
        push(e);
        nodes_changed = true;
    }
    // The blocks a hook gives back go to the device's pool; the rows it changed go up with the next push.
    void with_block_cache(uint32_t, const std::function<void(BlockCache&)>& use) override {
        std::vector<uint32_t> freed(tables->block_capacity());
        BlockCache collect;
        collect.free = freed.data();
        collect.capacity = uint32_t(freed.size());
        use(collect);
        freed.resize(collect.count);
        tables->give_blocks(freed);
    }
    void monitor_allocated(uint32_t e) override {
        if (!tables) return;  // start() uploads it
        const ExperimentSlice& x = b.experiments[e];
        for (size_t c = 0; c < columns.size(); ++c)
            if (columns[c].host == b.qlen_offset.data() || columns[c].host == b.qlen_buckets.data()) tables->upload(c, x.port_begin, x.port_end - x.port_begin);
        tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
    }
};

}  // namespace

uint64_t device_memory_bytes() {
    const uint64_t free = device::device_free_bytes();
    return free ? free : physical_memory_bytes();
}

int device_count() {
    if (device::device_system() != "CUDA") return 1;
    std::string why;
    return std::max<int>(1, int(cuda::list_devices(&why).size()));
}

std::vector<DeviceGroup> plan_device_groups(const Batch& b, uint64_t device_bytes, int devices) {
    std::vector<DeviceGroup> groups;
    const uint32_t count = uint32_t(b.experiments.size());
    uint64_t used = 0;
    for (uint32_t e = 0; e < count; ++e) {
        const uint64_t need = experiment_device_bytes(b, e);
        if (need > device_bytes)
            throw InputError("experiment " + b.experiments[e].id, "needs about " + std::to_string(need >> 20) + " MiB of device memory before packets, more than the " +
                                                                      std::to_string(device_bytes >> 20) + " MiB a device has: run it on the CPU backend");
        if (groups.empty() || used + need > device_bytes) {
            groups.push_back({e, e, 0, 0});
            used = 0;
        }
        groups.back().experiment_end = e + 1;
        groups.back().bytes += need;
        used += need;
    }
    // Groups go to the devices in turn; each device runs its groups one after another.
    for (size_t g = 0; g < groups.size(); ++g) groups[g].device = int(g % size_t(std::max(1, devices)));
    return groups;
}

DevicePlan plan_device_run(const Batch& b, int threads, const DeviceOptions& device_options) {
    uint64_t device_bytes = device_options.memory_limit_bytes ? device_options.memory_limit_bytes : device_memory_bytes();
    const uint64_t memory = device_bytes;
    int devices = device_options.devices > 0 ? device_options.devices : device_count();
    if (device::device_system() == "OpenMP" && device_options.devices <= 0 && threads > 1 && b.experiments.size() > 1) {
        // On CPU cores, a sweep runs as one group per thread (each stepped by one OpenMP thread, no barrier
        // between them) rather than one group over all threads that meet after every step.
        devices = std::min<int>(threads, int(b.experiments.size()));
        uint64_t total = 0, largest = 0;
        for (uint32_t e = 0; e < b.experiments.size(); ++e) {
            const uint64_t need = experiment_device_bytes(b, e);
            total += need;
            largest = std::max(largest, need);
        }
        device_bytes = std::min(device_bytes, std::max(largest, (total + uint64_t(devices) - 1) / uint64_t(devices)));
        // That bound packs the groups; what they hold in flight grows into an even share of the memory: held to
        // their tables' size, a sweep whose queues fill (no congestion control, TIMELY) ran out of blocks.
        return {plan_device_groups(b, device_bytes, devices), device_bytes, devices, std::max(device_bytes, memory / uint64_t(devices))};
    }
    return {plan_device_groups(b, device_bytes, devices), device_bytes, devices, device_bytes};
}

std::vector<ExperimentResult> run_device(Batch& b, const RunOptions& options, const DeviceOptions& device_options) {
    std::string why;
    if (!device::device_ready(&why)) throw InputError("--backend", "the device backend (" + device::device_system() + ") cannot run here: " + why);
    // Device groups run experiments side by side; memo rounds (memo_rounds.h) would have to run them in turn.
    if (const MemoRounds rounds = plan_memo_rounds(b); rounds.sharing())
        throw InputError("experiment " + b.experiments[rounds.rounds[1].front()].id + ": skipping.share_memo",
                         "the device backend does not share transients between experiments: run on the CPU backend, or set share_memo to false");
    for (const ExperimentSlice& x : b.experiments)
        if (x.next_change < x.changes.size())
            throw InputError("experiment " + x.id + ": topology.events", "the device backend keeps the fabric as it starts: run events after the start "
                                                                       "on the CPU backend, or give them at \"0us\"");
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    if (b.experiments.empty()) return results;
    for (const NodeOutput& o : b.out)
        if (o.blocks_held) throw std::logic_error("run_device takes a batch that has not run");
    const DevicePlan plan = plan_device_run(b, options.threads, device_options);
    const std::vector<DeviceGroup>& groups = plan.groups;
    const uint64_t group_bytes = plan.group_bytes;
    const int devices = plan.devices;
    const NetView host_view = b.view();  // also sizes the queue monitors' pointers, which the hooks set
    const ExperimentRows rows(b);
    std::mutex host_blocks;
    DeviceReport report;
    report.groups = groups.size();
    std::mutex report_lock;
    std::exception_ptr failure;
    // One host thread per device, running its groups one after another.
    auto run_device_groups = [&](int d) {
        try {
            device::select_device(d);
            device::set_device_threads(std::max(1, options.threads / devices));
            for (const DeviceGroup& g : groups) {
                if (g.device != d) continue;
                std::vector<uint32_t> exps;
                for (uint32_t e = g.experiment_begin; e < g.experiment_end; ++e) exps.push_back(e);
                DeviceSteps steps(b, rows, host_blocks, g.experiment_begin, g.experiment_end, device_options, group_bytes);
                Stepper stepper(b, steps, results, exps, &options);
                steps.start(host_view);
                while (!stepper.finished) {
                    steps.run_step(stepper.window_end, stepper.step);
                    stepper.run();
                }
                if (stepper.error) std::rethrow_exception(stepper.error);
                std::lock_guard<std::mutex> hold(report_lock);
                report.steps += steps.steps;
                report.passes += steps.passes;
                report.device_bytes = std::max(report.device_bytes, steps.tables->device_bytes());
                report.block_capacity = std::max(report.block_capacity, steps.tables->block_capacity());
            }
        } catch (...) {
            std::lock_guard<std::mutex> hold(report_lock);
            if (!failure) failure = std::current_exception();
        }
    };
    const int used_devices = int(std::min<size_t>(size_t(devices), groups.size()));
    std::vector<std::thread> pool;
    for (int d = 1; d < used_devices; ++d) pool.emplace_back(run_device_groups, d);
    run_device_groups(0);
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    if (device_options.report) *device_options.report = report;
    return results;
}

#endif

}  // namespace orrery
