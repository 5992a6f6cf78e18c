#pragma once
// The live inspector's state, apart from drawing: the telemetry received per experiment, which experiment is
// shown (the running one during a sweep, unless pinned), the visible time window (follow the run, zoom, pan, whole run), pause (chunks that arrive while
// paused wait, none is dropped), and the span under a click.
#include <optional>
#include <string>

#include "views/run/telemetry_feed.h"

namespace orrery::views {

class InspectorState {
public:
    void clear();
    void add(const TelemetryChunk& chunk);
    void set_paused(bool paused);  // resuming applies what arrived meanwhile
    bool paused() const { return paused_; }
    size_t pending_chunks() const { return pending_.size(); }

    const std::map<std::string, ExperimentTelemetry>& experiments() const { return data_; }
    const ExperimentTelemetry* shown() const;
    const std::string& shown_id() const { return shown_; }
    // The user's choice: shows `experiment` and pins it.
    void show(const std::string& experiment);
    // Unpinned (the default, and after clear()), the inspector follows the sweep: it shows the newest
    // experiment whose status is "running" as soon as it starts. Pinned, it stays on the one shown.
    bool pinned() const { return pinned_; }
    void pin(bool on);

    // Visible time window, s. While following, it ends at the newest sample.
    double t0() const { return t0_; }
    double t1() const { return t1_; }
    bool following() const { return follow_; }
    void whole_run();                        // zoom out to everything received; stops following
    void zoom_at(double t, double factor);   // factor < 1 zooms in around t
    void pan(double fraction);               // of the window width; positive moves later
    void follow();

    // The span of the shown experiment on `rank`'s compute or communication lane at time t, within `slack` s;
    // of several, the one whose middle is nearest t.
    std::optional<Span> span_at(int rank, double t, bool communication, double slack = 0) const;
    std::optional<Span> selected;            // the span clicked last, for the details panel
    int tab_request = -1;                    // 0 queues, 1 flow rates, 2 timeline: selected at the next frame
    // The run being watched records queues (output.record): until its first samples arrive the Queues tab
    // says it is waiting for them, not that the scenario records none. Cleared by clear().
    bool queues_expected = false;
    // What the Queues tab says while it has no samples.
    const char* no_queue_samples_text() const;

private:
    void keep_window();
    std::map<std::string, ExperimentTelemetry> data_;
    std::vector<TelemetryChunk> pending_;
    std::string shown_;
    void follow_running_experiment();
    bool paused_ = false, follow_ = true, pinned_ = false;
    double t0_ = 0, t1_ = 1e-3;
};

}  // namespace orrery::views
