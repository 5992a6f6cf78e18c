#include "views/topology/generator_dialog.h"
#include "views/topology/topology_doc.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

namespace orrery::views {

GeneratorDialog::GeneratorDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle("Generate fabric");
    form_ = new QFormLayout(this);
    kind_ = new QComboBox(this);
    kind_->addItems({"rail-optimized", "fat-tree", "leaf-spine", "single-switch"});
    auto spin = [&](int lo, int hi, int v, const char* name) {
        auto* s = new QSpinBox(this);
        s->setRange(lo, hi);
        s->setValue(v);
        s->setObjectName(name);
        return s;
    };
    gpus_ = spin(8, 131072, 32, "gpus");
    per_server_ = spin(1, 72, 8, "gpus_per_server");
    tiers_ = spin(2, 3, 2, "tiers");
    k_ = spin(2, 128, 4, "k");
    leaves_ = spin(1, 512, 4, "leaves");
    spines_ = spin(1, 512, 2, "spines");
    hosts_ = spin(1, 512, 8, "hosts");
    rate_ = new QLineEdit(kNewLinkRate, this);
    delay_ = new QLineEdit(kNewLinkDelay, this);
    form_->addRow("Generator", kind_);
    form_->addRow("GPUs", gpus_);
    form_->addRow("GPUs per server", per_server_);
    form_->addRow("Tiers", tiers_);
    form_->addRow("k (even)", k_);
    form_->addRow("Leaves", leaves_);
    form_->addRow("Spines", spines_);
    form_->addRow("Hosts per leaf", hosts_);
    form_->addRow("Link rate", rate_);
    form_->addRow("Link delay", delay_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form_->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(kind_, &QComboBox::currentTextChanged, this, &GeneratorDialog::show_rows);
    show_rows();
}

void GeneratorDialog::show_rows() {
    const QString which = kind_->currentText();
    const bool rail = which == "rail-optimized", fat = which == "fat-tree", leaf_spine = which == "leaf-spine", single = which == "single-switch";
    form_->setRowVisible(gpus_, rail);
    form_->setRowVisible(per_server_, rail);
    form_->setRowVisible(tiers_, rail);
    form_->setRowVisible(k_, fat);
    form_->setRowVisible(leaves_, leaf_spine);
    form_->setRowVisible(spines_, leaf_spine);
    form_->setRowVisible(hosts_, leaf_spine || single);
    if (auto* label = qobject_cast<QLabel*>(form_->labelForField(hosts_))) label->setText(single ? "Hosts" : "Hosts per leaf");
    adjustSize();
}

bool GeneratorDialog::shows(const QString& field) const {
    auto* w = findChild<QSpinBox*>(field);
    if (!w) return false;
    int row = -1;
    QFormLayout::ItemRole role;
    form_->getWidgetPosition(w, &row, &role);
    return row >= 0 && form_->isRowVisible(row);
}

nlohmann::json GeneratorDialog::generator() const {
    nlohmann::json g = {{"generator", kind_->currentText().toStdString()},
                        {"link_defaults", {{"all", {{"rate", rate_->text().toStdString()}, {"delay", delay_->text().toStdString()}}}}}};
    const QString which = kind_->currentText();
    if (which == "rail-optimized") {
        g["gpus"] = gpus_->value();
        g["gpus_per_server"] = per_server_->value();
        g["tiers"] = tiers_->value();
    } else if (which == "fat-tree") {
        g["k"] = k_->value();
    } else if (which == "leaf-spine") {
        g["leaves"] = leaves_->value();
        g["spines"] = spines_->value();
        g["hosts_per_leaf"] = hosts_->value();
    } else {
        g["hosts"] = hosts_->value();
    }
    return g;
}

}  // namespace orrery::views
