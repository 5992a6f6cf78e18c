#include "views/editors/sweep_editor.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "scenario/load.h"

namespace orrery::views {

SweepEditor::SweepEditor(const PresetLibrary& presets, QWidget* parent) : ScenarioForm(parent), presets_(presets) {
    params_ = new QTableWidget(0, 2, this);
    params_->setHorizontalHeaderLabels({"Parameter path (e.g. cc.preset, cc.dcqcn.rate_ai, workload.parallel.tp)", "Values (JSON list, units in strings)"});
    params_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // Queued: committing reloads the table, which must not delete the item whose change is being signalled.
    connect(params_, &QTableWidget::cellChanged, this, [this] {
        if (!loading_) QMetaObject::invokeMethod(this, [this] { commit(); }, Qt::QueuedConnection);
    });
    auto* add = new QPushButton("Add parameter", this);
    auto* remove = new QPushButton("Remove parameter", this);
    connect(add, &QPushButton::clicked, this, [this] {
        loading_ = true;
        const int row = params_->rowCount();
        params_->insertRow(row);
        params_->setItem(row, 0, new QTableWidgetItem("cc.algorithm"));
        params_->setItem(row, 1, new QTableWidgetItem("[\"dcqcn\", \"hpcc\"]"));
        loading_ = false;
        commit();
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (params_->currentRow() < 0) return;
        params_->removeRow(params_->currentRow());
        commit();
    });
    mode_ = new QComboBox(this);
    mode_->addItems({"product", "zip"});
    mode_->setToolTip("product: every combination; zip: the i-th values together");
    connect(mode_, &QComboBox::activated, this, [this] { commit(); });
    replications_ = new QSpinBox(this);
    replications_->setRange(1, 10000);
    replications_->setToolTip("Seeds per combination");
    connect(replications_, &QSpinBox::editingFinished, this, [this] {
        if (!loading_) commit();
    });
    count_label_ = new QLabel(this);
    count_label_->setWordWrap(true);
    list_ = new QTableWidget(0, 3, this);
    list_->setHorizontalHeaderLabels({"Experiment", "Seed", "Parameters"});
    list_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    list_->verticalHeader()->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch();
    auto* form = new QFormLayout;
    form->addRow("Combine", mode_);
    form->addRow("Replications", replications_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(params_, 1);
    layout->addLayout(buttons);
    layout->addLayout(form);
    layout->addWidget(count_label_);
    layout->addWidget(list_, 2);
}

nlohmann::json SweepEditor::sweep_from_table(QString* why) const {
    nlohmann::json parameters = nlohmann::json::array();
    for (int r = 0; r < params_->rowCount(); ++r) {
        const QString path = params_->item(r, 0) ? params_->item(r, 0)->text().trimmed() : QString();
        const QString values = params_->item(r, 1) ? params_->item(r, 1)->text() : QString();
        nlohmann::json v = nlohmann::json::parse(values.toStdString(), nullptr, false);
        if (path.isEmpty()) {
            *why = QString("sweep row %1: the parameter path is empty").arg(r + 1);
            return nullptr;
        }
        if (v.is_discarded() || !v.is_array() || v.empty()) {
            *why = QString("sweep row %1 (%2): values must be a non-empty JSON list, e.g. [\"dcqcn\", \"hpcc\"] or [\"10Mbps\", \"40Mbps\"]").arg(r + 1).arg(path);
            return nullptr;
        }
        parameters.push_back({{"path", path.toStdString()}, {"values", v}});
    }
    if (parameters.empty() && replications_->value() == 1) return nlohmann::json::object();
    nlohmann::json s = {{"parameters", parameters}, {"mode", mode_->currentText().toStdString()}};
    if (replications_->value() > 1) s["replications"] = replications_->value();
    return s;
}

void SweepEditor::commit() {
    QString why;
    const nlohmann::json s = sweep_from_table(&why);
    if (s.is_null()) {
        count_label_->setText("<span style='color:#b00'>" + why.toHtmlEscaped() + "</span>");
        return;
    }
    if (s.empty()) emit_remove("sweep");
    else emit_edit("sweep", s);
}

void SweepEditor::load(const nlohmann::json& doc, const std::filesystem::path& base_dir) {
    loading_ = true;
    const nlohmann::json sweep = doc.contains("sweep") ? doc["sweep"] : nlohmann::json::object();
    params_->setRowCount(0);
    if (sweep.contains("parameters") && sweep["parameters"].is_array())
        for (const nlohmann::json& p : sweep["parameters"]) {
            const int row = params_->rowCount();
            params_->insertRow(row);
            params_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(p.value("path", std::string()))));
            params_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(p.contains("values") ? p["values"].dump() : "[]")));
        }
    mode_->setCurrentText(QString::fromStdString(sweep.value("mode", std::string("product"))));
    replications_->setValue(sweep.value("replications", 1));
    list_->setRowCount(0);
    count_ = 0;
    try {
        const LoadedScenario loaded = load_scenario_document(doc, "scenario", base_dir, presets_, LoadOptions{false});
        count_ = int(loaded.experiments.size());
        list_->setRowCount(count_);
        for (int i = 0; i < count_; ++i) {
            const Experiment& x = loaded.experiments[size_t(i)];
            QStringList values;
            for (const nlohmann::json& p : x.parameters)
                values << QString::fromStdString(p.value("path", std::string()) + " = " + p["value"].dump());
            list_->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(x.id)));
            list_->setItem(i, 1, new QTableWidgetItem(QString::number(x.seed)));
            list_->setItem(i, 2, new QTableWidgetItem(values.join(", ")));
        }
        count_label_->setText(QString("<b>%1 experiment%2</b>").arg(count_).arg(count_ == 1 ? "" : "s"));
    } catch (const InputError& e) {
        QString first = e.diagnostics().items().empty() ? e.what()
                                                        : QString::fromStdString(e.diagnostics().items().front().where + ": " + e.diagnostics().items().front().message);
        count_label_->setText("<span style='color:#b00'>" + first.toHtmlEscaped() + "</span>");
    }
    loading_ = false;
}

}  // namespace orrery::views
