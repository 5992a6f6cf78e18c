#include "views/main_window.h"

#include "runtime/device/device_runner.h"

#include <fstream>
#include <thread>

#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QListWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTabWidget>
#include <QTextEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "common/version.h"
#include "scenario/load.h"
#include "scenario/scenario.h"
#include "scenario/sweep.h"
#include "telemetry/results_store.h"
#include "telemetry/store_reader.h"
#include "views/cluster_job.h"
#include "views/editors/scenario_checks.h"
#include "views/words.h"
#include "views/run/inspector_view.h"
#include "views/editors/network_editor.h"
#include "views/results/results_view.h"
#include "views/run/run_controller.h"
#include "views/editors/jobs_editor.h"
#include "views/editors/strategy_editor.h"
#include "views/editors/sweep_editor.h"
#include "views/run/telemetry_feed.h"
#include "views/topology/topology_editor.h"
#include "views/user_guide.h"

namespace orrery::views {
namespace {

// "Start with an empty scenario": no fabric (the canvas is empty), the starter's network and model forms.
nlohmann::json empty_scenario() {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "scenario"},
            {"network", {{"preset", "reference-400g"}}},
            {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", {{"kind", "llm"}, {"model", {{"preset", "gpt3-6.7b"}}}, {"gpu", "H100"},
                          {"parallel", {{"tp", 8}, {"pp", 2}, {"dp", 1}, {"micro_batches", 2}, {"sp", true}, {"zero", 1}}}, {"network_mode", "packet"}}},
            {"output", {{"record", {"fct", "pfc", "queues", "flow_rates"}}}}};
}

nlohmann::json starter_scenario() {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "untitled"},
            {"topology", {{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}, {"tiers", 2},
                          {"link_defaults", {{"all", {{"rate", "400Gbps"}, {"delay", "1us"}}}}}}},
            {"network", {{"preset", "reference-400g"}}},
            {"cc", {{"preset", "dcqcn-400g"}}},
            {"workload", {{"kind", "llm"}, {"model", {{"preset", "gpt3-6.7b"}}}, {"gpu", "H100"},
                          {"parallel", {{"tp", 8}, {"pp", 2}, {"dp", 1}, {"micro_batches", 2}, {"sp", true}, {"zero", 1}}}, {"network_mode", "packet"}}},
            {"output", {{"record", {"fct", "pfc", "queues", "flow_rates"}}}}};
}

QString eta_text(double s) {
    if (s < 0) return "–";
    if (s < 60) return QString::number(s, 'f', 1) + " s";
    return QString("%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60);
}

}  // namespace

