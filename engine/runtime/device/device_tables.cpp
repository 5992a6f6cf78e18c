// Map: DeviceTables keeps every column of the view in a 64-byte aligned device buffer and a device copy of
// the view pointing at them; step() launches process_node over the listed nodes (thrust::for_each over a
// counting range of tasks, StepNodes), each task with a stock of kDeviceStock blocks on its own stack that
// refills from the shared pool by atomic increments; nodes that stopped for want of blocks (NodeOutput::suspended) are
// collected with copy_if and run again after the pool is refilled from the blocks given back (and grown).
// summaries() reduces NodeOutput per experiment with reduce_by_key; only those summaries, the PFC events
// and a few counters cross to the host each step.
#include "runtime/device/device_tables.h"

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "net/node.h"

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
#include <omp.h>
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <cuda_runtime.h>
#endif

namespace orrery::device {

std::string device_system() {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    return "CUDA";
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
    return "OpenMP";
#else
    return "C++";
#endif
}

void set_device_threads(int threads) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
    omp_set_num_threads(threads > 0 ? threads : 1);
#else
    (void)threads;
#endif
}

void select_device(int index) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    cudaSetDevice(index);
#else
    (void)index;
#endif
}

uint64_t device_free_bytes() {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    size_t free = 0, total = 0;
    return cudaMemGetInfo(&free, &total) == cudaSuccess ? uint64_t(free) : 0;
#else
    return 0;
#endif
}

bool device_ready(std::string* why) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        if (why) *why = status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA GPU is visible";
        return false;
    }
#else
    (void)why;
#endif
    return true;
}

namespace {

using namespace net;

// A node's own stock of free blocks while it runs: twice the most one refill brings (block_stock_ready
// needs kTakesPerEvent ≤ half of it).
constexpr uint32_t kDeviceStock = 32;
static_assert(kTakesPerEvent <= kDeviceStock / 2);

// Device bytes aligned to 64 (packets and node outputs are 64-byte aligned types; the OpenMP system's
// allocator gives 16).
struct Buffer {
    thrust::device_vector<unsigned char> bytes;
    size_t offset = 0;
    size_t size = 0;
    void allocate(size_t n) {
        bytes.resize(n + 64);
        const uintptr_t at = reinterpret_cast<uintptr_t>(thrust::raw_pointer_cast(bytes.data()));
        offset = (64 - at % 64) % 64;
        size = n;
    }
    unsigned char* data() { return thrust::raw_pointer_cast(bytes.data()) + offset; }
    const unsigned char* data() const { return thrust::raw_pointer_cast(bytes.data()) + offset; }
    template <class T> T* as() { return reinterpret_cast<T*>(data()); }
    template <class T> const T* as() const { return reinterpret_cast<const T*>(data()); }
};

thrust::device_ptr<unsigned char> dev(unsigned char* p) { return thrust::device_pointer_cast(p); }
thrust::device_ptr<const unsigned char> dev(const unsigned char* p) { return thrust::device_pointer_cast(p); }

void to_device(Buffer& b, size_t at, const void* host, size_t n) {
    const auto* h = static_cast<const unsigned char*>(host);
    thrust::copy(h, h + n, dev(b.data() + at));
}
void to_host(const Buffer& b, size_t at, void* host, size_t n) {
    thrust::copy(dev(b.data() + at), dev(b.data() + at + n), static_cast<unsigned char*>(host));
}

// Nodes per task: one per GPU thread; on CPU cores a run of neighbours (the list is in node order, each
// experiment's racks together), which share one copy of the view and one stock, so a block one node gives
// back is the next one another takes while it is still in cache.
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
constexpr uint32_t kNodesPerTask = 1;
#else
constexpr uint32_t kNodesPerTask = 32;
#endif

// Task i's nodes of a step: list[i·kNodesPerTask ..], at most `count` in all.
struct StepNodes {
    NetView view;
    const uint32_t* nodes;
    uint32_t count;
    const int64_t* window_end;
    uint64_t step;
    SharedBlockPool* pool;
    ORRERY_HD void operator()(uint32_t task) const {
        uint32_t stock[kDeviceStock];
        BlockCache cache;
        cache.free = stock;
        cache.capacity = kDeviceStock;
        cache.shared = pool;
        NetView v = view;
        v.store.cache = &cache;
        const uint32_t end = (task + 1) * kNodesPerTask < count ? (task + 1) * kNodesPerTask : count;
        for (uint32_t i = task * kNodesPerTask; i < end; ++i) {
            const uint32_t node = nodes[i];
            process_node(v, node, StepClock{step, window_end[v.node_experiment[node]]});
        }
        if (cache.count) shared_spill(cache, cache.count);
    }
};

struct IsSuspended {
    const NodeOutput* out;
    ORRERY_HD bool operator()(uint32_t node) const { return out[node].suspended != 0; }
};

// Node n's share of its experiment's summary, and two shares together (runtime/step_summary.h).
struct NodeSummary {
    const NodeOutput* out;
    ORRERY_HD StepSummary operator()(uint32_t n) const { return node_summary(out[n], n); }
};

struct MergeSummaries {
    ORRERY_HD StepSummary operator()(const StepSummary& a, const StepSummary& b) const { return merge_summaries(a, b); }
};

}  // namespace

