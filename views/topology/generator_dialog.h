#pragma once
// Fabric ▸ Generate…: the generator to use and only that generator's parameters (rows of the others are
// hidden as the choice changes), with the link rate and delay every generator takes.
#include <QDialog>
#include <QString>

#include <nlohmann/json.hpp>

class QComboBox;
class QFormLayout;
class QLineEdit;
class QSpinBox;

namespace orrery::views {

class GeneratorDialog : public QDialog {
    Q_OBJECT
public:
    explicit GeneratorDialog(QWidget* parent = nullptr);
    QComboBox* kind() const { return kind_; }
    // The topology's generator form, as the scenario takes it.
    nlohmann::json generator() const;
    // Whether the row of `field` ("gpus", "gpus_per_server", "tiers", "k", "leaves", "spines", "hosts") is shown.
    bool shows(const QString& field) const;

private:
    void show_rows();
    QFormLayout* form_;
    QComboBox* kind_;
    QSpinBox *gpus_, *per_server_, *tiers_, *k_, *leaves_, *spines_, *hosts_;
    QLineEdit *rate_, *delay_;
};

}  // namespace orrery::views
