#pragma once
// The model and parallel-strategy editor: model preset and fields, TP / PP / DP / EP, SP, ZeRO, micro-batches,
// GPU type; the network mode (packet, flow, or the α-β contention-free bound), the task graph (every rank or one
// lockstep lane per stage), NCCL channels and PXN; below, the memory each pipeline stage needs against the GPU's HBM (engine/workload/memory) and
// whether the world size matches the fabric, recomputed on every change.
#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

#include "views/editors/scenario_checks.h"
#include "views/editors/scenario_form.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace orrery::views {

class StrategyEditor : public ScenarioForm {
    Q_OBJECT
public:
    StrategyEditor(const PresetLibrary& presets, QWidget* parent = nullptr);
    // Fills the widgets from `doc` and runs the checks against a fabric of `hosts` hosts.
    void load(const nlohmann::json& doc, const std::filesystem::path& base_dir, size_t hosts);
    // The job the form edits: "workload" (one job), or "workload.jobs[i]" (a job of a mix, whose network mode is
    // still the experiment's workload.network_mode, and whose GPUs are its placement's, not the fabric's).
    void set_root(const QString& root) { root_ = root; }
    const QString& root() const { return root_; }
    const MemoryCheck& check() const { return check_; }
    QTableWidget* memory_table() const { return table_; }
    QLabel* status_label() const { return status_; }

private:
    void show_check();
    // A combo box in `form` whose choice (an item's value) is written to the scenario's `key` when the user picks it.
    QComboBox* add_choice(QFormLayout* form, const QString& label, const QString& key, const std::vector<std::pair<QString, QString>>& items,
                          const QString& tooltip);
    QString key(const std::string& under) const { return root_ + "." + QString::fromStdString(under); }
    const PresetLibrary& presets_;
    QString root_ = "workload";
    MemoryCheck check_;
    QComboBox* model_preset_;
    QComboBox* gpu_;
    std::map<std::string, QSpinBox*> model_fields_;
    std::map<std::string, QSpinBox*> parallel_fields_;
    QCheckBox* sp_;
    QCheckBox* recompute_;
    QComboBox* zero_;
    QComboBox* network_mode_;
    QComboBox* granularity_;
    QSpinBox* channels_;
    QCheckBox* pxn_;
    QTableWidget* table_;
    QLabel* status_;
};

}  // namespace orrery::views
