#include "views/run/imgui_widget.h"

#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QWheelEvent>
#include <imgui.h>
#include <backends/imgui_impl_opengl3.h>

namespace orrery::views {

ImGuiWidget::ImGuiWidget(QWidget* parent) : QOpenGLWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(320, 200);
    connect(&timer_, &QTimer::timeout, this, [this] {
        if (!continuous_ && frames_wanted_ <= 0) {
            timer_.stop();
            return;
        }
        if (frames_wanted_ > 0) --frames_wanted_;
        if (isVisible()) {
            update();
            ++scheduled_;
        }
    });
    // 40 a second while drawing, so that with timers late under load at least 30 frames a second are drawn.
    timer_.setTimerType(Qt::PreciseTimer);
    set_fps(40);
    request_frames();
}

void ImGuiWidget::request_frames(int n) {
    frames_wanted_ = std::max(frames_wanted_, n);
    if (!timer_.isActive()) timer_.start();
}

void ImGuiWidget::set_continuous(bool on) {
    continuous_ = on;
    if (on && !timer_.isActive()) timer_.start();
}

ImGuiWidget::~ImGuiWidget() {
    if (!ctx_) return;
    makeCurrent();
    ImGui::SetCurrentContext(ctx_);
    if (ready_) ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext(ctx_);
    doneCurrent();
}

void ImGuiWidget::set_fps(int fps) { timer_.setInterval(1000 / std::max(1, fps)); }

void ImGuiWidget::initializeGL() {
    ctx_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(ctx_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the workbench saves its own layout
    ImGui::StyleColorsDark();
    ready_ = ImGui_ImplOpenGL3_Init(context()->isOpenGLES() ? "#version 300 es" : "#version 130");
    clock_.start();
}

void ImGuiWidget::paintGL() {
    if (!ctx_ || !ready_) return;
    QElapsedTimer frame;
    frame.start();
    ImGui::SetCurrentContext(ctx_);
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(width()), float(height()));
    io.DisplayFramebufferScale = ImVec2(float(devicePixelRatio()), float(devicePixelRatio()));
    const double dt = clock_.restart() / 1000.0;
    io.DeltaTime = float(std::max(dt, 1e-4));
    float x = io.MousePos.x, y = io.MousePos.y;
    const bool more = buttons_.apply_one(io.MouseDown, x, y);
    io.MousePos = ImVec2(x, y);
    if (more) QTimer::singleShot(0, this, [this] { update(); });  // the next change at the next frame, at once
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    if (draw) draw();
    ImGui::Render();
    QOpenGLFunctions* gl = context()->functions();
    gl->glViewport(0, 0, int(width() * devicePixelRatio()), int(height() * devicePixelRatio()));
    gl->glClearColor(0.10f, 0.10f, 0.12f, 1.0f);
    gl->glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    last_frame_ms_ = frame.nsecsElapsed() / 1e6;
    if (frames_ > 2) worst_frame_ms_ = std::max(worst_frame_ms_, last_frame_ms_);
    ++frames_;
}

void ImGuiWidget::set_button(Qt::MouseButton b, bool down, QPointF at) {
    if (!ctx_) return;
    const int i = b == Qt::LeftButton ? 0 : b == Qt::RightButton ? 1 : b == Qt::MiddleButton ? 2 : -1;
    if (i >= 0) buttons_.push({i, down, float(at.x()), float(at.y())});
    update();
    request_frames();
}

void ImGuiWidget::mouseMoveEvent(QMouseEvent* e) {
    if (!ctx_) return;
    ImGui::SetCurrentContext(ctx_);
    ImGui::GetIO().MousePos = ImVec2(float(e->position().x()), float(e->position().y()));
    request_frames(2);  // hover: the span under the cursor is named
}
void ImGuiWidget::mousePressEvent(QMouseEvent* e) { set_button(e->button(), true, e->position()); }
void ImGuiWidget::mouseReleaseEvent(QMouseEvent* e) { set_button(e->button(), false, e->position()); }
void ImGuiWidget::wheelEvent(QWheelEvent* e) {
    if (!ctx_) return;
    ImGui::SetCurrentContext(ctx_);
    ImGui::GetIO().MouseWheel += float(e->angleDelta().y() / 120.0);
    ImGui::GetIO().MouseWheelH += float(e->angleDelta().x() / 120.0);
    request_frames();
}
void ImGuiWidget::keyPressEvent(QKeyEvent* e) {
    if (on_key && on_key(e->key())) {
        update();
        request_frames();
        return;
    }
    QOpenGLWidget::keyPressEvent(e);
}

}  // namespace orrery::views
