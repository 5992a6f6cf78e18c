#include "views/scenario_document.h"

#include "scenario/sweep.h"
#include "views/editors/scenario_form.h"

namespace orrery::views {

class DocumentStep : public QUndoCommand {
public:
    DocumentStep(ScenarioDocument* d, const QString& text, ScenarioDocument::State before, ScenarioDocument::State after, QWidget* tab)
        : QUndoCommand(text), d_(d), before_(std::move(before)), after_(std::move(after)), tab_(tab) {}
    // The first redo is the edit itself (QUndoStack::push calls it); later ones walk the history.
    void undo() override { d_->show(before_, ScenarioDocument::Change::history, tab_); }
    void redo() override {
        d_->show(after_, done_ ? ScenarioDocument::Change::history : ScenarioDocument::Change::edited, tab_);
        done_ = true;
    }

private:
    ScenarioDocument* d_;
    ScenarioDocument::State before_, after_;
    QWidget* tab_;
    bool done_ = false;
};

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent), state_{nlohmann::json::object(), std::make_shared<const nlohmann::json>(nlohmann::json::object())} {}

void ScenarioDocument::show(const State& state, Change how, QWidget* tab) {
    state_ = state;
    emit changed(how, tab);
}

void ScenarioDocument::load(nlohmann::json scenario, nlohmann::json layout) {
    history_.clear();
    show({std::move(scenario), std::make_shared<const nlohmann::json>(layout.is_object() ? std::move(layout) : nlohmann::json::object())}, Change::loaded, nullptr);
}

void ScenarioDocument::edit(const QString& what, nlohmann::json scenario, nlohmann::json layout, QWidget* tab) {
    const bool same_layout = layout == *state_.layout;
    if (scenario == state_.scenario && same_layout) return;  // a field left with its value (focus moving away on F5) is no edit
    State after{std::move(scenario), same_layout ? state_.layout : std::make_shared<const nlohmann::json>(std::move(layout))};
    history_.push(new DocumentStep(this, what, state_, std::move(after), tab));
}

bool ScenarioDocument::set(const QString& what, const std::string& path, const nlohmann::json* value, QWidget* tab, std::string* why) {
    nlohmann::json next = state_.scenario;
    if (!value) erase_at(next, path);
    else if (!set_at_path(next, path, *value, why)) return false;
    if (next == state_.scenario) return true;
    history_.push(new DocumentStep(this, what, state_, State{std::move(next), state_.layout}, tab));
    return true;
}

}  // namespace orrery::views