struct DeviceTables::Impl {
    std::vector<Column> columns;
    std::vector<Buffer> buffers;       // per column
    NetView view{};                    // pointing at device memory
    uint32_t experiments = 0;
    uint32_t node_first = 0, node_count = 0;   // the nodes whose rows it holds
    // packets
    Buffer blocks, next;               // capacity × block_bytes(), capacity × uint32
    Buffer free_ids, returned_ids, spare_ids;  // the pool's free blocks; those given back in a pass; room to compact
    uint64_t capacity = 0, max_blocks = 0, pool_size = 0;
    double growth = 2.0;
    Buffer pool;                       // one SharedBlockPool
    // PFC events
    Buffer pfc_events, pfc_log;        // events; one PfcLog
    uint64_t pfc_capacity = 0;
    // queue monitors
    std::vector<Buffer> histograms;    // per experiment
    Buffer histogram_ptrs;             // per experiment: device pointer to its histogram
    // a step
    Buffer nodes, retry[2], window_end;   // the step's nodes; the nodes of later passes
    uint32_t listed = 0;
    // the summaries' reduction, per experiment (allocated once: summaries() runs every step)
    thrust::device_vector<uint32_t> summary_keys;
    thrust::device_vector<StepSummary> summary_sums;

    // A block's packets, at the host batch's packet size (net/blocks.h).
    size_t block_bytes() const { return net::block_bytes(view.store.packet_shift); }

    // More blocks by the growth factor, up to the bound.
    void grow_by_factor() { grow(uint64_t(double(capacity) * growth) + 1); }

    void grow(uint64_t want) {
        want = std::min(want, max_blocks);
        if (want <= capacity) return;
        auto regrow = [](Buffer& b, size_t bytes, size_t keep) {
            Buffer bigger;
            bigger.allocate(bytes);
            if (keep) thrust::copy(dev(b.data()), dev(b.data() + keep), dev(bigger.data()));
            std::swap(b, bigger);
        };
        regrow(blocks, want * block_bytes(), capacity * block_bytes());
        regrow(next, want * sizeof(uint32_t), capacity * sizeof(uint32_t));
        regrow(free_ids, want * sizeof(uint32_t), pool_size * sizeof(uint32_t));
        spare_ids.allocate(want * sizeof(uint32_t));
        returned_ids.allocate(want * sizeof(uint32_t));
        thrust::sequence(thrust::device, free_ids.as<uint32_t>() + pool_size, free_ids.as<uint32_t>() + pool_size + (want - capacity), uint32_t(capacity));
        pool_size += want - capacity;
        capacity = want;
        view.store.packets = blocks.as<unsigned char>();
        view.store.next = next.as<uint32_t>();
    }

    // The pool after a pass `p` (as the pass left it): the blocks given back, then those not taken.
    void compact(const SharedBlockPool& p) {
        const uint64_t used = std::min<uint64_t>(p.taken, pool_size);
        uint32_t* ids = free_ids.as<uint32_t>();
        uint32_t* spare = spare_ids.as<uint32_t>();
        const uint32_t* returned = returned_ids.as<uint32_t>();
        thrust::copy(thrust::device, returned, returned + p.returned_count, spare);
        thrust::copy(thrust::device, ids + used, ids + pool_size, spare + p.returned_count);
        pool_size = p.returned_count + (pool_size - used);
        std::swap(free_ids, spare_ids);
    }

    void open_pool() {
        SharedBlockPool p;
        p.free = free_ids.as<uint32_t>();
        p.size = uint32_t(pool_size);
        p.returned = returned_ids.as<uint32_t>();
        to_device(pool, 0, &p, sizeof p);
    }
};

