// The batch's tables: their view, their memory, and the host's edits between steps (release, queue monitor,
// giving an experiment's packet storage back). compile_batch builds them (batch_compile.cpp).
#include "runtime/batch.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/diagnostics.h"
#include "common/memory_budget.h"
#include "common/quantity.h"
#include "net/ns3_arith.h"
#include "topology/routing.h"

namespace orrery {

using namespace net;

net::NetView Batch::view() {
    NetView v{};
#define ORRERY_COLUMN(T, name, ...) v.name = name.data();
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    qlen_ptr.resize(qlen_hist.size());
    for (size_t e = 0; e < qlen_hist.size(); ++e) qlen_ptr[e] = qlen_hist[e].data();
    v.qlen_hist = qlen_ptr.data();
    v.store = arena->store(nullptr);
    return v;
}

size_t Batch::memory_bytes() const {
    auto bytes = [](const auto& vec) { return vec.capacity() * sizeof(vec[0]); };
    size_t grown = arena ? arena->committed_blocks() * arena->bytes_per_block() : 0;
    for (size_t e = 0; e < qlen_hist.size(); ++e) grown += bytes(qlen_hist[e]);
    size_t columns = bytes(node_fabric_id) + cc_state_bytes();
#define ORRERY_COLUMN(T, name, access, dim, hooks, share, ...) \
    if constexpr (ColumnShare::share != ColumnShare::Cc) columns += bytes(name);
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    return grown + columns;
}

// The per-CC flow state in use: each flow's own CC's row. The other tables' rows are mapped but never
// written (CcTable), so they hold no memory.
size_t Batch::cc_state_bytes(uint32_t e) const {
    const ExperimentSlice& x = experiments.at(e);
    size_t row = 0;
    switch (params[e].cc_mode) {
#define ORRERY_CC_ROW(Name, name, id, ref, State, ...) \
    case net::k##Name: row = sizeof(net::State); break;
        ORRERY_CC_LIST(ORRERY_CC_ROW)
#undef ORRERY_CC_ROW
    }
    return size_t(x.flow_end - x.flow_begin) * row;
}

size_t Batch::cc_state_bytes() const {
    size_t total = 0;
    for (uint32_t e = 0; e < experiments.size(); ++e) total += cc_state_bytes(e);
    return total;
}

size_t Batch::experiment_memory_bytes(uint32_t e) const {
    const ExperimentSlice& x = experiments.at(e);
    const double nodes = x.node_end - x.node_begin, ports = x.port_end - x.port_begin, flows = x.flow_end - x.flow_begin;
    // A column's share: its rows' bytes where it has a row per node, port or flow (and perhaps one past the
    // end), else its bytes in use × this experiment's rows / all rows. Never the allocated capacity or the
    // end row: those depend on the batch's other experiments, and an experiment's figure must not, so that a
    // sweep run over MPI ranks, one experiment at a time, stores the same figures as one process.
    auto share = [](const auto& vec, double rows, double all) {
        const double size = double(vec.size()), element = double(sizeof(vec[0]));
        if (size == all || size == all + 1) return rows * element;
        return all > 0 ? size * element * rows / all : 0.0;
    };
    // An offsets column (one entry per item and one past the end): the end entry is the batch's.
    auto share_offsets = [](const auto& vec, double rows, double all) {
        return all > 0 && !vec.empty() ? double(vec.size() - 1) * double(sizeof(vec[0])) * rows / all : 0.0;
    };
    const double all_nodes = double(node_role.size()), all_ports = double(port.size()), all_flows = double(flow.size());
    double total = share(node_fabric_id, nodes, all_nodes) + double(cc_state_bytes(e));
#define ORRERY_COLUMN(T, name, access, dim, hooks, share_kind, ...)                                                      \
    if constexpr (ColumnShare::share_kind == ColumnShare::Nodes) total += share(name, nodes, all_nodes);                 \
    if constexpr (ColumnShare::share_kind == ColumnShare::NodeOffsets) total += share_offsets(name, nodes, all_nodes);   \
    if constexpr (ColumnShare::share_kind == ColumnShare::Ports) total += share(name, ports, all_ports);                 \
    if constexpr (ColumnShare::share_kind == ColumnShare::Flows) total += share(name, flows, all_flows);
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    const size_t grown = (e < qlen_hist.size() ? qlen_hist[e].capacity() * sizeof(uint32_t) : 0) + size_t(x.peak_blocks) * (arena ? arena->bytes_per_block() : BlockArena::kBytesPerBlock);
    return size_t(total) + grown;
}


uint64_t standalone_fct_ns(const PathMetrics& m, uint64_t size, uint32_t mtu) {
    const uint64_t wire_bytes = size + ((size - 1) / mtu + 1) * kDataHeaderBytes;
    return m.delay_ns * 2 + m.tx_delay_ns + wire_bytes * 8000000000ull / m.min_bw;
}

void release_flow(Batch& b, uint32_t flow, int64_t start) {
    FlowInfo& fi = b.flow[flow];
    NicState& nic = b.nic[fi.src];
    uint32_t* list = b.nic_starts.data() + nic.starts_offset;
    uint32_t pos = nic.starts_next;
    while (pos < nic.starts_count && list[pos] != flow) ++pos;
    if (pos == nic.starts_count || fi.start != kNever) throw std::logic_error("release_flow: flow " + std::to_string(flow) + " was already released");
    fi.start = start;
    mark_host_wrote(b, fi.src);
    const uint32_t e = b.node_experiment[fi.src];
    if (b.experiments[e].skipping.enabled) b.released[e].push_back(flow);  // the skipper thaws what the flow will touch
    while (pos > nic.starts_next && b.flow[list[pos - 1]].start > start) {
        list[pos] = list[pos - 1];
        --pos;
    }
    list[pos] = flow;
}

namespace {
// One 1 KB bucket per KB of a switch's buffer, one more for a full buffer and one for beyond.
uint32_t monitor_buckets(const Batch& b, uint32_t switch_node) { return b.sw[switch_node].buffer_size / 1000 + 2; }
}  // namespace

size_t queue_monitor_buckets(const Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    size_t total = 0;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n)
        if (b.node_role[n] == kRoleSwitch) total += size_t(b.node_port_begin[n + 1] - b.node_port_begin[n]) * monitor_buckets(b, n);
    return total;
}

