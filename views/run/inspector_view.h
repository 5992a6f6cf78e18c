#pragma once
// The live inspector: ImGui drawing of InspectorState — queue occupancy per tier (max / p99 / median) and of
// the ports of switches picked on the topology, flow rates, the per-rank iteration timeline as its spans arrive
// (a time ruler above it; the span under the cursor named in a tooltip, a clicked one in the details panel;
// wheel or W/S zoom, A/D or drag pan), steady-state skips shaded on every time axis.
#include <set>

#include <QWidget>

#include "views/run/imgui_widget.h"
#include "views/run/inspector_state.h"

namespace orrery::views {

class InspectorView : public QWidget {
    Q_OBJECT
public:
    explicit InspectorView(QWidget* parent = nullptr);
    // Whoever takes the state to change it (clear, show, pin, a tab) gets the frames that draw the change: the
    // canvas draws on demand (ImGuiWidget::request_frames).
    InspectorState& state() {
        canvas_->request_frames();
        return state_;
    }
    ImGuiWidget* canvas() { return canvas_; }
    void add(const TelemetryChunk& chunk);
    // W/S zoom, A/D pan the time window; true when `qt_key` is one of them (the main window forwards them
    // from anywhere that does not take text).
    bool key(int qt_key);

private:
    void draw();
    InspectorState state_;
    ImGuiWidget* canvas_;
};

}  // namespace orrery::views
