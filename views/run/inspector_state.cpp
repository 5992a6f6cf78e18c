#include "views/run/inspector_state.h"

#include <algorithm>
#include <cmath>

namespace orrery::views {

const char* InspectorState::no_queue_samples_text() const {
    return queues_expected ? "Waiting for the first queue samples: the engine takes one every output.sample_interval of simulated time."
                           : "No queue samples: the scenario's output.record has no \"queues\".";
}

void InspectorState::clear() {
    queues_expected = false;
    data_.clear();
    pending_.clear();
    shown_.clear();
    selected.reset();
    follow_ = true;
    pinned_ = false;
    t0_ = 0;
    t1_ = 1e-3;
}

void InspectorState::add(const TelemetryChunk& chunk) {
    if (paused_) {
        pending_.push_back(chunk);
        return;
    }
    for (const auto& [id, e] : chunk) {
        data_[id].append(e);
        if (shown_.empty()) shown_ = id;
    }
    follow_running_experiment();
    keep_window();
}

void InspectorState::follow_running_experiment() {
    if (pinned_) return;
    // Experiments start in sweep order, so the greatest id running is the one that started last.
    const std::string* newest = nullptr;
    for (const auto& [id, e] : data_)
        if (e.status == "running") newest = &id;
    if (!newest || *newest == shown_) return;
    shown_ = *newest;
    selected.reset();
}

void InspectorState::pin(bool on) {
    pinned_ = on;
    if (!on) {
        follow_running_experiment();
        keep_window();
    }
}

void InspectorState::set_paused(bool paused) {
    paused_ = paused;
    if (paused_) return;
    std::vector<TelemetryChunk> waiting;
    waiting.swap(pending_);
    for (const TelemetryChunk& c : waiting) add(c);
}

const ExperimentTelemetry* InspectorState::shown() const {
    auto it = data_.find(shown_);
    return it == data_.end() ? nullptr : &it->second;
}

void InspectorState::show(const std::string& experiment) {
    shown_ = experiment;
    pinned_ = true;
    selected.reset();
    if (follow_) keep_window();
    else whole_run();
}

void InspectorState::keep_window() {
    if (!follow_) return;
    const ExperimentTelemetry* e = shown();
    if (!e) return;
    const double end = e->last_time();
    double start = end;
    for (const Series& s : e->tier_max)
        if (!s.t.empty()) start = std::min(start, s.t.front());
    if (!e->total_rate.t.empty()) start = std::min(start, e->total_rate.t.front());
    for (const Span& s : e->spans) start = std::min(start, s.start);
    t0_ = start;
    t1_ = std::max(end, start + 1e-9);
}

void InspectorState::whole_run() {
    follow_ = true;
    keep_window();
    follow_ = false;
}

void InspectorState::follow() {
    follow_ = true;
    keep_window();
}

void InspectorState::zoom_at(double t, double factor) {
    follow_ = false;
    const double width = std::max((t1_ - t0_) * factor, 1e-12);
    const double left = (t - t0_) / std::max(t1_ - t0_, 1e-15);
    t0_ = t - left * width;
    t1_ = t0_ + width;
}

void InspectorState::pan(double fraction) {
    follow_ = false;
    const double shift = (t1_ - t0_) * fraction;
    t0_ += shift;
    t1_ += shift;
}

std::optional<Span> InspectorState::span_at(int rank, double t, bool communication, double slack) const {
    const ExperimentTelemetry* e = shown();
    if (!e) return std::nullopt;
    const Span* best = nullptr;
    double best_distance = 0;
    for (const Span& s : e->spans) {
        if (s.rank != rank || (s.stream != "compute") != communication || t < s.start - slack || t > s.end + slack) continue;
        const double distance = std::fabs((s.start + s.end) / 2 - t);
        if (!best || distance < best_distance) best = &s, best_distance = distance;
    }
    if (!best) return std::nullopt;
    return *best;
}

}  // namespace orrery::views