DeviceTables::DeviceTables(const NetView& host_view, const std::vector<Column>& columns, uint32_t experiments, uint64_t initial_blocks,
                           uint64_t max_blocks, double growth)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.columns = columns;
    m.experiments = experiments;
    m.view = host_view;
    m.buffers.resize(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
        const Column& col = columns[c];
        m.buffers[c].allocate(std::max<size_t>(1, col.elem_bytes * col.count));
        to_device(m.buffers[c], 0, static_cast<unsigned char*>(col.host) + col.first * col.elem_bytes, col.elem_bytes * col.count);
        // Row r of the host column is at data() + (r − first)·elem_bytes: the view's pointer is set back by `first` rows.
        const uintptr_t at = reinterpret_cast<uintptr_t>(m.buffers[c].data()) - col.first * col.elem_bytes;
        std::memcpy(reinterpret_cast<unsigned char*>(&m.view) + col.view_offset, &at, sizeof at);
        if (col.view_offset == offsetof(NetView, node_experiment)) {
            m.node_first = uint32_t(col.first);
            m.node_count = uint32_t(col.count);
        }
    }
    m.histograms.resize(experiments);
    m.histogram_ptrs.allocate(sizeof(uint32_t*) * std::max<uint32_t>(1, experiments));
    std::vector<uint32_t*> none(experiments, nullptr);
    to_device(m.histogram_ptrs, 0, none.data(), sizeof(uint32_t*) * experiments);
    m.view.qlen_hist = m.histogram_ptrs.as<uint32_t*>();
    m.pool.allocate(sizeof(SharedBlockPool));
    m.pfc_log.allocate(sizeof(PfcLog));
    m.view.pfc_log = m.pfc_log.as<PfcLog>();
    m.window_end.allocate(sizeof(int64_t) * std::max<uint32_t>(1, experiments));
    m.max_blocks = std::max<uint64_t>(max_blocks, kDeviceStock);
    m.growth = std::max(1.05, growth);
    m.grow(std::max<uint64_t>(initial_blocks, kDeviceStock));
    m.summary_keys.resize(experiments);
    m.summary_sums.resize(experiments);
    size_pfc_log(8);
}

DeviceTables::~DeviceTables() = default;

void DeviceTables::upload(size_t c, size_t first, size_t count) {
    const Column& col = impl_->columns[c];
    to_device(impl_->buffers[c], (first - col.first) * col.elem_bytes, static_cast<unsigned char*>(col.host) + first * col.elem_bytes, count * col.elem_bytes);
}

void DeviceTables::download(size_t c, size_t first, size_t count) {
    const Column& col = impl_->columns[c];
    to_host(impl_->buffers[c], (first - col.first) * col.elem_bytes, static_cast<unsigned char*>(col.host) + first * col.elem_bytes, count * col.elem_bytes);
}

uint64_t DeviceTables::block_capacity() const { return impl_->capacity; }

void DeviceTables::download_blocks(unsigned char* blocks, uint32_t* next) const {
    to_host(impl_->blocks, 0, blocks, impl_->capacity * impl_->block_bytes());
    to_host(impl_->next, 0, next, impl_->capacity * sizeof(uint32_t));
}

void DeviceTables::upload_blocks(const unsigned char* blocks, const uint32_t* next) {
    to_device(impl_->blocks, 0, blocks, impl_->capacity * impl_->block_bytes());
    to_device(impl_->next, 0, next, impl_->capacity * sizeof(uint32_t));
}

void DeviceTables::give_blocks(const std::vector<uint32_t>& ids) {
    Impl& m = *impl_;
    to_device(m.free_ids, m.pool_size * sizeof(uint32_t), ids.data(), ids.size() * sizeof(uint32_t));
    m.pool_size += ids.size();
}

uint64_t DeviceTables::device_bytes() const {
    const Impl& m = *impl_;
    uint64_t total = m.blocks.size + m.next.size + m.free_ids.size + m.spare_ids.size + m.returned_ids.size + m.pfc_events.size + m.nodes.size + m.retry[0].size + m.retry[1].size;
    for (const Buffer& b : m.buffers) total += b.size;
    for (const Buffer& b : m.histograms) total += b.size;
    return total;
}

void DeviceTables::upload_histogram(uint32_t e, const uint32_t* host, size_t count) {
    Impl& m = *impl_;
    Buffer& h = m.histograms[e];
    if (h.size != count * sizeof(uint32_t)) {
        h.allocate(count * sizeof(uint32_t));
        uint32_t* at = h.as<uint32_t>();
        to_device(m.histogram_ptrs, e * sizeof(uint32_t*), &at, sizeof at);
    }
    to_device(h, 0, host, count * sizeof(uint32_t));
}

void DeviceTables::download_histogram(uint32_t e, uint32_t* host, size_t count) const {
    const Buffer& h = impl_->histograms[e];
    to_host(h, 0, host, std::min<size_t>(count * sizeof(uint32_t), h.size));
}

