#include "workload/fluid.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace orrery {

uint32_t FluidNetwork::add_resource(double bytes_per_s) {
    if (!(bytes_per_s > 0)) throw std::invalid_argument("FluidNetwork: a resource needs a positive capacity");
    capacity_.push_back(bytes_per_s * 1e-12);
    on_.emplace_back();
    stamp_res_.push_back(0);
    left_.push_back(0);
    weight_sum_.push_back(0);
    res_version_.push_back(0);
    stamp_level_.push_back(UINT32_MAX);
    return uint32_t(capacity_.size() - 1);
}

void FluidNetwork::touch(uint32_t resource) { dirty_.push_back(resource); }

void FluidNetwork::start(uint32_t tag, double bytes, const std::vector<FluidUse>& uses, int64_t now) {
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        slot = uint32_t(flows_.size());
        flows_.emplace_back();
        stamp_flow_.push_back(0);
    }
    Flow& f = flows_[slot];
    f.tag = tag;
    set_uses(f, uses);
    f.remaining = std::max(0.0, bytes);
    f.rate = 0;
    f.since = now;
    f.finish = kNoFinish;
    ++f.version;
    f.live = true;
    ++active_;
    for (const FluidUse& u : f.uses) {
        on_[u.resource].push_back(slot);
        touch(u.resource);
    }
    if (f.uses.empty()) {  // nothing to cross: done as it starts
        f.finish = now;
        finishes_.push({now, slot, f.version});
    }
}

void FluidNetwork::set_uses(Flow& f, const std::vector<FluidUse>& uses) {
    // One entry per resource (weights of repeats add up), none of zero weight: each must be able to freeze the flow.
    f.uses.clear();
    if (uses.size() <= 32) {
        for (const FluidUse& u : uses) {
            if (!(u.weight > 0)) continue;
            auto same = std::find_if(f.uses.begin(), f.uses.end(), [&](const FluidUse& x) { return x.resource == u.resource; });
            if (same != f.uses.end()) same->weight += u.weight;
            else f.uses.push_back(u);
        }
    } else {  // a lockstep collective crosses thousands of ports: merge by sorting, not by search
        for (const FluidUse& u : uses)
            if (u.weight > 0) f.uses.push_back(u);
        std::sort(f.uses.begin(), f.uses.end(), [](const FluidUse& a, const FluidUse& b) { return a.resource < b.resource; });
        size_t kept = 0;
        for (size_t i = 0; i < f.uses.size(); ++i) {
            if (kept > 0 && f.uses[kept - 1].resource == f.uses[i].resource) f.uses[kept - 1].weight += f.uses[i].weight;
            else f.uses[kept++] = f.uses[i];
        }
        f.uses.resize(kept);
    }
    for (const FluidUse& u : f.uses)
        if (u.resource >= capacity_.size()) throw std::out_of_range("FluidNetwork: a flow uses resource " + std::to_string(u.resource) + " that does not exist");
}

void FluidNetwork::set_capacity(uint32_t resource, double bytes_per_s) {
    if (resource >= capacity_.size() || !(bytes_per_s >= 0)) throw std::invalid_argument("FluidNetwork: no such resource, or a negative capacity");
    capacity_[resource] = bytes_per_s * 1e-12;
    touch(resource);
}

void FluidNetwork::reroute(uint32_t tag, const std::vector<FluidUse>& uses, int64_t now) {
    for (uint32_t slot = 0; slot < flows_.size(); ++slot) {
        Flow& f = flows_[slot];
        if (!f.live || f.tag != tag) continue;
        // Drained at its rate so far; the next settle gives it a rate on its new resources.
        f.remaining = std::max(0.0, f.remaining - f.rate * double(now - f.since));
        f.since = now;
        for (const FluidUse& u : f.uses) {
            auto& list = on_[u.resource];
            auto it = std::find(list.begin(), list.end(), slot);
            if (it != list.end()) *it = list.back(), list.pop_back();
            touch(u.resource);
        }
        set_uses(f, uses);
        f.rate = 0;
        f.finish = kNoFinish;
        ++f.version;
        for (const FluidUse& u : f.uses) {
            on_[u.resource].push_back(slot);
            touch(u.resource);
        }
        if (f.uses.empty()) f.finish = now, finishes_.push({now, slot, f.version});
        return;
    }
}

std::vector<uint32_t> FluidNetwork::tags_on(uint32_t resource) const {
    std::vector<uint32_t> tags;
    if (resource < on_.size())
        for (uint32_t slot : on_[resource]) tags.push_back(flows_[slot].tag);
    return tags;
}

void FluidNetwork::settle(int64_t now) {
    if (dirty_.empty()) return;
    recompute(now);
    dirty_.clear();
}

