#pragma once
// The welcome page (first start, and Help ▸ Welcome page): open the demo, start from a template, open a recent
// or another project. The templates are plain scenario documents, tested to load and to fit their fabric.
#include <QDialog>
#include <QString>
#include <QStringList>
#include <vector>

#include <nlohmann/json.hpp>

namespace orrery::views {

struct ScenarioTemplate {
    QString title;        // what the user picks
    std::string name;     // the scenario's name in the project
    nlohmann::json document;
};
// Rail-optimized, fat-tree and leaf-spine fabrics, each with a small GPT job that fits it.
std::vector<ScenarioTemplate> scenario_templates();

struct WelcomeChoice {
    enum Kind { nothing, demo, from_template, recent, open_other, empty } kind = nothing;
    int template_index = -1;
    QString file;  // recent
};

class WelcomePage : public QDialog {
    Q_OBJECT
public:
    WelcomePage(const QStringList& recent, QWidget* parent = nullptr);
    WelcomeChoice choice() const { return choice_; }

private:
    void choose(WelcomeChoice c);
    WelcomeChoice choice_;
};

}  // namespace orrery::views
