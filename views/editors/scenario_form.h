#pragma once
// What the form editors (strategy, network and CC, sweep) share: they show a scenario document and report
// each change as (dotted JSON path, new value); the main window applies it, so every edit lands in one
// document and the forms never hold a second copy of the truth.
#include <QString>
#include <QWidget>
#include <nlohmann/json.hpp>

namespace orrery::views {

class ScenarioForm : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

signals:
    // `value_json` is the JSON text of the new value; an empty string removes the key (back to its default).
    void edited(QString path, QString value_json);

protected:
    void emit_edit(const QString& path, const nlohmann::json& value) { emit edited(path, QString::fromStdString(value.dump())); }
    void emit_remove(const QString& path) { emit edited(path, QString()); }
    bool loading_ = false;  // set while widgets are filled from the document: their signals are not edits
};

// The value at a dotted path ("cc.dcqcn.rate_ai"), or null.
nlohmann::json json_at(const nlohmann::json& doc, const std::string& path);
// Removes the key at a dotted path; nothing happens when it is not there.
void erase_at(nlohmann::json& doc, const std::string& path);

}  // namespace orrery::views
