#pragma once
// The topology editor: palette, canvas, property panel; every change is an undoable command holding the
// document before and after (TopoDoc is small plain data, so a snapshot is the simplest exact undo).
#include <functional>

#include <QUndoStack>
#include <QWidget>

#include "views/topology/topology_doc.h"
#include "views/topology/topology_scene.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QComboBox;
class QFormLayout;

namespace orrery::views {

class TopologyEditor : public QWidget {
    Q_OBJECT
public:
    explicit TopologyEditor(const PresetLibrary& presets, QWidget* parent = nullptr);

    const TopoDoc& doc() const { return doc_; }
    void set_doc(const TopoDoc& doc);  // a new document: clears the undo history
    QUndoStack* undo_stack() { return undo_; }
    // The document's one history (the main window's, shared by every tab); the editor's own until then.
    void use_undo_stack(QUndoStack* stack) { undo_ = stack; }
    TopologyScene* scene() { return scene_; }
    TopologyView* view() { return view_; }
    void set_locked(bool locked);      // while a run uses the scenario
    void show_buffer(const QString& size);  // what the property panel shows for switches
    QString selection_text() const;         // the property panel's "Selected: …" line

    // Every edit goes through here: `change` turns the current document into the next one.
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

signals:
    void changed();                    // the document changed (edit, undo, redo, load)
    // The shared buffer of every switch (network.buffer_per_switch: the engine models one value for all).
    void bufferEdited(QString size);
    void message(QString text);        // for the log
    void historyStep();                // an edit of this editor was undone or redone (show the tab)

private:
    void apply(const TopoDoc& doc);
    void update_properties();
    void apply_link_properties();
    void apply_box_properties();

    const PresetLibrary& presets_;
    TopoDoc doc_;
    TopoDoc clipboard_;
    QUndoStack own_undo_;
    QUndoStack* undo_ = &own_undo_;
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
    bool locked_ = false;
    int paste_count_ = 0;
    friend class DocCommand;
};

}  // namespace orrery::views
