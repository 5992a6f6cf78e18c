// The live inspector's frame rate while a 1,024-GPU run streams into it (issue 24's target: at least 30 frames
// per second with software OpenGL on 2 cores). The workbench runs the bundled GPT-3 175B row (TP8 PP8 DP16 on
// roft-1024, steady-state skipping) with queues and flow rates recorded, its layers cut so the run ends within
// minutes. While it streams the inspector shows its Queues, then its Flow rates tab (half the window each); when
// it ends (the timeline is stored at an experiment's end), the whole run's timeline of 1,024 ranks. Frames drawn
// are counted per second. Needs an X server:
//   xvfb-run -a -s "-screen 0 1600x1000x24" build/release/tests/bench/bench_inspector [--seconds 60] [--layers 8]
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "views/run/imgui_widget.h"
#include "views/run/inspector_view.h"
#include "views/main_window.h"

using namespace orrery;
using namespace orrery::views;

namespace {

void wait(int ms) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) QApplication::processEvents(QEventLoop::AllEvents, 5);
}

}  // namespace

int main(int argc, char** argv) {
    const auto args = bench::parse_bench_args(argc, argv, "The inspector's frame rate while a 1,024-GPU run streams into it (under an X server)",
                                              {{"--seconds", "measured seconds while the run streams, half per tab (default 60)"},
                                               {"--layers", "GPT-3 175B's layers kept, to bound the run (default 8: one per pipeline stage)"}});
    QApplication app(argc, argv);
    if (QGuiApplication::platformName() == "offscreen") {
        std::fprintf(stderr, "bench_inspector needs an X server: run it under xvfb-run (see the top of bench_inspector.cpp)\n");
        return 2;
    }
    const double seconds = args.count("--seconds") ? std::stod(args.at("--seconds")) : 60;
    const int layers = args.count("--layers") ? std::stoi(args.at("--layers")) : 8;
    qputenv("ORRERY_NO_DIALOGS", "1");
    QTemporaryDir dir;
    qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());

    nlohmann::json doc = nlohmann::json::parse(std::ifstream(std::string(ORRERY_SOURCE_DIR) + "/presets/scenarios/wormhole-gpt175b-skipping.json"));
    doc["workload"]["model"]["layers"] = layers;
    doc["output"] = {{"record", {"fct", "queues", "flow_rates"}}, {"sample_interval", "10us"}};
    MainWindow w(PresetLibrary({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"}), ORRERY_CLI);
    w.load_scenario("inspector bench", doc);
    QString why;
    if (!w.save_project_as(dir.filePath("bench.orrery"), &why)) {
        std::fprintf(stderr, "bench_inspector: %s\n", qPrintable(why));
        return 1;
    }
    w.resize(1500, 950);
    w.show();
    wait(1500);
    if (!w.start_run(&why)) {
        std::fprintf(stderr, "bench_inspector: %s\n", qPrintable(why));
        return 1;
    }
    InspectorState& st = w.inspector()->state();
    ImGuiWidget* canvas = w.inspector()->canvas();
    canvas->set_continuous(true);  // the frame rate the inspector can draw (it draws on demand otherwise)
    bool finished = false;
    QObject::connect(&w, &MainWindow::runFinished, [&] { finished = true; });
    // Frames per second, one figure per second of `window`, while the tab `tab` is shown.
    auto measure = [&](int tab, double window, const char* what) {
        st.tab_request = tab;
        wait(300);
        std::vector<double> per_second;
        for (int s = 0; s < int(window); ++s) {
            const uint64_t f0 = canvas->frames();
            QElapsedTimer t;
            t.start();
            wait(1000);
            per_second.push_back(double(canvas->frames() - f0) / (t.elapsed() / 1000.0));
        }
        std::sort(per_second.begin(), per_second.end());
        double mean = 0;
        for (double f : per_second) mean += f / double(per_second.size());
        size_t samples = 0, rates = 0, spans = 0, ranks = 0;
        if (const ExperimentTelemetry* e = st.shown()) {
            samples = e->tier_max[0].t.size();
            rates = e->total_rate.t.size();
            spans = e->spans.size();
            for (const Span& sp : e->spans) ranks = std::max(ranks, size_t(sp.rank + 1));
        }
        std::printf("%-34s %.1f frames/s mean, %.1f worst second, %.1f median over %zu s (received: %zu tier-1 samples, %zu rate samples, "
                    "%zu ranks, %zu timeline spans)\n",
                    what, mean, per_second.front(), per_second[per_second.size() / 2], per_second.size(), samples, rates, ranks, spans);
        std::fflush(stdout);
    };
    // Streaming starts with the first queue samples: before them the child compiles the job and its fabric.
    QElapsedTimer waiting;
    waiting.start();
    auto first_samples = [&] {
        const ExperimentTelemetry* e = st.shown();
        return e && !e->tier_max[0].t.empty();
    };
    while (!first_samples() && !finished && waiting.elapsed() < 600'000) wait(100);
    std::printf("first queue samples after %.1f s\n", waiting.elapsed() / 1000.0);
    measure(0, seconds / 2, "queues, while the run streams");
    measure(1, seconds / 2, "flow rates, while the run streams");
    // The timeline is stored when an experiment ends: 1,024 ranks' spans, drawn over the whole iteration.
    while (!finished && waiting.elapsed() < 3'600'000) wait(200);
    wait(1500);
    st.whole_run();
    measure(2, 10, "timeline of the whole run, after it");
    std::printf("worst frame %.2f ms (paint), %llu frames in all\n", canvas->worst_frame_ms(), (unsigned long long)canvas->frames());
    w.cancel_run();
    wait(1500);
    return 0;
}
