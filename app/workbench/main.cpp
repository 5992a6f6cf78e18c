// orrery: the workbench. `orrery [PROJECT]` opens a project; `orrery --demo [PROJECT]` creates the bundled
// demo project there first when it does not exist (default: $XDG_DATA_HOME/orrery/demo.orrery).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>

#include "common/version.h"
#include "scenario/presets.h"
#include "views/main_window.h"
#include "views/results/results_view.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Orrery");
    QApplication::setOrganizationName("Orrery");
    QApplication::setApplicationVersion(QString::fromStdString(orrery::version()));
    QCommandLineParser parser;
    parser.setApplicationDescription("Orrery workbench: design LLM-training clusters, run sweeps at packet level, watch them live");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("project", "Project file (.orrery, SQLite) to open");
    QCommandLineOption demo("demo", "Open the bundled demo project (created at PROJECT, or in the user's data folder, when missing)");
    QCommandLineOption run("run", "Start a run of the opened scenario at once");
    QCommandLineOption screenshot("screenshot", "Save a PNG of the window to FILE after --after seconds, then quit", "FILE");
    QCommandLineOption after("after", "Seconds before --screenshot is taken (default 3)", "SECONDS", "3");
    QCommandLineOption tab("tab", "Tab to show first: topology, strategy, network, sweep, results, charts (the results' charts)", "TAB");
    parser.addOption(demo);
    parser.addOption(run);
    parser.addOption(screenshot);
    parser.addOption(after);
    parser.addOption(tab);
    parser.process(app);

    const orrery::PresetLibrary presets = orrery::standard_presets(argv[0]);
    const QString cli = QFileInfo(QCoreApplication::applicationDirPath() + "/orrery-cli").absoluteFilePath();
    orrery::views::MainWindow window(presets, cli);
    QString project = parser.positionalArguments().value(0);
    if (parser.isSet(demo)) {
        if (project.isEmpty()) project = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/demo.orrery";
        QString why;
        if (!orrery::views::MainWindow::create_demo_project(presets, project, &why)) {
            QMessageBox::critical(nullptr, "Orrery", "Cannot create the demo project: " + why);
            return 1;
        }
    }
    if (!project.isEmpty()) {
        QString why;
        if (!window.open_project(project, &why)) QMessageBox::warning(&window, "Open project", why);
    }
    window.resize(1500, 950);
    window.show();
    // First start, with nothing asked for on the command line: the welcome page (Help ▸ Welcome page later).
    QSettings settings("Orrery", "workbench");
    if (project.isEmpty() && !parser.isSet(screenshot) && !parser.isSet(run) && !qEnvironmentVariableIsSet("ORRERY_NO_DIALOGS") &&
        !settings.value("welcome-shown").toBool()) {
        settings.setValue("welcome-shown", true);
        QTimer::singleShot(0, &window, [&window] { window.show_welcome(); });
    }
    if (parser.isSet(run)) {
        QString why;
        if (!window.start_run(&why)) QMessageBox::warning(&window, "Run", why);
    }
    if (parser.isSet(tab)) {
        const QStringList names = {"topology", "strategy", "network", "sweep", "results"};
        const bool charts = parser.value(tab) == "charts";  // the Results tab's overlaid charts
        window.tabs()->setCurrentIndex(charts ? int(names.size()) - 1 : std::max(0, int(names.indexOf(parser.value(tab)))));
        if (charts) window.results()->tabs()->setCurrentIndex(1);
    }
    if (parser.isSet(screenshot)) {
        const QString file = parser.value(screenshot);
        QTimer::singleShot(int(parser.value(after).toDouble() * 1000), &window, [&window, file] {
            // The screen's pixels, so the OpenGL inspector is in the picture too; without a screen (offscreen), the widgets.
            const QPixmap shot = QGuiApplication::platformName() == "offscreen" ? window.grab() : window.screen()->grabWindow(window.winId());
            if (!shot.save(file)) std::fprintf(stderr, "orrery: cannot write %s\n", file.toLocal8Bit().constData());
            QApplication::quit();
        });
    }
    return app.exec();
}
