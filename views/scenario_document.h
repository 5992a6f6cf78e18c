#pragma once
// The scenario being edited, the one document every tab edits: the scenario JSON the CLI runs, and the places
// of the topology's boxes on the canvas (workbench layout, saved beside the scenario in the project, never in
// it). Every edit, from a form or the canvas, is one step of one history holding both before and after and the
// tab it was made on; undo and redo show that tab again. Views never keep a truth of their own: they show what
// `changed` says the document now is.
#include <filesystem>
#include <memory>

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <nlohmann/json.hpp>

class QWidget;

namespace orrery::views {

class ScenarioDocument : public QObject {
    Q_OBJECT
public:
    enum class Change { loaded, edited, history };  // a new document; an edit; an undo or redo

    explicit ScenarioDocument(QObject* parent = nullptr);

    const nlohmann::json& scenario() const { return state_.scenario; }
    const nlohmann::json& layout() const { return *state_.layout; }  // {"box name": [x, y]}
    // The folder the scenario's relative paths (imported fabrics, workloads) are read from.
    const std::filesystem::path& base_dir() const { return base_dir_; }
    void set_base_dir(std::filesystem::path dir) { base_dir_ = std::move(dir); }
    QUndoStack* history() { return &history_; }

    // A new document, without history (opening a scenario, a template, the welcome page's empty one).
    void load(nlohmann::json scenario, nlohmann::json layout);
    // One edit named `what`, made on `tab`: the next scenario and layout. No step when neither changes.
    void edit(const QString& what, nlohmann::json scenario, nlohmann::json layout, QWidget* tab);
    // A form's edit: `value` at the dotted `path` (null: the key removed). False, with `why`, when the path
    // cannot hold it.
    bool set(const QString& what, const std::string& path, const nlohmann::json* value, QWidget* tab, std::string* why);
    // Places for boxes the loaded layout lacked (a view found them a place): part of the loaded state, no step,
    // so that undoing a later move puts a box back where it was shown.
    void complete_layout(nlohmann::json layout) { state_.layout = std::make_shared<const nlohmann::json>(std::move(layout)); }

signals:
    // The document is now `scenario()` and `layout()`; `tab`: where the edit, undo or redo happened (null on load).
    void changed(orrery::views::ScenarioDocument::Change how, QWidget* tab);

private:
    struct State {
        nlohmann::json scenario;
        std::shared_ptr<const nlohmann::json> layout;  // shared between steps that leave it as it is
    };
    void show(const State& state, Change how, QWidget* tab);

    State state_;
    std::filesystem::path base_dir_;
    QUndoStack history_;
    friend class DocumentStep;
};

}  // namespace orrery::views