MainWindow::MainWindow(PresetLibrary presets, QString cli_path, QWidget* parent)
    : QMainWindow(parent), presets_(std::move(presets)), cli_(std::move(cli_path)) {
    setObjectName("orrery-workbench");
    tabs_ = new QTabWidget(this);
    topology_ = new TopologyEditor(presets_, this);
    strategy_ = new StrategyEditor(presets_, this);
    network_ = new NetworkEditor(presets_, this);
    sweep_ = new SweepEditor(presets_, this);
    results_ = new ResultsView(this);
    tabs_->addTab(topology_, "Topology");
    // In a scroll area, as the network editor's form is: the window can then shrink below the form's width
    // (the two-column strategy form held it at about 1,240 px).
    auto* strategy_scroll = new QScrollArea(tabs_);
    strategy_scroll->setWidget(strategy_);
    strategy_scroll->setWidgetResizable(true);
    strategy_scroll->setFrameShape(QFrame::NoFrame);
    tabs_->addTab(strategy_scroll, "Model && strategy");
    jobs_ = new JobsEditor(presets_, this);
    auto* jobs_scroll = new QScrollArea(tabs_);
    jobs_scroll->setWidget(jobs_);
    jobs_scroll->setWidgetResizable(true);
    jobs_scroll->setFrameShape(QFrame::NoFrame);
    tabs_->addTab(jobs_scroll, "Jobs");
    tabs_->addTab(network_, "Network && CC");
    tabs_->addTab(sweep_, "Sweep");
    tabs_->addTab(results_, "Results");
    setCentralWidget(tabs_);
    runner_ = new RunController(cli_, this);
    feed_ = new TelemetryFeed(this);

    build_docks();
    build_menus();

    connect(topology_, &TopologyEditor::message, this, &MainWindow::log);
    // The canvas follows the document first (connected first), so the forms below see its fabric.
    topology_->use_document(&document_);
    connect(&document_, &ScenarioDocument::changed, this, &MainWindow::document_changed);
    connect(topology_->scene(), &QGraphicsScene::selectionChanged, this, [this] { feed_->set_port_nodes(picked_switch_nodes()); });
    for (ScenarioForm* f : std::initializer_list<ScenarioForm*>{strategy_, jobs_, network_, sweep_})
        connect(f, &ScenarioForm::edited, this, [this, f](QString path, QString value) { apply_edit(path, value, tab_of(f)); });
    connect(network_, &NetworkEditor::message, this, &MainWindow::log);
    connect(results_, &ResultsView::message, this, &MainWindow::log);
    connect(results_, &ResultsView::openTimeline, this, [this](qint64 run, QString experiment) {
        TelemetryReader reader(project_path(), run);
        inspector_->state().clear();
        inspector_->state().add(reader.poll(picked_switch_nodes()));
        inspector_->state().show(experiment.toStdString());
        inspector_->state().whole_run();
        inspector_->state().tab_request = 2;
        if (auto* dock = findChild<QDockWidget*>("inspector-dock")) dock->raise();
        log("Inspector: run " + QString::number(run) + ", " + experiment);
    });
    connect(feed_, &TelemetryFeed::chunk, this, [this](std::shared_ptr<const TelemetryChunk> c) { inspector_->add(*c); });
    connect(runner_, &RunController::started, this, [this](qint64 run, int experiments) {
        log("Run started: " + counted(experiments, "experiment", "experiments"));
        inspector_->state().clear();
        // output.record absent records everything; present, it lists what is recorded.
        const nlohmann::json record = json_at(document(), "output.record");
        inspector_->state().queues_expected =
            !record.is_array() || std::find(record.begin(), record.end(), nlohmann::json("queues")) != record.end();
        feed_->watch(runner_->staging_store(), run);  // live telemetry from the child's own store
    });
    connect(runner_, &RunController::progressed, this, &MainWindow::refresh_run_table);
    connect(runner_, &RunController::logLine, this, &MainWindow::log);
    connect(runner_, &RunController::finished, this, [this](bool ok, QString message) {
        feed_->stop();
        set_locked(false);
        // The child has exited: its run is copied into the project on the project's own connection.
        const std::vector<int64_t> imported = import_staged_run(runner_->staging_store(), runner_->unfinished_status());
        run_status_->setText(ok ? "Run finished" : "<span style='color:#b00'>" + message.toHtmlEscaped().replace("\n", "<br>") + "</span>");
        log(ok && !imported.empty() ? QString("Run %1 finished").arg(imported.back()) : message);
        results_->set_store(project_path());
        if (!imported.empty()) results_->show_run(imported.back());
        refresh_project_tree();
        emit runFinished(ok, message);
    });
    connect(&autosave_timer_, &QTimer::timeout, this, &MainWindow::autosave);
    autosave_timer_.start(60'000);

    // First start: the inspector gets room for its plots; a saved layout replaces this.
    resizeDocks({findChild<QDockWidget*>("inspector-dock")}, {340}, Qt::Vertical);
    // ... the project tree what its names need, the run table its five columns, the forms the rest.
    resizeDocks({findChild<QDockWidget*>("project-dock"), findChild<QDockWidget*>("run-dock")}, {170, 340}, Qt::Horizontal);
    QSettings settings("Orrery", "workbench");
    restoreGeometry(settings.value("geometry").toByteArray());
    restoreState(settings.value("window-state").toByteArray());
    new_project();
    qApp->installEventFilter(this);
}

// The run controller is a child, destroyed after this window's members: its destructor stops a run still
// going, and that run's end must not reach a window whose project is gone (the test that closed a window
// mid-run crashed in import_staged_run). Its staging store stays beside the project, and opening the project
// again copies it in as interrupted (import_leftover_runs).
MainWindow::~MainWindow() { runner_->disconnect(); }

void MainWindow::build_docks() {
    auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    tree_ = new QTreeWidget(this);
    tree_->setHeaderLabels({"Project"});
    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        const QVariant run = item->data(0, Qt::UserRole);
        const QString scenario = item->data(0, Qt::UserRole + 1).toString();
        if (run.isValid()) {
            results_->show_run(run.toLongLong());
            tabs_->setCurrentWidget(results_);
        } else if (!scenario.isEmpty() && project_) {
            for (const StoredScenario& s : project_->scenarios())
                if (QString::fromStdString(s.name) == scenario && maybe_save()) load_scenario(s.name, s.document, s.positions);
        }
    });
    dock("Project", "project-dock", tree_, Qt::LeftDockWidgetArea);

    inspector_ = new InspectorView(this);
    dock("Inspector", "inspector-dock", inspector_, Qt::BottomDockWidgetArea);

    auto* run_panel = new QWidget(this);
    auto* rl = new QVBoxLayout(run_panel);
    run_status_ = new QLabel("No run yet", run_panel);
    run_status_->setWordWrap(true);
    overall_ = new QProgressBar(run_panel);
    overall_->setRange(0, 1000);
    run_table_ = new QTableWidget(0, 5, run_panel);
    run_table_->setHorizontalHeaderLabels({"Experiment", "Status", "Done", "Wall", "ETA"});
    run_table_->horizontalHeaderItem(2)->setToolTip("Share of the experiment's flows that have finished");
    run_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The progress bar's column is as wide as "100.0%" needs whatever the dock's width (a stretched column
    // shrank with the dock and clipped "11.2%" to "1.2%"); the experiment column takes what is left.
    run_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    run_table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Fixed);
    run_table_->setColumnWidth(2, std::max(run_table_->fontMetrics().horizontalAdvance("100.0%") + 40,
                                           run_table_->horizontalHeader()->sectionSizeHint(2)));
    run_table_->verticalHeader()->hide();
    run_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* run_button = new QPushButton("Run (F5)", run_panel);
    auto* cancel_button = new QPushButton("Cancel (Shift+F5)", run_panel);
    connect(run_button, &QPushButton::clicked, this, [this] {
        QString why;
        if (!start_run(&why)) log("Run not started: " + why);
    });
    connect(cancel_button, &QPushButton::clicked, this, &MainWindow::cancel_run);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_button);
    buttons->addWidget(cancel_button);
    rl->addLayout(buttons);
    rl->addWidget(overall_);
    rl->addWidget(run_status_);
    rl->addWidget(run_table_, 1);
    dock("Run", "run-dock", run_panel, Qt::RightDockWidgetArea);

    problems_ = new QListWidget(this);
    problems_->setWordWrap(true);
    dock("Problems", "problems-dock", problems_, Qt::BottomDockWidgetArea);
    problems_timer_.setSingleShot(true);
    problems_timer_.setInterval(300);
    connect(&problems_timer_, &QTimer::timeout, this, &MainWindow::check_problems);

    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);
    auto* log_dock = dock("Log", "log-dock", log_, Qt::BottomDockWidgetArea);
    tabifyDockWidget(findChild<QDockWidget*>("inspector-dock"), log_dock);
    // Beside the Inspector and the Log: its tab's title counts the errors ("Problems (1 error)").
    tabifyDockWidget(log_dock, findChild<QDockWidget*>("problems-dock"));
    findChild<QDockWidget*>("inspector-dock")->raise();
}

