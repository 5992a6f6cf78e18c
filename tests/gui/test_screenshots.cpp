// Screenshots of every main view of the workbench with the demo's results, taken on a real X server
// (ctest runs this under xvfb-run) so the OpenGL inspector is drawn too. They are kept as test artifacts in
// the build tree (tests/screenshots/*.png) for a person to look at; the test checks that each shows
// something (many colours, not a blank or uniform window) and that the inspector drew frames.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QGuiApplication>
#include <QMessageBox>
#include <QProcess>
#include <QScreen>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <set>

#include "gui_fixtures.h"
#include "views/run/inspector_view.h"
#include "views/main_window.h"
#include "views/editors/jobs_editor.h"
#include "views/editors/strategy_editor.h"
#include "views/results/results_view.h"
#include "views/topology/topology_editor.h"
#include "views/welcome.h"

using namespace orrery;
using namespace orrery::views;

class TestScreenshots : public QObject {
    Q_OBJECT
    QTemporaryDir dir;

    static size_t colours(const QImage& image) {
        std::set<QRgb> seen;
        for (int y = 0; y < image.height(); y += 3)
            for (int x = 0; x < image.width(); x += 3) seen.insert(image.pixel(x, y));
        return seen.size();
    }

private slots:
    void every_main_view() {
        if (QGuiApplication::platformName() == "offscreen") QSKIP("needs an X server (ctest runs this under xvfb-run)");
        qputenv("ORRERY_NO_DIALOGS", "1");
        qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());
        const QString out = qEnvironmentVariable("ORRERY_SCREENSHOTS", dir.filePath("shots"));
        QDir().mkpath(out);
        MainWindow w(testing::source_presets(), testing::cli_path());
        const QString project = dir.filePath("demo.orrery");
        QString why;
        QVERIFY(MainWindow::create_demo_project(testing::source_presets(), project, &why));
        QVERIFY(w.open_project(project, &why));
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        {   // Drawn on demand: an idle inspector once drew 40 frames a second (60-70 % of a core).
            testing::wait_for([] { return false; }, 500);  // the frames opening asked for
            const uint64_t f0 = w.inspector()->canvas()->frames();
            testing::wait_for([] { return false; }, 1000);
            const uint64_t idle = w.inspector()->canvas()->frames() - f0;
            qInfo("inspector idle: %llu frames in 1 s", (unsigned long long)idle);
            QVERIFY2(idle <= 2, qPrintable(QString("%1 frames in an idle second").arg(idle)));
        }
        QSignalSpy done(&w, &MainWindow::runFinished);
        const uint64_t frames_before = w.inspector()->canvas()->frames();
        QElapsedTimer streaming;
        streaming.start();
        QVERIFY2(w.start_run(&why), qPrintable(why));
        QVERIFY(testing::wait_for([&] { return done.count() > 0; }, 120'000));
        qInfo("inspector while the run streamed: %.1f frames per second over %.1f s", (w.inspector()->canvas()->frames() - frames_before) / (streaming.elapsed() / 1000.0),
              streaming.elapsed() / 1000.0);
        w.results()->pin_baseline(0);
        QVERIFY(testing::wait_for([&] { return w.inspector()->canvas()->frames() > 5; }, 5000));
        const QStringList names = {"topology", "strategy", "jobs", "network", "sweep", "results"};
        for (int tab = 0; tab < names.size(); ++tab) {
            w.tabs()->setCurrentIndex(tab);
            if (tab == 0) w.inspector()->state().tab_request = 0;
            if (tab == 5) {
                w.inspector()->state().show("e0001");
                w.inspector()->state().whole_run();
                w.inspector()->state().tab_request = 2;
            }
            testing::wait_for([] { return false; }, 700);  // a few inspector frames
            const QImage shot = w.screen()->grabWindow(w.winId()).toImage();
            const QString file = out + "/" + names[tab] + ".png";
            QVERIFY(shot.save(file));
            QVERIFY2(colours(shot) > 40, qPrintable(file + ": too few colours"));
            qInfo("screenshot: %s", qPrintable(file));
        }
        {   // The inspector's Uplinks tab: each tier's uplinks at the last sample, their busiest and mean over time, losses.
            w.tabs()->setCurrentIndex(0);
            w.inspector()->state().show("e0001");
            w.inspector()->state().whole_run();
            w.inspector()->state().tab_request = 3;
            testing::wait_for([] { return false; }, 700);
            const QImage shot = w.screen()->grabWindow(w.winId()).toImage();
            QVERIFY(shot.save(out + "/uplinks.png"));
            qInfo("screenshot: %s", qPrintable(out + "/uplinks.png"));
        }
        {   // The engine's checks as the user edits: TP 3 over 32 heads is an error in the Problems tab, and Run is off.
            w.tabs()->setCurrentIndex(1);
            emit w.strategy()->edited("workload.parallel.tp", "3");
            w.check_problems_now();
            w.findChild<QDockWidget*>("problems-dock")->raise();
            QVERIFY(!w.run_enabled());
            testing::wait_for([] { return false; }, 300);
            const QImage shot = w.screen()->grabWindow(w.winId()).toImage();
            QVERIFY(shot.save(out + "/problems.png"));
            qInfo("screenshot: %s", qPrintable(out + "/problems.png"));
            w.undo_stack()->undo();
        }
        {   // Failures on the canvas: a link between switches fails, another is degraded; drawn apart, listed.
            w.tabs()->setCurrentIndex(0);
            const TopoDoc& d = w.topology()->doc();
            std::vector<uint64_t> between_switches;
            for (const TopoLink& l : d.links)
                if (d.box(l.a)->kind == BoxKind::network_switch && d.box(l.b)->kind == BoxKind::network_switch) between_switches.push_back(l.id);
            QVERIFY(between_switches.size() >= 2);
            QString event_why;
            QVERIFY2(w.topology()->add_fabric_event(0, between_switches[0], EventAction::fail, "200us", "", &event_why), qPrintable(event_why));
            QVERIFY2(w.topology()->add_fabric_event(0, between_switches[3], EventAction::degrade, "0us", "50Gbps", &event_why), qPrintable(event_why));
            testing::wait_for([] { return false; }, 300);
            const QImage shot = w.screen()->grabWindow(w.winId()).toImage();
            QVERIFY(shot.save(out + "/failures.png"));
            qInfo("screenshot: %s", qPrintable(out + "/failures.png"));
            w.undo_stack()->undo();
            w.undo_stack()->undo();
        }
        {   // Several jobs: the Jobs tab (list, placement, the chosen job's model and strategy) and the canvas with each
            // job's GPUs in its colour.
            w.jobs()->make_mix();
            emit w.jobs()->edited("workload.jobs[0].parallel.dp", "1");
            w.jobs()->add_job();
            emit w.jobs()->edited("workload.jobs[1].placement", "{\"policy\": \"spread\"}");
            w.tabs()->setCurrentIndex(2);
            testing::wait_for([] { return false; }, 300);
            QImage shot = w.screen()->grabWindow(w.winId()).toImage();
            QVERIFY(shot.save(out + "/jobs-tab.png"));
            w.tabs()->setCurrentIndex(0);
            testing::wait_for([] { return false; }, 300);
            shot = w.screen()->grabWindow(w.winId()).toImage();
            QVERIFY(shot.save(out + "/jobs-canvas.png"));
            qInfo("screenshot: %s, %s", qPrintable(out + "/jobs-tab.png"), qPrintable(out + "/jobs-canvas.png"));
            for (int i = 0; i < 4; ++i) w.undo_stack()->undo();
        }
        QVERIFY(w.inspector()->canvas()->gl_ready());
        qInfo("inspector: %llu frames, worst %.2f ms", (unsigned long long)w.inspector()->canvas()->frames(), w.inspector()->canvas()->worst_frame_ms());
    }

    // A new user's first hour, step by step: the welcome page, a template, a run (F5 on the unsaved project saves
    // it first), the inspector's timeline, the results with the report's charts, and the report as a PDF page.
    // Each step is a screenshot (new-user-*.png) a person looks at; no error dialog may appear on the way.
    void new_user_path() {
        if (QGuiApplication::platformName() == "offscreen") QSKIP("needs an X server (ctest runs this under xvfb-run)");
        qputenv("ORRERY_NO_DIALOGS", "1");
        qputenv("XDG_CONFIG_HOME", dir.filePath("config-new-user").toUtf8());
        const QString out = qEnvironmentVariable("ORRERY_SCREENSHOTS", dir.filePath("shots"));
        QDir().mkpath(out);
        auto no_error_dialog = [] {
            for (QWidget* top : QApplication::topLevelWidgets())
                if (auto* box = qobject_cast<QMessageBox*>(top); box && box->isVisible()) return box->text();
            return QString();
        };
        auto shoot = [&](QWidget* what, const QString& name) {
            const QImage shot = what->screen()->grabWindow(what->winId()).toImage();
            const QString file = out + "/new-user-" + name + ".png";
            QVERIFY(shot.save(file));
            QVERIFY2(colours(shot) > 20, qPrintable(file + ": too few colours"));
            const QString dialog = no_error_dialog();
            QVERIFY2(dialog.isEmpty(), qPrintable(name + ": an error dialog says " + dialog));
            qInfo("screenshot: %s", qPrintable(file));
        };
        MainWindow w(testing::source_presets(), testing::cli_path());
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        {
            WelcomePage page({}, &w);
            page.show();
            QVERIFY(QTest::qWaitForWindowExposed(&page));
            testing::wait_for([] { return false; }, 300);
            shoot(&page, "1-welcome");
        }
        WelcomeChoice pick;
        pick.kind = WelcomeChoice::from_template;
        pick.template_index = 0;
        w.act_on_welcome(pick);
        w.tabs()->setCurrentIndex(0);
        testing::wait_for([] { return false; }, 500);
        shoot(&w, "2-template");

        const QString project = dir.filePath("first.orrery");
        w.ask_run_project_file = [project] { return project; };
        QSignalSpy done(&w, &MainWindow::runFinished);
        QString why;
        auto* f5 = w.findChild<QAction*>("run-action");
        QVERIFY(f5);
        f5->trigger();  // Run ▸ Run (F5): the unsaved project is saved where the user says, then it runs
        testing::wait_for([] { return false; }, 700);
        shoot(&w, "3-running");
        QVERIFY(testing::wait_for([&] { return done.count() > 0; }, 300'000));
        QVERIFY(QFile::exists(project));
        QVERIFY2(!w.results()->table().rows.empty() && w.results()->table().rows[0].status == "ok",
                 qPrintable(QString::fromStdString(w.results()->table().rows.empty() ? "no rows" : w.results()->table().rows[0].message)));

        w.inspector()->state().show("e0000");
        w.inspector()->state().whole_run();
        w.inspector()->state().tab_request = 2;
        testing::wait_for([] { return false; }, 700);
        shoot(&w, "4-inspect");
        // The span under the cursor is named (task, kind, bytes, peers) in a tooltip: a look, not a check (ImGui
        // draws it; the text itself is test_workbench's the_timeline_has_a_ruler_and_names_the_span_under_the_cursor).
        QWidget* canvas = w.inspector()->canvas();
        for (int i = 0; i < 3; ++i) {
            QTest::mouseMove(canvas, QPoint(canvas->width() / 5 + i, 106));  // rank 0, communication lane
            testing::wait_for([] { return false; }, 150);
        }
        shoot(&w, "4-hover");

        w.tabs()->setCurrentIndex(5);
        w.results()->tabs()->setCurrentIndex(1);
        QVERIFY(w.results()->chart_count() > 0);
        testing::wait_for([] { return false; }, 500);
        shoot(&w, "5-results");

        const QString pdf = out + "/new-user-report.pdf";
        QFile::remove(pdf);
        QVERIFY2(w.results()->export_pdf(pdf, &why), qPrintable(why));
        QProcess render;
        render.start("pdftoppm", {"-r", "80", "-png", "-f", "1", "-l", "1", "-singlefile", pdf, out + "/new-user-6-report"});
        if (render.waitForFinished(30000) && render.exitCode() == 0) qInfo("screenshot: %s", qPrintable(out + "/new-user-6-report.png"));
        else qInfo("pdftoppm (poppler-utils) is not installed: the report's first page was not rendered");
        QCOMPARE(no_error_dialog(), QString());
    }
};

QTEST_MAIN(TestScreenshots)
#include "test_screenshots.moc"