// Progressive filling over the components of the dirty resources: raise every unfrozen flow's rate
// together; the resource that fills first freezes its flows at that level; repeat. The levels come out
// of a heap of (capacity left / weight of unfrozen flows) per resource, stale entries skipped by version.
void FluidNetwork::recompute(int64_t now) {
    if (++epoch_ == 0) {  // wrapped: clear the stamps once every 2^32 recomputes
        std::fill(stamp_res_.begin(), stamp_res_.end(), 0);
        std::fill(stamp_flow_.begin(), stamp_flow_.end(), 0);
        epoch_ = 1;
    }
    comp_res_.clear();
    comp_flows_.clear();
    for (uint32_t r : dirty_)
        if (stamp_res_[r] != epoch_) stamp_res_[r] = epoch_, comp_res_.push_back(r);
    for (size_t i = 0; i < comp_res_.size(); ++i)
        for (uint32_t slot : on_[comp_res_[i]]) {
            if (stamp_flow_[slot] == epoch_) continue;
            stamp_flow_[slot] = epoch_;
            comp_flows_.push_back(slot);
            for (const FluidUse& u : flows_[slot].uses)
                if (stamp_res_[u.resource] != epoch_) stamp_res_[u.resource] = epoch_, comp_res_.push_back(u.resource);
        }
    old_rate_.resize(flows_.size());
    for (uint32_t slot : comp_flows_) {  // bytes drained at the old rates, up to now
        Flow& f = flows_[slot];
        f.remaining = std::max(0.0, f.remaining - f.rate * double(now - f.since));
        f.since = now;
        old_rate_[slot] = f.finish == kNoFinish ? -1 : f.rate;
        f.rate = -1;  // unfrozen
    }
    for (uint32_t r : comp_res_) left_[r] = capacity_[r], weight_sum_[r] = 0;
    for (uint32_t slot : comp_flows_)
        for (const FluidUse& u : flows_[slot].uses) weight_sum_[u.resource] += u.weight;
    using Level = std::tuple<double, uint32_t, uint32_t>;  // (level, resource, version)
    std::vector<Level> initial;
    initial.reserve(comp_res_.size());
    for (uint32_t r : comp_res_)
        if (weight_sum_[r] > 0) initial.emplace_back(left_[r] / weight_sum_[r], r, ++res_version_[r]);
    std::priority_queue<Level, std::vector<Level>, std::greater<Level>> levels(std::greater<Level>(), std::move(initial));
    size_t unfrozen = comp_flows_.size();  // the rest of the heap can wait once every flow has its rate
    // A resource's level only rises as flows freeze elsewhere ((left − w·L) / (sum − w) ≥ left / sum when
    // L ≤ left / sum), so an entry changed since it was pushed is refreshed when it comes up, not at every
    // change: a lockstep collective touches thousands of resources per freeze.
    while (unfrozen > 0 && !levels.empty()) {
        const auto [level, r, version] = levels.top();
        levels.pop();
        if (version != res_version_[r]) {
            if (weight_sum_[r] > 1e-12 && stamp_level_[r] != res_version_[r]) {
                stamp_level_[r] = res_version_[r];
                levels.push({left_[r] / weight_sum_[r], r, res_version_[r]});
            }
            continue;
        }
        for (uint32_t slot : on_[r]) {
            Flow& f = flows_[slot];
            if (f.rate >= 0) continue;
            f.rate = level > 0 ? std::max(level, 1e-18) : 0;  // 0: it crosses a resource of no capacity (a failed link)
            --unfrozen;
            for (const FluidUse& u : f.uses) {
                left_[u.resource] = std::max(0.0, left_[u.resource] - u.weight * level);
                weight_sum_[u.resource] -= u.weight;
                ++res_version_[u.resource];
            }
        }
    }
    for (uint32_t slot : comp_flows_) {
        Flow& f = flows_[slot];
        // A flow whose rate did not change keeps its finish (and its entry in the heap).
        if (old_rate_[slot] >= 0 && std::abs(f.rate - old_rate_[slot]) <= 1e-12 * f.rate) {
            f.rate = old_rate_[slot];
            continue;
        }
        ++f.version;
        if (f.remaining > 1e-6 && f.rate <= 0) {  // stalled: no finish until its capacity or route changes
            f.finish = kNoFinish;
            continue;
        }
        f.finish = f.remaining <= 1e-6 ? now : now + int64_t(std::ceil(f.remaining / f.rate));
        finishes_.push({f.finish, slot, f.version});
    }
    recomputed_flows_ += comp_flows_.size();
}

int64_t FluidNetwork::next_finish() {
    while (!finishes_.empty()) {
        const auto [t, slot, version] = finishes_.top();
        if (flows_[slot].live && flows_[slot].version == version) return t;
        finishes_.pop();
    }
    return kNoFinish;
}

void FluidNetwork::pop_finished(std::vector<uint32_t>& tags) {
    const int64_t t = next_finish();
    if (t == kNoFinish) return;
    while (!finishes_.empty() && std::get<0>(finishes_.top()) == t) {
        const auto [when, slot, version] = finishes_.top();
        finishes_.pop();
        Flow& f = flows_[slot];
        if (!f.live || f.version != version) continue;
        f.live = false;
        --active_;
        tags.push_back(f.tag);
        for (const FluidUse& u : f.uses) {
            auto& list = on_[u.resource];
            auto it = std::find(list.begin(), list.end(), slot);
            if (it != list.end()) *it = list.back(), list.pop_back();
            touch(u.resource);
        }
        free_slots_.push_back(slot);
    }
}

double FluidNetwork::rate_of(uint32_t tag) const {
    for (const Flow& f : flows_)
        if (f.live && f.tag == tag) return f.rate * 1e12;
    return 0;
}

}  // namespace orrery
