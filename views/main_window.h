#pragma once
// The workbench's main window: a project (one SQLite file: scenarios, runs, results), the editors of its
// scenario in tabs (topology, strategy, network and CC, sweep, results), docks (project, inspector, run,
// log) whose layout is saved, and every action in a menu with its shortcut. Runs go to a child orrery-cli.
#include <functional>
#include <memory>
#include <set>

#include <QMainWindow>
#include <QMessageBox>
#include <QTimer>
#include <QUndoStack>

#include "scenario/presets.h"
#include "views/project_file.h"
#include "views/scenario_document.h"
#include "views/welcome.h"

class QAction;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QTabWidget;
class QTableWidget;
class QTreeWidget;

namespace orrery::views {

class InspectorView;
class NetworkEditor;
class ResultsView;
class RunController;
class JobsEditor;
class StrategyEditor;
class SweepEditor;
class TelemetryFeed;
class TopologyEditor;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(PresetLibrary presets, QString cli_path, QWidget* parent = nullptr);
    ~MainWindow() override;

    bool open_project(const QString& file, QString* why);
    bool save_project_as(const QString& file, QString* why);
    bool save(QString* why);
    void new_project();
    // Loads a scenario document into the editors (as "name"); `positions` place the topology's boxes.
    void load_scenario(const std::string& name, const nlohmann::json& document, const nlohmann::json& positions = nlohmann::json::object());
    bool start_run(QString* why);
    void autosave();  // unsaved edits into the project's autosave table (the timer calls it every minute)
    void show_welcome();                              // the welcome page (welcome.h), then what was chosen
    void act_on_welcome(const WelcomeChoice& choice);
    QString about_text() const;                       // Help ▸ About: version, revision, the backends of this build
    // Run ▸ Run on a project not saved yet asks for a file (empty: the user declined); replaceable, so tests
    // answer without dialogs.
    std::function<QString()> ask_run_project_file;
    // Asked before unsaved changes would be lost (Save, Discard or Cancel); replaceable (tests answer without a dialog).
    std::function<QMessageBox::StandardButton()> ask_save_changes;
    void cancel_run();

    const nlohmann::json& document() const { return document_.scenario(); }
    bool dirty() const { return dirty_; }
    QString project_path() const;
    TopologyEditor* topology() const { return topology_; }
    StrategyEditor* strategy() const { return strategy_; }
    JobsEditor* jobs() const { return jobs_; }
    NetworkEditor* network() const { return network_; }
    SweepEditor* sweep() const { return sweep_; }
    ResultsView* results() const { return results_; }
    InspectorView* inspector() const { return inspector_; }
    QListWidget* problems() const { return problems_; }
    bool run_enabled() const;
    void check_problems_now() { check_problems(); }  // what the pause after an edit does (tests)
    RunController* runner() const { return runner_; }
    QTabWidget* tabs() const { return tabs_; }
    QPlainTextEdit* log_view() const { return log_; }
    QTableWidget* run_table() const { return run_table_; }

    // Makes `file` the bundled demo project (presets/scenarios/workbench-demo.json) unless it already holds a
    // scenario: a missing file is created, a results store the CLI filled gains the scenario.
    static bool create_demo_project(const PresetLibrary& presets, const QString& file, QString* why);

    // Every editor's change goes through here: (dotted path, JSON value) into the one scenario document.
    // A form's edit of the document (value_json empty: remove the key), one step of the undo history,
    // remembered with the tab it was made on (`tab`; null: the sending form's tab).
    void apply_edit(const QString& path, const QString& value_json, QWidget* tab = nullptr);
    QUndoStack* undo_stack() { return document_.history(); }
    QTabWidget* tabs() { return tabs_; }

signals:
    void runFinished(bool ok, QString message);

protected:
    void closeEvent(QCloseEvent* e) override;
    // W/S (zoom) and A/D (pan) reach the Inspector from anywhere in the window but a place that takes text.
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void build_menus();
    void build_docks();
    // The document after an edit, undo, redo or load: forms, problems, the title; undo and redo show their tab.
    void document_changed(ScenarioDocument::Change how, QWidget* tab);
    void refresh_forms();
    QWidget* tab_of(QObject* o) const;  // the tab page holding `o` (else the current one)
    void check_problems();              // fills the Problems list; Run is off while it holds an error
    void refresh_project_tree();
    void refresh_run_table();
    void clear_run_dock();
    QString ask_project_file_for_run();
    void set_locked(bool locked);
    void log(const QString& line);
    // Copies the runs of a child's staging store into the project and removes it; the new run ids.
    std::vector<int64_t> import_staged_run(const QString& staging, const QString& unfinished_status);
    void import_leftover_runs();
    void add_recent(const QString& file);
    void update_title();
    bool maybe_save();
    StoredScenario current_scenario() const;  // the document and the boxes' positions, as the project stores them
    std::filesystem::path base_dir() const;
    std::set<int> picked_switch_nodes() const;

    PresetLibrary presets_;
    QString cli_;
    std::unique_ptr<ProjectFile> project_;
    std::string scenario_name_ = "scenario";
    ScenarioDocument document_;  // the scenario every tab edits, with its one history
    bool dirty_ = false;
    bool locked_ = false;

    QTabWidget* tabs_;
    TopologyEditor* topology_;
    StrategyEditor* strategy_;
    JobsEditor* jobs_;
    NetworkEditor* network_;
    SweepEditor* sweep_;
    ResultsView* results_;
    InspectorView* inspector_;
    QTreeWidget* tree_;
    QPlainTextEdit* log_;
    QTableWidget* run_table_;
    QProgressBar* overall_;
    QLabel* run_status_;
    QAction* run_action_;
    QAction* cancel_action_;
    QMenu* recent_menu_;
    RunController* runner_;
    TelemetryFeed* feed_;
    QTimer autosave_timer_;
    QListWidget* problems_ = nullptr;  // the engine's validation of the document, as it is edited
    QTimer problems_timer_;            // a pause in editing, then the check
    int problem_errors_ = 0;
};

}  // namespace orrery::views
