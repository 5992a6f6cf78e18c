#pragma once
// The sweep editor: the parameters to vary (dotted path, JSON list of values), product or zip, replications;
// shows how many experiments that makes and lists them with their values, as the engine expands them.
#include "scenario/presets.h"
#include "views/editors/scenario_form.h"

class QComboBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace orrery::views {

class SweepEditor : public ScenarioForm {
    Q_OBJECT
public:
    SweepEditor(const PresetLibrary& presets, QWidget* parent = nullptr);
    void load(const nlohmann::json& doc, const std::filesystem::path& base_dir);
    int experiment_count() const { return count_; }
    QTableWidget* parameters() const { return params_; }
    QTableWidget* experiments() const { return list_; }
    QLabel* count_label() const { return count_label_; }
    // The sweep section from the table, or null with `why` naming the row.
    nlohmann::json sweep_from_table(QString* why) const;

private:
    void commit();
    const PresetLibrary& presets_;
    QTableWidget* params_;
    QComboBox* mode_;
    QSpinBox* replications_;
    QTableWidget* list_;
    QLabel* count_label_;
    int count_ = 0;
};

}  // namespace orrery::views
