#pragma once
// Mouse button changes for Dear ImGui, applied one per frame. ImGui 1.86 (Debian's) reads the buttons'
// state once per frame: a press and its release arriving between two frames — a short click while frames
// are slow, as with software OpenGL under load — left the state unchanged and the click unseen (tabs and
// buttons needed a press of about 150 ms). Plain data, so it is tested without OpenGL.
#include <deque>

namespace orrery::views {

struct ButtonChange {
    int button = 0;  // 0 left, 1 right, 2 middle
    bool down = false;
    float x = 0, y = 0;  // where it happened, in widget pixels
};

struct ButtonQueue {
    std::deque<ButtonChange> pending;

    void push(const ButtonChange& c) { pending.push_back(c); }
    // Before a frame: applies the oldest change to `down` (ImGuiIO::MouseDown) and the mouse position.
    // Returns whether changes are left for later frames.
    bool apply_one(bool* down, float& x, float& y) {
        if (pending.empty()) return false;
        const ButtonChange c = pending.front();
        pending.pop_front();
        down[c.button] = c.down;
        x = c.x;
        y = c.y;
        return !pending.empty();
    }
};

}  // namespace orrery::views
