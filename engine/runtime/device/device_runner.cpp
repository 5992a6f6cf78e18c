// Map: run_device → DeviceSteps (the StepBackend over DeviceTables) → Stepper (runtime/stepper.h) → per
// step: DeviceTables::step over the nodes of unfinished experiments, then the host step, which asks for
// summaries (reduced on the device) and pulls an experiment's rows only for its hooks.
#include "runtime/device/device_runner.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/diagnostics.h"
#include "common/memory_budget.h"
#include "runtime/stepper.h"

#if defined(ORRERY_DEVICE_BACKEND)
#include "runtime/device/device_tables.h"
#endif

namespace orrery {

#if !defined(ORRERY_DEVICE_BACKEND)

std::string device_backend_system() { return ""; }

std::vector<ExperimentResult> run_device(Batch&, const RunOptions&, const DeviceOptions&) {
    throw InputError("--backend", "this build of Orrery has no device backend (configure with -DORRERY_DEVICE_SYSTEM=CUDA or OMP); use the CPU backend");
}

#else

std::string device_backend_system() { return device::device_system(); }

namespace {

using namespace net;

// Which rows of a column belong to an experiment: the host moves only those for its hooks.
enum class Rows { Fixed, Node, Port, Flow, Tree, Experiment, Whole };

struct DeviceSteps final : StepBackend {
    Batch& b;
    DeviceOptions options;
    std::vector<device::Column> columns;
    std::vector<Rows> rows;
    std::unique_ptr<device::DeviceTables> tables;
    std::vector<device::DeviceSummary> cached;  // this step's summaries
    bool summaries_fresh = false;
    std::vector<bool> rows_pulled;      // per experiment: its rows came to the host in this host step
    std::vector<bool> packets_pulled;   // per experiment: the blocks came to the host in this host step
    bool nodes_changed = true;
    std::vector<uint32_t> active;       // experiments not done, in order
    uint64_t passes = 0, steps = 0;

    template <class T>
    void add(std::vector<T>& v, size_t view_offset, Rows r) {
        columns.push_back({v.data(), sizeof(T), v.size(), view_offset});
        rows.push_back(r);
    }
    template <class T>
    void add(const std::vector<T>& v, size_t view_offset, Rows r) { add(const_cast<std::vector<T>&>(v), view_offset, r); }

    DeviceSteps(Batch& batch, const DeviceOptions& o) : b(batch), options(o), rows_pulled(batch.experiments.size(), false), packets_pulled(batch.experiments.size(), false) {
        b.view();  // sizes the queue monitors' pointers, which the stepper's hooks set
        add(b.params, offsetof(NetView, params), Rows::Experiment);
        add(b.node_experiment, offsetof(NetView, node_experiment), Rows::Fixed);
        add(b.node_role, offsetof(NetView, node_role), Rows::Fixed);
        add(b.node_port_begin, offsetof(NetView, node_port_begin), Rows::Fixed);
        add(b.nic, offsetof(NetView, nic), Rows::Node);
        add(b.sw, offsetof(NetView, sw), Rows::Node);
        add(b.out, offsetof(NetView, out), Rows::Node);
        add(b.port, offsetof(NetView, port), Rows::Fixed);
        add(b.port_loss, offsetof(NetView, port_loss), Rows::Fixed);
        add(b.ring_tail, offsetof(NetView, ring_tail), Rows::Port);
        add(b.ring_head, offsetof(NetView, ring_head), Rows::Port);
        add(b.tx, offsetof(NetView, tx), Rows::Port);
        add(b.times, offsetof(NetView, times), Rows::Port);
        add(b.port_tree, offsetof(NetView, port_tree), Rows::Tree);
        add(b.node_tree_begin, offsetof(NetView, node_tree_begin), Rows::Fixed);
        add(b.queues, offsetof(NetView, queues), Rows::Port);
        add(b.mmu, offsetof(NetView, mmu), Rows::Port);
        add(b.qlen_offset, offsetof(NetView, qlen_offset), Rows::Port);
        add(b.qlen_buckets, offsetof(NetView, qlen_buckets), Rows::Port);
        add(b.node_forwarder, offsetof(NetView, node_forwarder), Rows::Fixed);
        add(b.node_dest_group, offsetof(NetView, node_dest_group), Rows::Fixed);
        add(b.spray_set, offsetof(NetView, spray_set), Rows::Fixed);
        add(b.set_begin, offsetof(NetView, set_begin), Rows::Fixed);
        add(b.set_ports, offsetof(NetView, set_ports), Rows::Fixed);
        add(b.flow, offsetof(NetView, flow), Rows::Flow);
        add(b.flow_paths, offsetof(NetView, flow_paths), Rows::Fixed);
        add(b.path_ports, offsetof(NetView, path_ports), Rows::Fixed);
        add(b.qp, offsetof(NetView, qp), Rows::Flow);
        add(b.rx, offsetof(NetView, rx), Rows::Flow);
        add(b.dcqcn, offsetof(NetView, dcqcn), Rows::Flow);
        add(b.hpcc, offsetof(NetView, hpcc), Rows::Flow);
        add(b.timely, offsetof(NetView, timely), Rows::Flow);
        add(b.dctcp, offsetof(NetView, dctcp), Rows::Flow);
        add(b.nic_qps, offsetof(NetView, nic_qps), Rows::Whole);
        add(b.nic_starts, offsetof(NetView, nic_starts), Rows::Whole);
    }

