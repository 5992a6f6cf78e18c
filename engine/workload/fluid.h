#pragma once
// Fluid flows over shared resources (directed link ports, NVLink ports): every active flow drains at a
// rate that is max-min fair over all the resources it crosses (progressive filling), recomputed at each
// flow start and finish for the flows that share a resource with a changed one, directly or through
// others (its connected component) — the rest keep their rates. A flow may load a resource with a weight
// other than 1: wire bytes per payload byte on its data path, ACK bytes per payload byte on the reverse
// path, bus bytes per byte and the calibrated NVLink efficiency inside a server.
#include <cstddef>
#include <cstdint>
#include <queue>
#include <tuple>
#include <vector>

namespace orrery {

struct FluidUse {
    uint32_t resource;
    double weight;  // bytes the flow puts on the resource per byte it delivers
};

class FluidNetwork {
public:
    static constexpr int64_t kNoFinish = INT64_MAX;

    // Adds a resource of `bytes_per_s` capacity; returns its id (ids are dense, from 0).
    uint32_t add_resource(double bytes_per_s);
    size_t resources() const { return capacity_.size(); }

    // A flow of `bytes` starting at `now`, which must not be before the last settle. `tag` comes back from
    // pop_finished. Rates are assigned by the next settle().
    void start(uint32_t tag, double bytes, const std::vector<FluidUse>& uses, int64_t now);
    // Recomputes the rates of every component a start or finish touched since the last settle.
    void settle(int64_t now);
    // The earliest drain time of an active flow (ps), kNoFinish when none.
    int64_t next_finish();
    // Removes every flow that drains at next_finish() and appends their tags; settle() afterwards.
    void pop_finished(std::vector<uint32_t>& tags);

    // A resource's capacity from `now` on (a link degraded, failed: 0, or restored); rates follow at the next
    // settle. A flow crossing a resource of no capacity stalls (rate 0, no finish) until it is rerouted or the
    // capacity comes back.
    void set_capacity(uint32_t resource, double bytes_per_s);
    // The live flow `tag` crosses `uses` from `now` on, with the bytes it has left (a route changed under it).
    void reroute(uint32_t tag, const std::vector<FluidUse>& uses, int64_t now);
    // The tags of the live flows crossing `resource`.
    std::vector<uint32_t> tags_on(uint32_t resource) const;

    size_t active() const { return active_; }
    // The rate of the active flow with this tag in bytes per second (for tests and telemetry; linear scan).
    double rate_of(uint32_t tag) const;
    uint64_t recomputed_flows() const { return recomputed_flows_; }  // flow-rate assignments so far (work done)

private:
    struct Flow {
        uint32_t tag = 0;
        std::vector<FluidUse> uses;               // the slot keeps its capacity when it is reused
        double remaining = 0;                     // bytes at `since`
        double rate = 0;                          // bytes per ps
        int64_t since = 0;
        int64_t finish = kNoFinish;
        uint32_t version = 0;
        bool live = false;
    };
    void touch(uint32_t resource);
    void recompute(int64_t now);
    void set_uses(Flow& f, const std::vector<FluidUse>& uses);  // merged: one entry per resource, none of zero weight

    std::vector<double> capacity_;                // bytes per ps
    std::vector<std::vector<uint32_t>> on_;       // per resource: slots of the flows crossing it
    std::vector<Flow> flows_;
    std::vector<uint32_t> free_slots_;
    std::vector<uint32_t> dirty_;                 // resources changed since the last settle
    std::vector<uint32_t> stamp_res_, stamp_flow_;
    uint32_t epoch_ = 0;
    size_t active_ = 0;
    uint64_t recomputed_flows_ = 0;
    using Finish = std::tuple<int64_t, uint32_t, uint32_t>;  // (time, slot, version)
    std::priority_queue<Finish, std::vector<Finish>, std::greater<Finish>> finishes_;
    // Scratch of a recompute, kept to avoid reallocating.
    std::vector<uint32_t> comp_res_, comp_flows_;
    std::vector<double> left_, weight_sum_;
    std::vector<uint32_t> res_version_;
    std::vector<uint32_t> stamp_level_;          // per resource: the version its newest heap entry was pushed at
    std::vector<double> old_rate_;               // per slot: its rate before the recompute (-1: none yet)
};

}  // namespace orrery