void DeviceTables::set_nodes(const std::vector<uint32_t>& list) {
    Impl& m = *impl_;
    if (m.nodes.size < list.size() * sizeof(uint32_t)) {
        m.nodes.allocate(std::max<size_t>(1, list.size()) * sizeof(uint32_t));
        for (Buffer& r : m.retry) r.allocate(std::max<size_t>(1, list.size()) * sizeof(uint32_t));
    }
    to_device(m.nodes, 0, list.data(), list.size() * sizeof(uint32_t));
    m.listed = uint32_t(list.size());
}

uint32_t DeviceTables::step(uint64_t step, const std::vector<int64_t>& window_end) {
    Impl& m = *impl_;
    uint32_t passes = 0;
    to_device(m.window_end, 0, window_end.data(), window_end.size() * sizeof(int64_t));
    // Headroom, so that passes beyond the first stay rare.
    if (m.pool_size < m.capacity / 4 && m.capacity < m.max_blocks) m.grow_by_factor();
    uint32_t* list = m.nodes.as<uint32_t>();
    uint32_t* again = m.retry[0].as<uint32_t>();
    uint32_t count = m.listed;
    const NodeOutput* out = m.view.out;
    while (count) {
        // The first node to refill must get enough for an event: then every pass makes progress.
        if (m.pool_size < kDeviceStock / 2) {
            if (m.capacity >= m.max_blocks)
                throw std::runtime_error("packet storage exhausted on the device: " + std::to_string(m.capacity * kBytesPerBlock >> 20) +
                                         " MiB of packet blocks, as much as the device may use");
            m.grow_by_factor();
        }
        m.open_pool();
        const uint32_t tasks = (count + kNodesPerTask - 1) / kNodesPerTask;
        thrust::for_each(thrust::device, thrust::counting_iterator<uint32_t>(0), thrust::counting_iterator<uint32_t>(tasks),
                         StepNodes{m.view, list, count, m.window_end.as<int64_t>(), step, m.pool.as<SharedBlockPool>()});
        SharedBlockPool p;
        to_host(m.pool, 0, &p, sizeof p);
        m.compact(p);
        ++passes;
        count = uint32_t(thrust::copy_if(thrust::device, list, list + count, again, IsSuspended{out}) - again);
        list = again;
        again = m.retry[passes % 2].as<uint32_t>();
        // Enough for each stopped node's next refill, or as close as growth allows.
        if (count && m.pool_size < uint64_t(count) * (kDeviceStock / 2) && m.capacity < m.max_blocks) m.grow_by_factor();
    }
    return passes;
}

std::vector<StepSummary> DeviceTables::summaries() {
    Impl& m = *impl_;
    std::vector<StepSummary> result(m.experiments);
    const auto experiment_of = thrust::device_pointer_cast(m.view.node_experiment + m.node_first);
    const auto per_node = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(m.node_first), NodeSummary{m.view.out});
    const auto ends = thrust::reduce_by_key(thrust::device, experiment_of, experiment_of + m.node_count, per_node, m.summary_keys.begin(),
                                            m.summary_sums.begin(), thrust::equal_to<uint32_t>(), MergeSummaries{});
    const size_t found = size_t(ends.first - m.summary_keys.begin());
    std::vector<uint32_t> host_keys(found);
    std::vector<StepSummary> host_sums(found);
    thrust::copy(m.summary_keys.begin(), m.summary_keys.begin() + found, host_keys.begin());
    thrust::copy(m.summary_sums.begin(), m.summary_sums.begin() + found, host_sums.begin());
    for (size_t i = 0; i < found; ++i) result[host_keys[i]] = host_sums[i];
    return result;
}

std::vector<PfcEvent> DeviceTables::drain_pfc() {
    Impl& m = *impl_;
    PfcLog log;
    to_host(m.pfc_log, 0, &log, sizeof log);
    std::vector<PfcEvent> events(std::min<uint64_t>(log.count, m.pfc_capacity));
    to_host(m.pfc_events, 0, events.data(), events.size() * sizeof(PfcEvent));
    return events;
}

void DeviceTables::size_pfc_log(uint64_t events) {
    Impl& m = *impl_;
    if (events > m.pfc_capacity) {
        m.pfc_events.allocate(events * sizeof(PfcEvent));
        m.pfc_capacity = events;
    }
    PfcLog log;
    log.events = m.pfc_events.as<PfcEvent>();
    log.capacity = uint32_t(m.pfc_capacity);
    log.shared = true;
    to_device(m.pfc_log, 0, &log, sizeof log);
}

}  // namespace orrery::device