    // Copies the tables to the device: after the stepper's constructor, whose hooks may have changed them.
    void start() {
        const uint64_t device_memory = device::device_free_bytes();
        const uint64_t limit = options.memory_limit_bytes ? options.memory_limit_bytes : device_memory ? device_memory : physical_memory_bytes();
        const uint64_t max_blocks = std::min<uint64_t>(limit / BlockArena::kBytesPerBlock, b.arena->max_blocks());
        tables = std::make_unique<device::DeviceTables>(b.view(), columns, uint32_t(b.experiments.size()), options.initial_blocks, max_blocks,
                                                        options.growth);
        for (uint32_t e = 0; e < b.experiments.size(); ++e)
            if (!b.qlen_hist[e].empty()) tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
    }

    // Experiment e's element range of column c.
    std::pair<size_t, size_t> range(size_t c, uint32_t e) const {
        const ExperimentSlice& x = b.experiments[e];
        switch (rows[c]) {
            case Rows::Node: return {x.node_begin, x.node_end - x.node_begin};
            case Rows::Port: return {x.port_begin, x.port_end - x.port_begin};
            case Rows::Flow: return {x.flow_begin, x.flow_end - x.flow_begin};
            case Rows::Tree: return {b.node_tree_begin[x.node_begin], b.node_tree_begin[x.node_end] - b.node_tree_begin[x.node_begin]};
            case Rows::Experiment: return {e, 1};
            case Rows::Whole: return {0, columns[c].count};
            case Rows::Fixed: break;
        }
        return {0, 0};
    }

    void run_step(const std::vector<int64_t>& window_end, uint64_t step) {
        if (nodes_changed) {
            std::vector<uint32_t> nodes;
            for (uint32_t e = 0; e < b.experiments.size(); ++e)
                if (!b.experiments[e].done)
                    for (uint32_t n = b.experiments[e].node_begin; n < b.experiments[e].node_end; ++n) nodes.push_back(n);
            tables->set_nodes(nodes);
            nodes_changed = false;
        }
        passes += tables->step(step, window_end).passes;
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
        const device::DeviceSummary& d = cached[e];
        StepSummary s;
        s.events = d.events;
        s.pfc_in_flight = d.pfc_in_flight;
        s.completions = d.completions;
        s.blocks_held = d.blocks_held;
        s.next_event = d.next_event;
        s.next_busy = d.next_busy;
        s.overflow = d.overflow;
        s.overflow_node = d.overflow_node;
        return s;
    }
    void drain_pfc(std::vector<PfcEvent>& into) override {
        const std::vector<PfcEvent> events = tables->drain_pfc();
        into.insert(into.end(), events.begin(), events.end());
    }
    void size_pfc_logs(uint64_t events) override { tables->size_pfc_log(events); }

