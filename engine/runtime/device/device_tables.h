#pragma once
// The device backend's tables: every column of a batch's NetView copied into device memory, the packet
// blocks and their free pool, the PFC log, and the step itself launched over nodes with Thrust. Compiled
// once for the build's device system (device_tables.cpp: nvcc for CUDA GPUs, or g++ against Thrust's
// OpenMP device system, where "device memory" is host memory run on CPU cores with the same semantics).
// No Thrust type appears here, so the host side (device_runner.cpp) stays plain C++20.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/state.h"
#include "runtime/step_summary.h"

namespace orrery::device {

// One column of the view: the device holds elements [first, first + count) of the host column at `host`
// (its element 0), each `elem_bytes`; `view_offset` is where NetView keeps its pointer (offsetof), which the
// device copy of the view points at the device column instead, so that the same row numbers work there.
// A group of experiments on one device holds only its rows of each column.
struct Column {
    void* host = nullptr;
    size_t elem_bytes = 0;
    size_t first = 0;
    size_t count = 0;
    size_t view_offset = 0;
};

// Which device system this build's device code runs on: "CUDA" or "OpenMP".
std::string device_system();
// How many CPU threads the OpenMP system uses (nothing on CUDA).
void set_device_threads(int threads);
// The device's free memory in bytes (CUDA), or 0 where device memory is host memory (OpenMP).
uint64_t device_free_bytes();
// Makes GPU `index` the calling thread's device (CUDA); nothing under OpenMP.
void select_device(int index);
// Whether a device can run the tables here; `why` says why not (CUDA: no GPU or no driver).
bool device_ready(std::string* why);

class DeviceTables {
public:
    // `host_view` names the host columns (as Batch::view() does); `columns` lists every one of them.
    // Packet blocks: `initial_blocks` to start with, growing by `growth` (×) up to `max_blocks`.
    DeviceTables(const net::NetView& host_view, const std::vector<Column>& columns, uint32_t experiments, uint64_t initial_blocks,
                 uint64_t max_blocks, double growth);
    ~DeviceTables();
    DeviceTables(const DeviceTables&) = delete;
    DeviceTables& operator=(const DeviceTables&) = delete;

    // Elements [first, first + count) of column `c` between host and device (row numbers of the host column).
    void upload(size_t c, size_t first, size_t count);
    void download(size_t c, size_t first, size_t count);

    // Device bytes per packet block: the block, its link and its place in the pool's three lists.
    static constexpr size_t kBytesPerBlock = net::kMaxBlockBytes + 4 * sizeof(uint32_t);
    // Packet blocks (indices are the same on both sides): capacity, download/upload of all of them.
    uint64_t block_capacity() const;
    void download_blocks(unsigned char* blocks, uint32_t* next) const;
    void upload_blocks(const unsigned char* blocks, const uint32_t* next);
    void give_blocks(const std::vector<uint32_t>& blocks);  // back to the free pool
    uint64_t device_bytes() const;

    // Queue-monitor histograms of experiment e (allocated on the host first).
    void upload_histogram(uint32_t e, const uint32_t* host, size_t count);
    void download_histogram(uint32_t e, uint32_t* host, size_t count) const;

    // The nodes a step runs (those of unfinished experiments).
    void set_nodes(const std::vector<uint32_t>& nodes);
    // One step: every listed node's events before its experiment's window end; passes repeat for nodes
    // that stopped for want of blocks after the pool is refilled (and grown). Returns the passes (launches
    // over nodes). Throws when it cannot grow.
    uint32_t step(uint64_t step, const std::vector<int64_t>& window_end);
    // Per experiment (indexed by batch experiment), after a step.
    std::vector<StepSummary> summaries();
    // The PFC events of the last step (any order); then the log is sized for `next_capacity` events.
    std::vector<net::PfcEvent> drain_pfc();
    void size_pfc_log(uint64_t events);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace orrery::device
