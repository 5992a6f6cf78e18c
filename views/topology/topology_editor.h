#pragma once
// The topology editor: palette, canvas, property panel over the scenario document's `topology` section and
// layout (views/scenario_document.h). Every change is an edit of that document, one step of the history every tab
// shares; what the canvas shows (a TopoDoc: boxes, links, places) is derived from the document each time it
// changes, so an undo, a form's edit of the topology or a load all show the same way.
#include <functional>
#include <optional>
#include <set>

#include <QWidget>

#include "views/scenario_document.h"
#include "views/topology/topology_doc.h"
#include "views/topology/topology_scene.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QComboBox;
class QFormLayout;

namespace orrery::views {

class TopologyEditor : public QWidget {
    Q_OBJECT
public:
    explicit TopologyEditor(const PresetLibrary& presets, QWidget* parent = nullptr);

    const TopoDoc& doc() const { return doc_; }  // what the canvas shows of the document
    // The document edited (the main window's, shared by every tab); the editor's own until then.
    void use_document(ScenarioDocument* document);
    ScenarioDocument* document() const { return document_; }
    QUndoStack* undo_stack() { return document_->history(); }
    // A new document holding only this fabric (standalone use: tests, benchmarks); clears the history.
    void set_doc(const TopoDoc& doc);
    TopologyScene* scene() { return scene_; }
    TopologyView* view() { return view_; }
    void set_locked(bool locked);      // while a run uses the scenario
    void show_buffer(const QString& size);  // what the property panel shows for switches
    QString selection_text() const;         // the property panel's "Selected: …" line

    // Every edit goes through here: `change` turns what the canvas shows into the next fabric, which becomes
    // the document's topology and layout.
    void edit(const QString& what, const std::function<void(TopoDoc&)>& change);
    void add_from_palette(const QString& kind, QPointF scene_pos);
    void delete_selection();
    void copy_selection();
    void paste_clipboard();
    void duplicate_selection();
    void generate(const nlohmann::json& generator);  // throws InputError with the engine's message
    void open_generator_dialog();
    void show_every_box(bool on);  // for fabrics above kCollapseHosts hosts: boxes instead of groups

    // Asked before deleting more than 10 items; replaceable (tests answer without a dialog).
    std::function<bool(int items)> confirm_delete;

    // Failures and degradations (the scenario's topology.events), from a link's or switch's context menu:
    // `box` or `link` (the other 0) fails, comes back or (a link) runs at `rate` from `at` on, as one undoable
    // edit. False, with `why`, when the time or rate does not read or events cannot name the item.
    bool add_fabric_event(uint64_t box, uint64_t link, EventAction action, const QString& at, const QString& rate, QString* why);
    // A mix of jobs: job `job` placed on the GPUs of `servers` (box ids) as listed hosts, one undoable edit; what
    // a right click on a server offers for each job.
    bool place_job(int job, const std::set<uint64_t>& servers);
    void remove_fabric_event(int index);
    QListWidget* events_list() { return events_list_; }
    // The context menu's questions (a time, a rate); replaceable (tests answer without a dialog). nullopt: cancelled.
    std::function<std::optional<QString>(const QString& title, const QString& label, const QString& initial)> ask_text;

signals:
    void changed();                    // the canvas shows the document anew (edit, undo, redo, load)
    void message(QString text);        // for the log

private:
    void show_job_menu(uint64_t box, QPoint screen_pos);
    std::set<uint64_t> selected_servers(uint64_t clicked) const;
    void show_document(ScenarioDocument::Change how);
    void commit(const QString& what, TopoDoc next);
    void apply(const TopoDoc& doc);
    void update_properties();
    void apply_link_properties();
    void apply_box_properties();
    void show_context_menu(uint64_t box, uint64_t link, QPoint screen_pos);
    void show_events();
    bool listed_fabric() const;

    const PresetLibrary& presets_;
    ScenarioDocument own_document_;
    ScenarioDocument* document_ = &own_document_;
    TopoDoc doc_;
    nlohmann::json shown_topology_;      // the document's topology section that doc_ shows
    std::optional<TopoDoc> pending_;     // this editor's edit on its way through the document
    nlohmann::json pending_topology_;
    TopoDoc clipboard_;
    TopologyScene* scene_;
    TopologyView* view_;
    QListWidget* palette_;
    QLabel* summary_;
    QWidget* link_panel_;
    QLineEdit* link_rate_;
    QLineEdit* link_delay_;
    QWidget* box_panel_;
    QLineEdit* box_name_;
    QSpinBox* box_gpus_;
    QComboBox* box_tier_;
    QLineEdit* switch_buffer_;
    QLabel* selection_label_;
    QCheckBox* every_box_;
    QListWidget* events_list_;
    QPushButton* remove_event_;
    bool locked_ = false;
    int paste_count_ = 0;
};

}  // namespace orrery::views
