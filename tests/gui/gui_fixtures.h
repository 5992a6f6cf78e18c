#pragma once
// What the workbench's GUI tests share: the preset library of the source tree, the CLI under test, a demo
// project in a fresh temporary folder, and waiting for a condition while the event loop runs.
#include <functional>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <QTemporaryDir>
#include <QTest>

#include "scenario/presets.h"

namespace orrery::views::testing {

inline PresetLibrary source_presets() { return PresetLibrary({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"}); }
inline QString cli_path() { return QString(ORRERY_CLI); }

// Runs the event loop until `done` or `ms` pass; returns whether it became true.
inline bool wait_for(const std::function<bool()>& done, int ms) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > ms) return false;
        // The event loop itself waits (no sleeping outside it), so timers and repaints run as in the application.
        QEventLoop loop;
        QTimer::singleShot(10, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

}  // namespace orrery::views::testing