void MainWindow::build_menus() {
    auto add = [this](QMenu* menu, const QString& text, const QKeySequence& key, auto slot) {
        QAction* a = menu->addAction(text);
        a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    QMenu* file = menuBar()->addMenu("&File");
    QAction* new_action = add(file, "&New project", QKeySequence::New, [this] {
        if (!maybe_save()) return;
        new_project();
        tabs_->setCurrentWidget(topology_);
        log("New project: a starter scenario (16 H100 on a rail-optimized fabric); File ▸ Save as… keeps it, Help ▸ Welcome page has templates");
    });
    new_action->setObjectName("new-action");
    add(file, "&Open project…", QKeySequence::Open, [this] {
        if (!maybe_save()) return;
        const QString f = QFileDialog::getOpenFileName(this, "Open project", QString(), "Orrery projects (*.orrery *.sqlite);;All files (*)");
        QString why;
        if (!f.isEmpty() && !open_project(f, &why)) QMessageBox::warning(this, "Open project", why);
    });
    recent_menu_ = file->addMenu("Open &recent");
    connect(recent_menu_, &QMenu::aboutToShow, this, [this] {
        recent_menu_->clear();
        for (const QString& f : QSettings("Orrery", "workbench").value("recent").toStringList())
            recent_menu_->addAction(f, this, [this, f] {
                QString why;
                if (maybe_save() && !open_project(f, &why)) QMessageBox::warning(this, "Open project", why);
            });
    });
    add(file, "&Save", QKeySequence::Save, [this] {
        QString why;
        if (!save(&why) && !why.isEmpty()) QMessageBox::warning(this, "Save", why);
    });
    add(file, "Save &as…", QKeySequence::SaveAs, [this] {
        const QString f = QFileDialog::getSaveFileName(this, "Save project as", "project.orrery", "Orrery projects (*.orrery)");
        QString why;
        if (!f.isEmpty() && !save_project_as(f, &why)) QMessageBox::warning(this, "Save as", why);
    });
    add(file, "&Import scenario JSON…", QKeySequence(Qt::CTRL | Qt::Key_I), [this] {
        const QString f = QFileDialog::getOpenFileName(this, "Import scenario", QString(), "Scenarios (*.json)");
        if (f.isEmpty() || !maybe_save()) return;
        Diagnostics diags;
        const nlohmann::json doc = parse_json_text(read_text_file(f.toStdString()), f.toStdString(), diags);
        if (doc.is_null()) {
            QMessageBox::warning(this, "Import scenario", QString::fromStdString(diags.items().empty() ? "not JSON" : diags.items().front().where + ": " + diags.items().front().message));
            return;
        }
        load_scenario(QFileInfo(f).completeBaseName().toStdString(), doc);
        dirty_ = true;
        update_title();
    });
    add(file, "&Export scenario JSON…", QKeySequence(Qt::CTRL | Qt::Key_E), [this] {
        const QString f = QFileDialog::getSaveFileName(this, "Export scenario", QString::fromStdString(scenario_name_) + ".json", "Scenarios (*.json)");
        if (f.isEmpty()) return;
        std::ofstream out(f.toStdString());
        out << document().dump(2) << "\n";
        log(out ? "Scenario written to " + f + " (orrery-cli run takes it)" : "Cannot write " + f);
    });
#ifdef ORRERY_HAVE_MPI
    QAction* cluster = add(file, "Export &cluster job…", QKeySequence(), [this] {
        ClusterJob job;
        if (!ask_cluster_job(this, job)) return;
        const QString f = QFileDialog::getSaveFileName(this, "Export cluster job (sbatch script)", QString::fromStdString(scenario_name_) + ".sh",
                                                       "Slurm batch scripts (*.sh)");
        if (f.isEmpty()) return;
        QString done, why;
        if (export_cluster_job(cli_, document(), f, job, &done, &why)) log(done);
        else QMessageBox::warning(this, "Export cluster job", why);
    });
    cluster->setObjectName("export-cluster-job-action");
    cluster->setToolTip("An sbatch script that runs this scenario's sweep over MPI ranks with srun (orrery-cli slurm)");
#endif
    file->addSeparator();
    add(file, "&Quit", QKeySequence::Quit, [this] { close(); });

    QMenu* edit = menuBar()->addMenu("&Edit");
    QAction* undo = document_.history()->createUndoAction(this, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_.history()->createRedoAction(this, "&Redo");
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    add(edit, "&Copy", QKeySequence::Copy, [this] { topology_->copy_selection(); });
    add(edit, "&Paste", QKeySequence::Paste, [this] { topology_->paste_clipboard(); });
    add(edit, "D&uplicate", QKeySequence(Qt::CTRL | Qt::Key_D), [this] { topology_->duplicate_selection(); });
    add(edit, "&Delete", QKeySequence::Delete, [this] { topology_->delete_selection(); });
    add(edit, "Select &all", QKeySequence::SelectAll, [this] {
        for (QGraphicsItem* i : topology_->scene()->items()) i->setSelected(true);
    });

    QMenu* view = menuBar()->addMenu("&View");
    add(view, "Zoom &in", QKeySequence::ZoomIn, [this] { topology_->view()->zoom_by(1.25); });
    add(view, "Zoom &out", QKeySequence::ZoomOut, [this] { topology_->view()->zoom_by(0.8); });
    add(view, "&Fit to view", QKeySequence(Qt::CTRL | Qt::Key_0), [this] { topology_->view()->fit(); });
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());

    QMenu* fabric = menuBar()->addMenu("F&abric");
    add(fabric, "&Generate…", QKeySequence(Qt::CTRL | Qt::Key_G), [this] { topology_->open_generator_dialog(); });

    QMenu* run = menuBar()->addMenu("&Run");
    run_action_ = add(run, "&Run", QKeySequence(Qt::Key_F5), [this] {
        QString why;
        // Runs are stored in the project: a project not saved yet is offered a file first.
        if (!project_ && !runner_->running()) {
            const QString file = ask_project_file_for_run();
            if (file.isEmpty()) return;
            if (!save_project_as(file, &why)) {
                QMessageBox::warning(this, "Save as", why);
                return;
            }
        }
        if (!start_run(&why)) {
            log("Run not started: " + why);
            QMessageBox::warning(this, "Run", why);
        }
    });
    run_action_->setObjectName("run-action");
    cancel_action_ = add(run, "&Cancel", QKeySequence(Qt::SHIFT | Qt::Key_F5), [this] { cancel_run(); });
    cancel_action_->setEnabled(false);
    // Offered only where this build has a device backend; the choice is kept between sessions.
    if (const std::string system = device_backend_system(); !system.empty()) {
        run->addSeparator();
        QAction* device = run->addAction(QString("Run on the &device backend (%1)").arg(system == "OpenMP" ? "OpenMP on CPU cores" : "CUDA GPU"));
        device->setObjectName("device-backend-action");
        device->setCheckable(true);
        device->setToolTip("The same steps on this build's device system; results are identical to the CPU backend's");
        device->setChecked(QSettings("Orrery", "workbench").value("device-backend", false).toBool());
        runner_->set_device_backend(device->isChecked());
        connect(device, &QAction::toggled, this, [this](bool on) {
            runner_->set_device_backend(on);
            QSettings("Orrery", "workbench").setValue("device-backend", on);
        });
    }

    QMenu* results = menuBar()->addMenu("Re&sults");
    add(results, "Export &report (HTML)…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H), [this] { results_->ask_export_html(); });
    add(results, "Export report (&PDF)…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), [this] { results_->ask_export_pdf(); });
    add(results, "Export &CSV…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), [this] { results_->ask_export_csv(); });
    add(results, "Export Chrome &trace…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), [this] { results_->ask_export_chrome_trace(); });
    QMenu* help = menuBar()->addMenu("&Help");
    add(help, "&Welcome page", QKeySequence(), [this] { show_welcome(); });
    add(help, "&User guide", QKeySequence::HelpContents, [this] { show_user_guide(this); });
    add(help, "&About Orrery", QKeySequence(), [this] { QMessageBox::about(this, "About Orrery", about_text()); });
}

QString MainWindow::project_path() const { return project_ ? QString::fromStdString(project_->path().string()) : QString(); }

std::filesystem::path MainWindow::base_dir() const {
    return project_ ? std::filesystem::absolute(project_->path()).parent_path() : std::filesystem::current_path();
}

void MainWindow::log(const QString& line) {
    log_->appendPlainText(line);
    statusBar()->showMessage(line.section('\n', 0, 0), 8000);
}

void MainWindow::clear_run_dock() {
    if (runner_->running()) return;
    runner_->forget_progress();
    run_table_->setRowCount(0);
    overall_->setValue(0);
    overall_->setFormat("overall %p%");
    run_status_->setText("No run yet");
}

QString MainWindow::ask_project_file_for_run() {
    if (ask_run_project_file) return ask_run_project_file();
    if (QMessageBox::question(this, "Run", "A run's results are kept in the project file, and this project has not been saved yet.\n\nSave it now and run?",
                              QMessageBox::Save | QMessageBox::Cancel, QMessageBox::Save) != QMessageBox::Save)
        return {};
    return QFileDialog::getSaveFileName(this, "Save the project to run it", QString::fromStdString(scenario_name_) + ".orrery", "Orrery projects (*.orrery)");
}

void MainWindow::new_project() {
    project_.reset();
    document_.set_base_dir(base_dir());  // the scenario's relative paths are read from the project's folder
    clear_run_dock();
    // Nothing of the previous project's runs stays on show.
    feed_->stop();
    inspector_->state().clear();
    load_scenario("scenario", starter_scenario());
    dirty_ = false;
    results_->set_store(QString());
    refresh_project_tree();
    update_title();
}

void MainWindow::load_scenario(const std::string& name, const nlohmann::json& document, const nlohmann::json& positions) {
    scenario_name_ = name;
    document_.set_base_dir(base_dir());
    document_.load(document, positions);
    dirty_ = false;
    update_title();
}

void MainWindow::document_changed(ScenarioDocument::Change how, QWidget* tab) {
    if (how != ScenarioDocument::Change::loaded) dirty_ = true;
    update_title();
    refresh_forms();
    if (how == ScenarioDocument::Change::history && tab && tabs_->currentWidget() != tab) tabs_->setCurrentWidget(tab);
}

void MainWindow::apply_edit(const QString& path, const QString& value_json, QWidget* tab) {
    if (locked_) return;
    if (!tab) tab = tab_of(sender());
    const QString label = tabs_->tabText(tabs_->indexOf(tab)).replace("&&", "&");
    const QString what = (value_json.isEmpty() ? "Reset " : "Set ") + path + (label.isEmpty() ? "" : " (" + label + ")");
    const nlohmann::json value = value_json.isEmpty() ? nlohmann::json() : nlohmann::json::parse(value_json.toStdString());
    std::string why;
    if (!document_.set(what, path.toStdString(), value_json.isEmpty() ? nullptr : &value, tab, &why)) log(path + ": " + QString::fromStdString(why));
}

QWidget* MainWindow::tab_of(QObject* o) const {
    for (QObject* at = o; at; at = at->parent())
        if (auto* w = qobject_cast<QWidget*>(at); w && tabs_->indexOf(w) >= 0) return w;
    return tabs_->currentWidget();
}

bool MainWindow::run_enabled() const { return run_action_->isEnabled(); }

void MainWindow::check_problems() {
    const ScenarioProblems p = check_document(document(), base_dir(), presets_);
    problems_->clear();
    auto add = [&](const std::string& line, bool error) {
        auto* item = new QListWidgetItem((error ? "Error: " : "Warning: ") + QString::fromStdString(line), problems_);
        item->setForeground(error ? QColor(176, 0, 0) : QColor(150, 100, 0));
        item->setToolTip(QString::fromStdString(line));
    };
    for (const std::string& e : p.errors) add(e, true);
    for (const std::string& w : p.warnings) add(w, false);
    if (p.errors.empty() && p.warnings.empty()) new QListWidgetItem("No problems: the engine accepts this scenario", problems_);
    problem_errors_ = int(p.errors.size());
    // Run waits for the errors to be fixed; a run's own red message goes once the scenario is valid again.
    if (!locked_) run_action_->setEnabled(problem_errors_ == 0);
    run_action_->setToolTip(problem_errors_ ? "Fix the errors in the Problems list first" : "Run the scenario's sweep");
    if (problem_errors_ == 0 && run_status_->text().contains("color:#b00")) run_status_->setText("Ready to run");
    if (auto* dock = findChild<QDockWidget*>("problems-dock"))
        dock->setWindowTitle(problem_errors_ ? QString("Problems (%1)").arg(counted(size_t(problem_errors_), "error", "errors")) : QString("Problems"));
}

void MainWindow::refresh_forms() {
    problems_timer_.start();
    {
        Diagnostics diags;
        const nlohmann::json resolved = resolve_presets(document(), presets_, "scenario", diags);
        const nlohmann::json buffer = resolved.is_null() ? nlohmann::json() : json_at(resolved, "network.buffer_per_switch");
        topology_->show_buffer(QString::fromStdString(buffer.is_string() ? buffer.get<std::string>() : format_size(NetworkSpec{}.buffer_per_switch)));
    }
    strategy_->load(document(), base_dir(), topology_->doc().host_count());
    jobs_->load(document(), base_dir(), topology_->doc().host_count());
    network_->load(document());
    sweep_->load(document(), base_dir());
}

void MainWindow::refresh_project_tree() {
    tree_->clear();
    auto* scenarios = new QTreeWidgetItem(tree_, {"Scenarios"});
    auto* runs = new QTreeWidgetItem(tree_, {"Runs"});
    if (project_) {
        try {
            for (const StoredScenario& s : project_->scenarios()) {
                auto* i = new QTreeWidgetItem(scenarios, {QString::fromStdString(s.name)});
                i->setData(0, Qt::UserRole + 1, QString::fromStdString(s.name));
            }
            for (const orrery::report::RunInfo& r : orrery::report::list_runs(project_->path().string())) {
                auto* i = new QTreeWidgetItem(runs, {QString("run %1 · %2 · %3").arg(r.run_id).arg(QString::fromStdString(r.scenario), QString::fromStdString(r.status))});
                i->setData(0, Qt::UserRole, qlonglong(r.run_id));
            }
        } catch (const InputError& e) {
            log(e.what());
        }
    } else {
        new QTreeWidgetItem(scenarios, {QString::fromStdString(scenario_name_) + " (unsaved)"});
    }
    tree_->expandAll();
}

void MainWindow::show_welcome() {
    WelcomePage page(QSettings("Orrery", "workbench").value("recent").toStringList(), this);
    if (page.exec() == QDialog::Accepted) act_on_welcome(page.choice());
}

void MainWindow::act_on_welcome(const WelcomeChoice& choice) {
    QString why;
    switch (choice.kind) {
        case WelcomeChoice::demo: {
            const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
            QDir().mkpath(dir);
            const QString file = dir + "/demo.orrery";
            if (!maybe_save()) return;
            if (!create_demo_project(presets_, file, &why) || !open_project(file, &why)) QMessageBox::warning(this, "Open the demo", why);
            else log("The demo project is " + file + ": Run ▸ Run (F5) simulates its sweep");
            return;
        }
        case WelcomeChoice::from_template: {
            const std::vector<ScenarioTemplate> templates = scenario_templates();
            if (choice.template_index < 0 || size_t(choice.template_index) >= templates.size() || !maybe_save()) return;
            const ScenarioTemplate& t = templates[size_t(choice.template_index)];
            new_project();
            load_scenario(t.name, t.document);
            dirty_ = true;
            update_title();
            refresh_project_tree();
            log("New scenario from the template \"" + t.title + "\": File ▸ Save as… gives it a project, then Run ▸ Run (F5)");
            return;
        }
        case WelcomeChoice::recent:
            if (maybe_save() && !open_project(choice.file, &why)) QMessageBox::warning(this, "Open project", why);
            return;
        case WelcomeChoice::open_other: {
            if (!maybe_save()) return;
            const QString f = QFileDialog::getOpenFileName(this, "Open project", QString(), "Orrery projects (*.orrery *.sqlite);;All files (*)");
            if (!f.isEmpty() && !open_project(f, &why)) QMessageBox::warning(this, "Open project", why);
            return;
        }
        case WelcomeChoice::empty:
            if (!maybe_save()) return;
            new_project();
            load_scenario("scenario", empty_scenario());
            log("An empty scenario: draw a fabric on the Topology tab (or Fabric ▸ Generate), then File ▸ Save as…");
            return;
        case WelcomeChoice::nothing:
            return;
    }
}

QString MainWindow::about_text() const {
    const std::string device = device_backend_system();
#ifdef ORRERY_HAVE_MPI
    const QString mpi = "sweeps over MPI ranks (OpenMPI: mpirun, srun; File ▸ Export cluster job…)";
#else
    const QString mpi = "no MPI (built without OpenMPI)";
#endif
    return QString("<h3>Orrery %1</h3><p>git %2</p><p>Design LLM-training cluster fabrics and simulate their training at packet level.</p>"
                   "<p>This build runs on: the CPU backend (%3 threads here); %4; %5.</p>")
        .arg(QString::fromStdString(version()), QString::fromStdString(git_revision()))
        .arg(std::thread::hardware_concurrency())
        .arg(device.empty() ? QString("no device backend")
                            : device == "OpenMP" ? QString("the device backend on Thrust's OpenMP system (CPU cores)")
                                                 : QString("the device backend on CUDA (compiled; never yet run on a GPU here)"),
             mpi);
}

void MainWindow::update_title() {
    const QString file = project_ ? QFileInfo(project_path()).fileName() : QString("untitled project");
    setWindowTitle(QString("%1%2 — %3 — Orrery").arg(file, dirty_ ? "*" : "", QString::fromStdString(scenario_name_)));
}

std::vector<int64_t> MainWindow::import_staged_run(const QString& staging, const QString& unfinished_status) {
    if (staging.isEmpty() || !QFileInfo::exists(staging)) return {};
    if (!project_) return {};
    try {
        const std::vector<int64_t> ids = project_->import_runs(staging.toStdString(), unfinished_status.toStdString());
        for (const QString& f : {staging, staging + "-wal", staging + "-shm"}) QFile::remove(f);
        return ids;
    } catch (const InputError& e) {
        // The staging store is kept: nothing of the run is lost, and the next open tries again.
        log(QString("The run could not be copied into the project (kept in %1): %2").arg(staging, e.what()));
        return {};
    }
}

void MainWindow::import_leftover_runs() {
    // Runs whose workbench went away before copying them in (killed, crashed): their staging stores are
    // beside the project. One still being written by a live process is left for later.
    const QDir dir = QFileInfo(project_path()).absoluteDir();
    for (const QString& name : dir.entryList({".orrery-run-*.sqlite"}, QDir::Files | QDir::Hidden)) {
        const QString staging = dir.filePath(name);
        if (runner_->running() && staging == runner_->staging_store()) continue;
        try {
            { ResultsStore marks(staging.toStdString()); }  // a run whose process is gone becomes interrupted
            if (StoreReader(staging.toStdString()).has_running_run()) continue;
        } catch (const InputError& e) {
            log(QString("%1 is left as it is: %2").arg(name, e.what()));
            continue;
        }
        const std::vector<int64_t> ids = import_staged_run(staging, "interrupted");
        if (!ids.empty()) log(QString("Copied %1 run(s) left in %2 into the project").arg(ids.size()).arg(name));
        QFile::remove(dir.filePath(name.chopped(7) + ".json"));
    }
}

bool MainWindow::open_project(const QString& file, QString* why) {
    if (!QFileInfo::exists(file)) {
        *why = file + ": no such file";
        return false;
    }
    try {
        auto project = std::make_unique<ProjectFile>(file.toStdString());
        std::vector<StoredScenario> scenarios = project->scenarios();
        project_ = std::move(project);
        document_.set_base_dir(base_dir());  // the scenario's relative paths are read from the project's folder
        clear_run_dock();  // the Run dock showed the previous project's run
        import_leftover_runs();
        if (scenarios.empty()) {
            load_scenario("scenario", starter_scenario());
            log(file + " holds results but no scenario yet: a starter scenario is shown");
        } else {
            StoredScenario s = scenarios.front();
            if (auto a = project_->autosaved(s.name)) {
                const bool restore = qEnvironmentVariableIsSet("ORRERY_NO_DIALOGS") ||
                                     QMessageBox::question(this, "Unsaved edits", QString("\"%1\" has edits from %2 UTC that were not saved. Restore them?")
                                                                                      .arg(QString::fromStdString(s.name), QString::fromStdString(a->saved_utc))) == QMessageBox::Yes;
                if (restore) {
                    load_scenario(a->name, a->document, a->positions);
                    dirty_ = true;
                    log("Restored the autosaved edits of " + QString::fromStdString(s.name));
                } else {
                    load_scenario(s.name, s.document, s.positions);
                }
            } else {
                load_scenario(s.name, s.document, s.positions);
            }
        }
        QSettings settings("Orrery", "workbench");
        if (auto layout = project_->setting("window-state")) restoreState(QByteArray::fromBase64(QByteArray::fromStdString(*layout)));
        results_->set_store(project_path());
        // The newest run's telemetry, read on the feed's thread, so the inspector is not empty on open.
        if (const std::vector<orrery::report::RunInfo> runs = orrery::report::list_runs(project_->path().string()); !runs.empty()) {
            inspector_->state().clear();
            feed_->watch(project_path(), runs.front().run_id);
            feed_->stop();
        }
        add_recent(QFileInfo(file).absoluteFilePath());
        refresh_project_tree();
        update_title();
        log("Opened " + file);
        return true;
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
}

bool MainWindow::save(QString* why) {
    if (!project_) {
        const QString f = QFileDialog::getSaveFileName(this, "Save project", "project.orrery", "Orrery projects (*.orrery)");
        if (f.isEmpty()) {
            *why = "";
            return false;
        }
        return save_project_as(f, why);
    }
    try {
        project_->save_scenario(current_scenario());
        project_->set_setting("window-state", saveState().toBase64().toStdString());
        dirty_ = false;
        update_title();
        refresh_project_tree();
        log("Saved " + project_path());
        return true;
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
}

bool MainWindow::save_project_as(const QString& file, QString* why) {
    if (QFileInfo(file).absoluteFilePath() == QFileInfo(project_path()).absoluteFilePath() && project_) return save(why);
    if (QFileInfo::exists(file)) {
        // Never overwrite: an existing project or store gains this scenario; anything else is refused by ProjectFile.
        log(file + " exists: the scenario is added to it");
    }
    try {
        auto fresh = std::make_unique<ProjectFile>(file.toStdString());
        if (project_)
            for (const StoredScenario& s : project_->scenarios())
                if (s.name != scenario_name_) fresh->save_scenario(s);
        project_ = std::move(fresh);
        document_.set_base_dir(base_dir());  // the scenario's relative paths are read from the project's folder
        add_recent(QFileInfo(file).absoluteFilePath());
        results_->set_store(project_path());
        return save(why);
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
}

bool MainWindow::maybe_save() {
    if (!dirty_ || (qEnvironmentVariableIsSet("ORRERY_NO_DIALOGS") && !ask_save_changes)) return true;
    const auto answer = ask_save_changes ? ask_save_changes()
                                         : QMessageBox::question(this, "Unsaved changes", "Save the changes to " + QString::fromStdString(scenario_name_) + "?",
                                                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) {
        QString why;
        return save(&why);
    }
    // Discard: the autosaved copy of these edits goes too, or the next open would offer them back.
    if (project_) {
        try {
            project_->clear_autosave(scenario_name_);
        } catch (const InputError& e) {
            log(e.what());
        }
    }
    dirty_ = false;
    return true;
}

StoredScenario MainWindow::current_scenario() const {
    return StoredScenario{scenario_name_, document(), document_.layout(), ""};
}

void MainWindow::autosave() {
    if (!dirty_ || !project_) return;
    try {
        project_->autosave(current_scenario());
        statusBar()->showMessage("Autosaved unsaved edits into the project (File ▸ Save keeps them)", 4000);
    } catch (const InputError& e) {
        log(e.what());
    }
}

void MainWindow::add_recent(const QString& file) {
    QSettings settings("Orrery", "workbench");
    QStringList recent = settings.value("recent").toStringList();
    recent.removeAll(file);
    recent.prepend(file);
    while (recent.size() > 10) recent.removeLast();
    settings.setValue("recent", recent);
}

void MainWindow::set_locked(bool locked) {
    locked_ = locked;
    topology_->set_locked(locked);
    strategy_->setEnabled(!locked);
    jobs_->setEnabled(!locked);
    network_->setEnabled(!locked);
    sweep_->setEnabled(!locked);
    run_action_->setEnabled(!locked && problem_errors_ == 0);
    cancel_action_->setEnabled(locked);
}

std::set<int> MainWindow::picked_switch_nodes() const {
    // Node ids as the engine numbers them: hosts, then NVSwitches (one per multi-GPU server), then switches.
    const TopoDoc& doc = topology_->doc();
    int first_switch = int(doc.host_count());
    for (const TopoBox& b : doc.boxes) first_switch += b.kind == BoxKind::server && b.gpus > 1;
    const std::set<uint64_t> selected = topology_->scene()->selected_boxes();
    std::set<int> nodes;
    int index = 0;
    for (const TopoBox& b : doc.boxes) {
        if (b.kind != BoxKind::network_switch) continue;
        if (selected.count(b.id)) nodes.insert(first_switch + index);
        ++index;
    }
    return nodes;
}

bool MainWindow::start_run(QString* why) {
    if (runner_->running()) {
        *why = "a run is already going on";
        return false;
    }
    if (!project_) {
        *why = "save the project first: runs are stored in the project file (File ▸ Save)";
        return false;
    }
    // A field still being typed into is taken now; one that cannot be (shown in pink) stops the run: the
    // run would otherwise use the value the field had before.
    const QStringList pending = network_->take_pending_fields();
    if (!pending.isEmpty()) {
        *why = "fix the fields shown in pink first:\n" + pending.join("\n");
        return false;
    }
    const std::vector<std::string> errors = validate_document(document(), base_dir(), presets_);
    check_problems();
    if (!errors.empty()) {
        QStringList lines;
        for (const std::string& e : errors) lines << QString::fromStdString(e);
        *why = "the scenario has errors:\n" + lines.join("\n");
        return false;
    }
    // One core stays with the workbench, so its live views keep their frame rate while the engine runs.
    const int threads = int(std::max(1u, std::thread::hardware_concurrency() - 1));
    // The run carries the scenario's name in the project (the document's own "name" may be a template's).
    nlohmann::json document = this->document();
    document["name"] = scenario_name_;
    if (!runner_->start(document, project_path(), threads, why)) return false;
    set_locked(true);
    run_status_->setText("Running…");
    overall_->setValue(0);
    run_table_->setRowCount(0);
    log(QString("Run started: %1 on %2").arg(QString::fromStdString(scenario_name_))
            .arg(runner_->device_backend() ? QString("the device backend (%1)").arg(QString::fromStdString(device_backend_system()))
                                           : QString("%1 threads").arg(threads)));
    return true;
}

void MainWindow::cancel_run() {
    if (!runner_->running()) return;
    run_status_->setText("Cancelling…");
    runner_->cancel();
}

void MainWindow::refresh_run_table() {
    const auto& progress = runner_->progress();
    run_table_->setRowCount(int(progress.size()));
    int row = 0;
    for (const auto& [id, p] : progress) {
        auto* bar = qobject_cast<QProgressBar*>(run_table_->cellWidget(row, 2));
        if (!bar) {
            bar = new QProgressBar(run_table_);
            bar->setRange(0, 1000);
            run_table_->setCellWidget(row, 2, bar);
        }
        bar->setValue(int(p.fraction * 1000));
        bar->setFormat(QString("%1%").arg(p.fraction * 100, 0, 'f', 1));
        run_table_->setItem(row, 0, new QTableWidgetItem(id));
        run_table_->setItem(row, 1, new QTableWidgetItem(p.status));
        run_table_->setItem(row, 3, new QTableWidgetItem(QString::number(p.wall_s, 'f', 1) + " s"));
        run_table_->setItem(row, 4, new QTableWidgetItem(p.status == "running" ? eta_text(p.eta_s) : "–"));
        ++row;
    }
    overall_->setValue(int(runner_->overall_fraction() * 1000));
    overall_->setFormat(QString("overall %1%, ETA %2").arg(runner_->overall_fraction() * 100, 0, 'f', 1).arg(eta_text(runner_->overall_eta_s())));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* e) {
    if (e->type() != QEvent::KeyPress) return false;
    auto* key = static_cast<QKeyEvent*>(e);
    const int k = key->key();
    if ((k != Qt::Key_W && k != Qt::Key_S && k != Qt::Key_A && k != Qt::Key_D) || key->modifiers() != Qt::NoModifier) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != this || widget == inspector_ || inspector_->isAncestorOf(widget)) return false;
    // Where letters are typed (fields, spin boxes, editable lists, tables), they stay letters.
    for (QWidget* w = widget; w; w = w->parentWidget())
        if (qobject_cast<QLineEdit*>(w) || qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QTextEdit*>(w) || qobject_cast<QPlainTextEdit*>(w) ||
            qobject_cast<QAbstractItemView*>(w) || (qobject_cast<QComboBox*>(w) && qobject_cast<QComboBox*>(w)->isEditable()))
            return false;
    return inspector_->key(k);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (!maybe_save()) {
        e->ignore();
        return;
    }
    if (runner_->running()) runner_->cancel();
    QSettings settings("Orrery", "workbench");
    settings.setValue("geometry", saveGeometry());
    settings.setValue("window-state", saveState());
    e->accept();
}

bool MainWindow::create_demo_project(const PresetLibrary& presets, const QString& file, QString* why) {
    try {
        if (QFileInfo::exists(file) && !ProjectFile(file.toStdString()).scenarios().empty()) return true;  // the user's, kept as it is
        for (const std::filesystem::path& root : presets.roots()) {
            const std::filesystem::path scenario = root / "scenarios" / "workbench-demo.json";
            if (!std::filesystem::exists(scenario)) continue;
            Diagnostics diags;
            const nlohmann::json doc = parse_json_text(read_text_file(scenario), scenario.string(), diags);
            if (doc.is_null()) throw InputError(diags);
            QDir().mkpath(QFileInfo(file).absolutePath());
            ProjectFile project(file.toStdString());  // a store the CLI filled keeps its runs and gains the scenario
            project.save_scenario({"demo", doc, nlohmann::json::object(), ""});
            return true;
        }
    } catch (const InputError& e) {
        *why = e.what();
        return false;
    }
    *why = "the bundled demo scenario (presets/scenarios/workbench-demo.json) is not installed";
    return false;
}

}  // namespace orrery::views
