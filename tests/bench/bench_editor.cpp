// Workbench editor targets (issue 5): the k = 16 fat-tree (1,024 hosts, 320 switches) with every box on the
// canvas stays interactive — no frame over 50 ms while panning or zooming — and the k = 60 fabric (54,000
// hosts) opens, collapsed into groups, in under 3 s. Frames are painted offscreen (QT_QPA_PLATFORM=offscreen,
// the raster engine a desktop without GPU acceleration uses) at the given window size.
//
// Usage: bench_editor [--frames N] [--width W] [--height H]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include <QApplication>
#include <QScrollBar>

#include "bench_args.h"
#include "scenario/presets.h"
#include "views/topology/topology_editor.h"

using namespace orrery;
using namespace orrery::views;
using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    const auto args = bench::parse_bench_args(argc, argv, "Topology editor: k=60 opening time, k=16 pan/zoom frame times",
                                              {{"--frames", "pan + zoom frames (default 120)"}, {"--width", "window width (default 1400)"},
                                               {"--height", "window height (default 800)"}});
    auto get = [&](const char* k, int d) { return args.count(k) ? std::atoi(args.at(k).c_str()) : d; };
    const int frames = get("--frames", 120), width = get("--width", 1400), height = get("--height", 800);
    const PresetLibrary presets = standard_presets(argv[0]);

    // k = 60: open collapsed.
    {
        TopologyEditor editor(presets);
        editor.resize(width, height);
        editor.show();
        QApplication::processEvents();
        const auto t0 = Clock::now();
        editor.set_doc(doc_from_topology({{"generator", "fat-tree"}, {"k", 60}}, {}, presets));
        (void)editor.view()->viewport()->grab();
        const double open_ms = ms_since(t0);
        std::printf("k=60 fat-tree: %zu hosts, %zu switches, %zu links; opened collapsed (%lld items on the canvas) in %.0f ms (target < 3000 ms)\n",
                    editor.doc().host_count(), editor.doc().switch_count(), editor.doc().links.size(), (long long)editor.scene()->items().size(), open_ms);
    }
    // k = 16 with every box: pan and zoom.
    TopologyEditor editor(presets);
    editor.resize(width, height);
    editor.show();
    QApplication::processEvents();
    editor.show_every_box(true);
    auto t0 = Clock::now();
    editor.set_doc(doc_from_topology({{"generator", "fat-tree"}, {"k", 16}}, {}, presets));
    (void)editor.view()->viewport()->grab();
    std::printf("k=16 fat-tree: %zu hosts, %zu switches, %zu links, %lld items, every box shown; opened in %.0f ms\n", editor.doc().host_count(),
                editor.doc().switch_count(), editor.doc().links.size(), (long long)editor.scene()->items().size(), ms_since(t0));
    TopologyView* view = editor.view();
    std::vector<double> pan, zoom;
    for (int phase = 0; phase < 3; ++phase) {
        // Whole fabric, then zoomed in 4×, then 16× (boxes with names and NICs drawn).
        view->fit();
        for (int z = 0; z < phase; ++z) view->zoom_by(4);
        for (int f = 0; f < frames / 3; ++f) {
            t0 = Clock::now();
            view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->value() + (f % 20 < 10 ? 25 : -25));
            (void)view->viewport()->grab();  // paints the frame now, through the view as the screen would
            pan.push_back(ms_since(t0));
            t0 = Clock::now();
            view->zoom_by(f % 2 ? 1.1 : 1 / 1.1);
            (void)view->viewport()->grab();  // paints the frame now, through the view as the screen would
            zoom.push_back(ms_since(t0));
        }
    }
    auto report = [](const char* what, std::vector<double> v) {
        std::sort(v.begin(), v.end());
        std::printf("  %-5s %zu frames: median %.1f ms, p95 %.1f ms, worst %.1f ms (target: none over 50 ms)\n", what, v.size(), v[v.size() / 2],
                    v[size_t(v.size() * 0.95)], v.back());
    };
    report("pan", pan);
    report("zoom", zoom);
    return 0;
}
