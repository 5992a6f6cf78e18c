#pragma once
// Dear ImGui inside a QOpenGLWidget: the widget owns an ImGui context, feeds it Qt's mouse and wheel
// events, and redraws at `fps` frames per second while visible (40 by default: the target is 30 under load); `draw` is called inside each ImGui frame.
// Keys go to `on_key` (the inspector's W/S/A/D), not through ImGui.
#include <functional>

#include <QElapsedTimer>
#include <QOpenGLWidget>
#include <QTimer>

#include "views/run/imgui_input.h"

struct ImGuiContext;

namespace orrery::views {

class ImGuiWidget : public QOpenGLWidget {
    Q_OBJECT
public:
    explicit ImGuiWidget(QWidget* parent = nullptr);
    ~ImGuiWidget() override;
    std::function<void()> draw;
    std::function<bool(int qt_key)> on_key;  // true: handled
    void set_fps(int fps);
    // Frames are drawn on demand: after input, new data (request_frames) or a resize, a few frames at the set
    // rate (ImGui settles hover and animation state over them), then none: an idle inspector costs no CPU.
    // Continuous drawing is for the frame-rate benchmark.
    void request_frames(int n = 3);
    void set_continuous(bool on);
    // Frame times of the last frames, ms (for the inspector's own display and the frame-rate benchmark).
    double last_frame_ms() const { return last_frame_ms_; }
    double worst_frame_ms() const { return worst_frame_ms_; }
    uint64_t frames() const { return frames_; }
    uint64_t frames_scheduled() const { return scheduled_; }  // repaints the timer asked for (drawn or not: offscreen has no GL)
    bool gl_ready() const { return ready_; }

protected:
    void initializeGL() override;
    void paintGL() override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;

private:
    void set_button(Qt::MouseButton b, bool down, QPointF at);
    ButtonQueue buttons_;  // applied one per frame (imgui_input.h)
    ImGuiContext* ctx_ = nullptr;
    bool ready_ = false;
    QTimer timer_;
    int frames_wanted_ = 0;
    uint64_t scheduled_ = 0;
    bool continuous_ = false;
    QElapsedTimer clock_;
    double last_frame_ms_ = 0, worst_frame_ms_ = 0;
    uint64_t frames_ = 0;
};

}  // namespace orrery::views