    // Pulling again within a host step brings only what was not pulled yet: a hook may have changed the rows.
    void pull(uint32_t e, bool packets) override {
        if (!rows_pulled[e]) {
            for (size_t c = 0; c < columns.size(); ++c) {
                const auto [first, count] = range(c, e);
                if (count) tables->download(c, first, count);
            }
            if (!b.qlen_hist[e].empty()) tables->download_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
            rows_pulled[e] = true;
        }
        if (packets && !packets_pulled[e]) {
            if (!b.arena->commit_at_least(tables->block_capacity()))
                throw std::runtime_error("no host memory to copy the device's packet blocks for a hook (" +
                                         std::to_string(tables->block_capacity() * BlockArena::kBytesPerBlock >> 20) + " MiB)");
            tables->download_blocks(b.arena->blocks(), b.arena->next());
            packets_pulled[e] = true;
        }
    }
    void push(uint32_t e) override {
        for (size_t c = 0; c < columns.size(); ++c) {
            const auto [first, count] = range(c, e);
            if (count) tables->upload(c, first, count);
        }
        if (!b.qlen_hist[e].empty()) tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
        if (packets_pulled[e]) tables->upload_blocks(b.arena->blocks(), b.arena->next());
    }
    void release(uint32_t e) override {
        // Walk its chains on the host copy, give the blocks to the device's pool, and send back the
        // emptied rings and queues.
        std::vector<uint32_t> freed(tables->block_capacity());
        BlockCache collect;
        collect.free = freed.data();
        collect.capacity = uint32_t(freed.size());
        release_experiment_storage(b, e, collect);
        freed.resize(collect.count);
        tables->give_blocks(freed);
        push(e);
        nodes_changed = true;
    }
    void monitor_allocated(uint32_t e) override {
        if (!tables) return;  // start() uploads it
        const ExperimentSlice& x = b.experiments[e];
        for (size_t c = 0; c < columns.size(); ++c)
            if (rows[c] == Rows::Port && (columns[c].host == b.qlen_offset.data() || columns[c].host == b.qlen_buckets.data()))
                tables->upload(c, x.port_begin, x.port_end - x.port_begin);
        tables->upload_histogram(e, b.qlen_hist[e].data(), b.qlen_hist[e].size());
    }
};

}  // namespace

std::vector<ExperimentResult> run_device(Batch& b, const RunOptions& options, const DeviceOptions& device_options) {
    std::string why;
    if (!device::device_ready(&why)) throw InputError("--backend", "the device backend (" + device::device_system() + ") cannot run here: " + why);
    std::vector<ExperimentResult> results(b.experiments.size());
    for (size_t e = 0; e < b.experiments.size(); ++e) results[e].id = b.experiments[e].id;
    if (b.experiments.empty()) return results;
    for (const NodeOutput& o : b.out)
        if (o.blocks_held) throw std::logic_error("run_device takes a batch that has not run");
    device::set_device_threads(options.threads);
    std::vector<uint32_t> all(b.experiments.size());
    for (uint32_t e = 0; e < all.size(); ++e) all[e] = e;
    DeviceSteps steps(b, device_options);
    Stepper stepper(b, steps, results, all, &options);
    steps.start();
    while (!stepper.finished) {
        steps.run_step(stepper.window_end, stepper.step);
        stepper.run();
    }
    if (stepper.error) std::rethrow_exception(stepper.error);
    if (device_options.report) *device_options.report = {steps.steps, steps.passes, steps.tables->device_bytes(), steps.tables->block_capacity()};
    return results;
}

#endif

}  // namespace orrery
