#pragma once
// The network and congestion-control editor: the algorithm and every parameter of it with its unit and the
// engine's default, ECN, PFC and switch buffer, load balancing (ECMP, spraying, adaptive, flowlets) and steady-state skipping.
// Values shown are the scenario's with presets resolved; an empty field means the default (its placeholder).
#include <QWidget>

#include <utility>
#include <vector>

#include "scenario/presets.h"
#include "views/editors/scenario_form.h"

class QComboBox;
class QFormLayout;
class QLineEdit;
class QCheckBox;
class QLabel;
class QTableWidget;

namespace orrery::views {

// One editable parameter: its dotted path, label, unit kind and the engine's default as text.
struct ParameterField {
    std::string path;        // "cc.dcqcn.rate_ai"
    QString label;
    enum Kind { rate, time, time_or_off, size, number, integer, boolean } kind;
    QString default_text;    // "20Mbps", "0.95", "true"
    QString algorithm;       // "dcqcn" …; empty: shown for every algorithm
};
const std::vector<ParameterField>& parameter_fields();
// Parses `text` as the field's kind; returns the JSON value or null with `why`.
nlohmann::json parse_field(const ParameterField& f, const QString& text, QString* why);

class NetworkEditor : public ScenarioForm {
    Q_OBJECT
public:
    NetworkEditor(const PresetLibrary& presets, QWidget* parent = nullptr);
    void load(const nlohmann::json& doc);
    QLineEdit* field(const std::string& path) const;
    QComboBox* choice(const std::string& path) const { return choices_.count(path) ? choices_.at(path) : nullptr; }
    QTableWidget* ecn_table() const { return ecn_; }
    QComboBox* algorithm() const { return algorithm_; }
    QComboBox* load_balancing() const { return load_balancing_; }
    QComboBox* delivery() const { return delivery_; }
    QComboBox* ack_queue() const { return ack_queue_; }
    QComboBox* weights() const { return weights_; }
    QComboBox* cc_preset() const { return cc_preset_; }
    // Takes fields typed into but not yet taken (Run pressed with the cursor still in one); returns those that
    // cannot be, as "path = "text": why". Run refuses to start while any is left.
    QStringList take_pending_fields();

signals:
    void message(QString text);

private:
    void show_algorithm(const QString& algorithm);
    // Puts a field's text into the document (empty: the key removed); false with `why`, the field pink, when
    // the text is not a value of the field's kind.
    bool take_field(const ParameterField& f, QLineEdit* edit, QString* why);
    void commit_ecn();
    const PresetLibrary& presets_;
    QComboBox* cc_preset_;
    QComboBox* algorithm_;
    QComboBox* load_balancing_;
    QComboBox* delivery_;
    QComboBox* ack_queue_;
    QComboBox* weights_;
    std::vector<std::pair<QComboBox*, const char*>> key_choices_;  // the choices key_choice made, by scenario key
    std::map<std::string, QLineEdit*> fields_;
    std::map<std::string, QString> taken_text_;  // per field: the text the document holds (as loaded or last taken)
    std::map<std::string, QCheckBox*> checks_;
    std::map<std::string, QComboBox*> choices_;  // booleans whose default depends on the algorithm
    std::map<std::string, QWidget*> rows_;  // per field and choice: to hide other algorithms' parameters, to grey what the mode ignores
    QLabel* mode_note_ = nullptr;          // what the job's network mode does not honour (scenario/applicability.h)
    void show_applicability(const nlohmann::json& resolved);
public:
    // The note on a field's label (its tooltip), empty where the scenario's mode honours it; for tests.
    QString applicability_of_field(const std::string& path) const;
    QString mode_note() const;
    QFormLayout* cc_form_;
    QTableWidget* ecn_;
};

}  // namespace orrery::views