void allocate_queue_monitor(Batch& b, uint32_t e) {
    const ExperimentSlice& x = b.experiments[e];
    ZeroedCounts& hist = b.qlen_hist[e];
    if (!hist.empty()) return;
    hist.assign(queue_monitor_buckets(b, e));
    size_t offset = 0;
    for (uint32_t n = x.node_begin; n < x.node_end; ++n)
        if (b.node_role[n] == kRoleSwitch)
            for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
                b.qlen_offset[row] = uint32_t(offset);
                b.qlen_buckets[row] = monitor_buckets(b, n);
                offset += b.qlen_buckets[row];
            }
    b.qlen_ptr[e] = hist.data();
}

void empty_ring(Batch& b, uint32_t row, const BlockStore& store) {
    RingHead& h = b.ring_head[row];
    const RingTail& t = b.ring_tail[row];
    int64_t& held = b.out[b.port[row].node].blocks_held;
    while (h.head < t.tail) {
        const uint32_t block = ring_head_block(h, t, store.next);
        if (block != h.block) {
            if (h.block != kNoBlock) block_give(*store.cache, held, h.block);
            h.block = block;
        }
        ++h.head;
    }
}

void release_experiment_storage(Batch& b, uint32_t e, BlockCache& cache) {
    const ExperimentSlice& x = b.experiments[e];
    const BlockStore store = b.arena->store(&cache);
    for (uint32_t n = x.node_begin; n < x.node_end; ++n) {
        mark_host_wrote(b, n);
        int64_t& held = b.out[n].blocks_held;
        if (b.node_role[n] == kRoleHost) fifo_release(store, held, b.nic[n].acks);
        for (uint32_t row = b.node_port_begin[n]; row < b.node_port_begin[n + 1]; ++row) {
            for (BlockFifo& q : b.queues[row].fifo) fifo_release(store, held, q);
            // Its receive ring: from the block the reader holds (or the first) to the writer's.
            RingHead& h = b.ring_head[row];
            RingTail& t = b.ring_tail[row];
            chain_release(store, held, h.block != kNoBlock ? h.block : t.first_block, t.block);
            // Empty from now on: its reader, still visited by a step of other experiments, sees nothing.
            h.block = t.block = t.first_block = kNoBlock;
            t.tail = t.published_tail[0] = t.published_tail[1] = h.head;
        }
    }
}

}  // namespace orrery
