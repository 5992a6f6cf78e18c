#pragma once
// Several jobs on one fabric (workload.kind "jobs"): the list of jobs (add, duplicate, remove), the chosen job's
// name, placement (policy, seed, listed hosts) and start, and its model and strategy in a StrategyEditor bound to
// workload.jobs[i]. With one job (kind "llm") it offers to make that job the first of several. Every change is
// an edit of the scenario (ScenarioForm), undoable like any other. The canvas colours each job's GPUs and places a
// job on the servers selected there (TopologyEditor); engine/workload/README.md says how jobs are placed and run.
#include <QString>

#include <filesystem>

#include "views/editors/scenario_form.h"
#include "views/editors/strategy_editor.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace orrery::views {

class JobsEditor : public ScenarioForm {
    Q_OBJECT
public:
    JobsEditor(const PresetLibrary& presets, QWidget* parent = nullptr);
    void load(const nlohmann::json& doc, const std::filesystem::path& base_dir, size_t hosts);
    int current() const { return current_; }
    void select(int job);
    StrategyEditor* strategy() const { return strategy_; }
    QListWidget* list() const { return list_; }

    // The edits the buttons make, as plain functions of the document (tests call them too).
    void add_job();
    void duplicate_job();
    void remove_job();
    void make_mix();

private:
    void show_job();
    void set_jobs(const QString& what, nlohmann::json jobs, int select_after);
    QString job_key(const std::string& under) const;
    nlohmann::json doc_;
    std::filesystem::path base_dir_;
    size_t hosts_ = 0;
    int current_ = 0;
    QStackedWidget* pages_;
    QListWidget* list_;
    QPushButton *add_, *duplicate_, *remove_;
    QLineEdit* name_;
    QComboBox* policy_;
    QSpinBox* seed_;
    QLineEdit* hosts_list_;
    QLineEdit* start_;
    QComboBox* isolation_;
    QLabel* note_;
    StrategyEditor* strategy_;
};

}  // namespace orrery::views
