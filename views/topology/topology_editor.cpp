#include "views/topology/topology_editor.h"
#include "views/words.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QInputDialog>
#include <QMenu>
#include <QDialogButtonBox>
#include <QDrag>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "views/topology/generator_dialog.h"

namespace orrery::views {

namespace {

// Dragging a palette entry carries its kind ("server:8", "switch:1", …).
class Palette : public QListWidget {
public:
    explicit Palette(QWidget* parent) : QListWidget(parent) {
        setDragEnabled(true);
        setDragDropMode(DragOnly);
        add("GPU server, 8 GPUs (8 NICs, NVSwitch)", "server:8");
        add("GPU server, 4 GPUs (4 NICs, NVSwitch)", "server:4");
        add("Host, 1 GPU (1 NIC)", "server:1");
        add("Leaf / ToR switch (tier 1)", "switch:1");
        add("Spine / aggregation switch (tier 2)", "switch:2");
        add("Core switch (tier 3)", "switch:3");
        setToolTip("Drag onto the canvas");
    }

protected:
    void startDrag(Qt::DropActions) override {
        QListWidgetItem* i = currentItem();
        if (!i) return;
        auto* mime = new QMimeData;
        mime->setData(kPaletteMime, i->data(Qt::UserRole).toString().toUtf8());
        auto* drag = new QDrag(this);
        drag->setMimeData(mime);
        drag->exec(Qt::CopyAction);
    }

private:
    void add(const QString& text, const QString& kind) {
        auto* i = new QListWidgetItem(text, this);
        i->setData(Qt::UserRole, kind);
    }
};

}  // namespace

TopologyEditor::TopologyEditor(const PresetLibrary& presets, QWidget* parent) : QWidget(parent), presets_(presets) {
    confirm_delete = [this](int n) {
        return QMessageBox::question(this, "Delete", "Delete " + counted(n, "item", "items") + " (boxes and links)?") == QMessageBox::Yes;
    };
    scene_ = new TopologyScene(this);
    view_ = new TopologyView(scene_, this);
    palette_ = new Palette(this);
    palette_->setMaximumWidth(260);
    summary_ = new QLabel(this);
    selection_label_ = new QLabel("Nothing selected", this);

    link_panel_ = new QGroupBox("Link", this);
    auto* lf = new QFormLayout(link_panel_);
    link_rate_ = new QLineEdit(link_panel_);
    link_rate_->setToolTip("Link rate with its unit: 100Gbps, 400Gbps, 900GBps");
    link_delay_ = new QLineEdit(link_panel_);
    link_delay_->setToolTip("One-way propagation delay with its unit: 1us, 500ns");
    lf->addRow("Rate", link_rate_);
    lf->addRow("Delay", link_delay_);
    connect(link_rate_, &QLineEdit::editingFinished, this, &TopologyEditor::apply_link_properties);
    connect(link_delay_, &QLineEdit::editingFinished, this, &TopologyEditor::apply_link_properties);

    box_panel_ = new QGroupBox("Box", this);
    auto* bf = new QFormLayout(box_panel_);
    box_name_ = new QLineEdit(box_panel_);
    box_gpus_ = new QSpinBox(box_panel_);
    box_gpus_->setRange(1, 72);
    box_gpus_->setSuffix(" GPUs");
    box_tier_ = new QComboBox(box_panel_);
    box_tier_->addItems({"tier 1 (leaf / ToR)", "tier 2 (spine / aggregation)", "tier 3 (core)"});
    bf->addRow("Name", box_name_);
    bf->addRow("GPUs (servers)", box_gpus_);
    bf->addRow("Tier (switches)", box_tier_);
    switch_buffer_ = new QLineEdit(box_panel_);
    switch_buffer_->setObjectName("switch-buffer");
    switch_buffer_->setToolTip("Shared buffer per switch, with its unit (32MiB); one value for every switch of the fabric");
    bf->addRow("Buffer (every switch)", switch_buffer_);
    connect(switch_buffer_, &QLineEdit::editingFinished, this, [this] {
        std::string why;
        if (switch_buffer_->text().trimmed().isEmpty()) return;
        if (!parse_size(switch_buffer_->text().trimmed().toStdString(), &why)) {
            emit message("Switch buffer \"" + switch_buffer_->text() + "\": " + QString::fromStdString(why));
            return;
        }
        const nlohmann::json value = switch_buffer_->text().trimmed().toStdString();
        document_->set("Set network.buffer_per_switch (Topology)", "network.buffer_per_switch", &value, this, &why);
    });
    connect(box_name_, &QLineEdit::editingFinished, this, &TopologyEditor::apply_box_properties);
    connect(box_gpus_, &QSpinBox::editingFinished, this, &TopologyEditor::apply_box_properties);
    connect(box_tier_, &QComboBox::activated, this, &TopologyEditor::apply_box_properties);

    auto* side = new QWidget(this);
    auto* sl = new QVBoxLayout(side);
    auto* hint = new QLabel("<b>Palette</b> (drag onto the canvas; drag from a yellow port to another box to link; with Shift, every free "
                            "NIC of a server to that switch; with Ctrl+Shift, NIC <i>r</i> to the <i>r</i>-th switch of that row: rails)",
                            side);
    hint->setWordWrap(true);
    sl->addWidget(hint);
    sl->itemAt(0)->widget()->setProperty("wordWrap", true);
    sl->addWidget(palette_);
    auto* gen = new QPushButton("Generate fabric…", side);
    connect(gen, &QPushButton::clicked, this, &TopologyEditor::open_generator_dialog);
    sl->addWidget(gen);
    every_box_ = new QCheckBox(QString("Show every box above %1 hosts (slower; needed to edit them)").arg(kCollapseHosts), side);
    connect(every_box_, &QCheckBox::toggled, this, &TopologyEditor::show_every_box);
    sl->addWidget(every_box_);
    sl->addWidget(selection_label_);
    sl->addWidget(link_panel_);
    sl->addWidget(box_panel_);
    auto* events_panel = new QGroupBox("Failures and degradations", side);
    auto* el = new QVBoxLayout(events_panel);
    events_list_ = new QListWidget(events_panel);
    events_list_->setToolTip("The scenario's topology.events. Right-click a link between switches or a switch on the canvas: "
                             "Fail at…, Restore at…, Degrade to…");
    events_list_->setMaximumHeight(120);
    remove_event_ = new QPushButton("Remove event", events_panel);
    connect(remove_event_, &QPushButton::clicked, this, [this] { remove_fabric_event(events_list_->currentRow()); });
    connect(events_list_, &QListWidget::currentRowChanged, this, [this](int row) { remove_event_->setEnabled(row >= 0 && !locked_); });
    el->addWidget(events_list_);
    el->addWidget(remove_event_);
    sl->addWidget(events_panel);
    sl->addStretch();
    sl->addWidget(summary_);
    summary_->setWordWrap(true);

    auto* split = new QSplitter(this);
    split->addWidget(side);
    split->addWidget(view_);
    split->setStretchFactor(1, 1);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(scene_, &QGraphicsScene::selectionChanged, this, &TopologyEditor::update_properties);
    connect(scene_, &TopologyScene::addRequested, this, &TopologyEditor::add_from_palette);
    connect(scene_, &TopologyScene::contextRequested, this, &TopologyEditor::show_context_menu);
    ask_text = [this](const QString& title, const QString& label, const QString& initial) -> std::optional<QString> {
        bool ok = false;
        const QString text = QInputDialog::getText(this, title, label, QLineEdit::Normal, initial, &ok);
        return ok ? std::optional<QString>(text) : std::nullopt;
    };
    connect(scene_, &TopologyScene::linkRequested, this, [this](uint64_t a, int pa, uint64_t b, int pb) {
        QString why;
        TopoDoc next = doc_;
        if (!add_link(next, a, pa, b, pb, &why)) {
            emit message("Link not made: " + why);
            return;
        }
        commit("Link", std::move(next));
    });
    connect(scene_, &TopologyScene::linkEveryNicRequested, this, [this](uint64_t server, uint64_t target, bool rails) {
        QString why;
        TopoDoc next = doc_;
        const std::vector<uint64_t> added = link_every_nic(next, server, target, rails, &why);
        if (added.empty()) {
            emit message("Links not made: " + why);
            return;
        }
        commit("Link " + counted(added.size(), "NIC", "NICs") + (rails ? " to their rails" : ""), std::move(next));
        scene_->select({}, std::set<uint64_t>(added.begin(), added.end()));  // the new links, highlighted
    });
    connect(scene_, &TopologyScene::moveFinished, this, [this](std::map<uint64_t, QPointF> moved) {
        edit(moved.size() == 1 ? "Move box" : QString("Move %1 boxes").arg(moved.size()), [&](TopoDoc& d) {
            for (TopoBox& b : d.boxes)
                if (auto it = moved.find(b.id); it != moved.end()) b.pos = it->second;
        });
    });
    use_document(&own_document_);
    update_properties();
}

void TopologyEditor::use_document(ScenarioDocument* document) {
    disconnect(document_, nullptr, this, nullptr);
    document_ = document;
    connect(document_, &ScenarioDocument::changed, this, [this](ScenarioDocument::Change how, QWidget*) { show_document(how); });
    show_document(ScenarioDocument::Change::loaded);
}

void TopologyEditor::show_document(ScenarioDocument::Change how) {
    const bool loaded = how == ScenarioDocument::Change::loaded;
    const nlohmann::json& scenario = document_->scenario();
    const nlohmann::json topology = scenario.contains("topology") ? scenario["topology"] : nlohmann::json();
    std::optional<TopoDoc> next;
    if (pending_ && how != ScenarioDocument::Change::history && topology == pending_topology_) next = std::move(*pending_);  // this editor's own
    pending_.reset();
    const std::map<QString, QPointF> places = layout_positions(document_->layout());
    auto fabric_of = [](nlohmann::json t) {  // events change what happens on the fabric, not the fabric drawn
        if (t.is_object()) t.erase("events");
        return t;
    };
    if (!next && !loaded && fabric_of(topology) == fabric_of(shown_topology_)) {  // the same fabric: boxes to their places
        next = doc_;
        place_boxes(*next, places);
    }
    if (!next) {  // another fabric: rebuilt from the document, keeping the ids of what stays
        next.emplace();
        try {
            if (std::optional<TopoDoc> drawn = doc_from_drawn(topology)) {
                *next = std::move(*drawn);
                place_boxes(*next, places);
            } else if (!topology.is_null()) {
                *next = doc_from_topology(topology, document_->base_dir(), presets_, places);
            }
        } catch (const InputError& e) {
            emit message(QString("Topology not shown: ") + e.what());
        }
        if (!loaded) carry_ids(doc_, *next);
    }
    shown_topology_ = topology;
    if (!loaded) return apply(*next);
    scene_->forget_room();
    apply(*next);
    document_->complete_layout(doc_layout(doc_));  // boxes the saved layout lacked keep the place they are shown at
    view_->fit();
}

void TopologyEditor::commit(const QString& what, TopoDoc next) {
    if (locked_) return;
    nlohmann::json scenario = document_->scenario();
    nlohmann::json topology;
    if (!next.boxes.empty()) {  // an empty canvas is no fabric (not an explicit one of no nodes)
        topology = doc_to_topology(next);
        // The same fabric (a move): the section stays as it was written.
        if (scenario.contains("topology") && topology == doc_to_topology(doc_)) topology = scenario["topology"];
        // Failures and degradations stay with the fabric they were written for (the engine says which no
        // longer name a link or switch of it).
        else if (scenario.contains("topology") && scenario["topology"].contains("events")) topology["events"] = scenario["topology"]["events"];
    }
    if (topology.is_null()) scenario.erase("topology");
    else scenario["topology"] = topology;
    nlohmann::json layout = doc_layout(next);
    pending_topology_ = topology;
    pending_ = std::move(next);
    document_->edit(what, std::move(scenario), std::move(layout), this);
    pending_.reset();  // when the edit changed nothing, no step took it
}

void TopologyEditor::apply(const TopoDoc& doc) {
    doc_ = doc;
    // What was selected stays selected (a link whose rate was just edited included).
    const std::set<uint64_t> selected = scene_->selected_boxes(), selected_links = scene_->selected_links();
    scene_->sync(doc_);
    scene_->select(selected, selected_links);
    summary_->setText(QString("%1 (GPUs with one NIC each), %2, %3%4")
                          .arg(counted(doc_.host_count(), "host", "hosts"))
                          .arg(counted(doc_.switch_count(), "switch", "switches"))
                          .arg(counted(doc_.links.size(), "link", "links"))
                          .arg(scene_->collapsed() ? QString("; shown as groups (over %1 hosts): tick \"Show every box\" to edit boxes").arg(kCollapseHosts)
                                                   : doc_.generator.is_null() ? "" : "; as generated"));
    update_properties();
    show_events();
    emit changed();
}

bool TopologyEditor::listed_fabric() const {
    const nlohmann::json& s = document_->scenario();
    return s.contains("topology") && s["topology"].contains("nodes");
}

void TopologyEditor::show_events() {
    const nlohmann::json& s = document_->scenario();
    const nlohmann::json events = s.contains("topology") && s["topology"].contains("events") ? s["topology"]["events"] : nlohmann::json::array();
    scene_->set_event_marks(event_marks(doc_, events, listed_fabric()));
    scene_->set_job_marks(job_marks(doc_, s, presets_));
    events_list_->clear();
    if (events.is_array())
        for (const nlohmann::json& e : events) events_list_->addItem(event_text(e, &doc_));
    remove_event_->setEnabled(false);
}

bool TopologyEditor::add_fabric_event(uint64_t box, uint64_t link, EventAction action, const QString& at, const QString& rate, QString* why) {
    if (locked_) return *why = "a run is using the scenario", false;
    std::string problem;
    if (!parse_time(at.trimmed().toStdString(), false, &problem)) return *why = "the time " + at + " does not read: " + QString::fromStdString(problem), false;
    if (action == EventAction::degrade) {
        const auto r = parse_rate(rate.trimmed().toStdString(), &problem);
        if (!r) return *why = "the rate " + rate + " does not read: " + QString::fromStdString(problem), false;
        if (r->count <= 0) return *why = "a link at 0 is down: use Fail at…", false;
    }
    std::optional<nlohmann::json> target;
    QString name;
    if (const TopoBox* b = box ? doc_.box(box) : nullptr) {
        target = event_switch(doc_, *b, listed_fabric());
        name = "switch " + b->name;
    } else {
        for (const TopoLink& l : doc_.links)
            if (l.id == link) {
                target = event_link(doc_, l, listed_fabric());
                const TopoBox *a = doc_.box(l.a), *z = doc_.box(l.b);
                name = "link " + (a ? a->name : "?") + " – " + (z ? z->name : "?");
            }
    }
    if (!target) return *why = "events change links between switches and switches, as the fabric was read (save the drawing first)", false;
    nlohmann::json scenario = document_->scenario();
    scenario["topology"]["events"].push_back(fabric_event(box != 0, *target, at.trimmed(), action, rate.trimmed()));
    const QString verb = action == EventAction::fail ? "Fail " : action == EventAction::restore ? "Restore " : "Degrade ";
    document_->edit(verb + name + (action == EventAction::degrade ? " to " + rate.trimmed() : QString()) + " at " + at.trimmed(), std::move(scenario),
                    document_->layout(), this);
    return true;
}

void TopologyEditor::remove_fabric_event(int index) {
    nlohmann::json scenario = document_->scenario();
    if (locked_ || index < 0 || !scenario.contains("topology") || !scenario["topology"].contains("events")) return;
    nlohmann::json& events = scenario["topology"]["events"];
    if (!events.is_array() || size_t(index) >= events.size()) return;
    const QString text = event_text(events[size_t(index)]);
    events.erase(events.begin() + index);
    if (events.empty()) scenario["topology"].erase("events");
    document_->edit("Remove event: " + text, std::move(scenario), document_->layout(), this);
}

void TopologyEditor::show_context_menu(uint64_t box, uint64_t link, QPoint screen_pos) {
    if (locked_) return;
    if (const TopoBox* b = box ? doc_.box(box) : nullptr; b && b->kind == BoxKind::server) return show_job_menu(box, screen_pos);
    bool nameable = false;
    if (const TopoBox* b = box ? doc_.box(box) : nullptr) nameable = event_switch(doc_, *b, listed_fabric()).has_value();
    for (const TopoLink& l : doc_.links)
        if (l.id == link) nameable = event_link(doc_, l, listed_fabric()).has_value();
    if (!nameable) return;  // servers and host links: events change what is between switches
    QMenu menu;
    const QAction* fail = menu.addAction("Fail at…");
    const QAction* restore = menu.addAction("Restore at…");
    const QAction* degrade = link ? menu.addAction("Degrade to…") : nullptr;
    const QAction* chosen = menu.exec(screen_pos);
    if (!chosen) return;
    const EventAction action = chosen == fail ? EventAction::fail : chosen == restore ? EventAction::restore : EventAction::degrade;
    QString rate;
    if (chosen == degrade) {
        const auto r = ask_text("Degrade link", "The link's rate from then on (e.g. 200Gbps):", "200Gbps");
        if (!r) return;
        rate = *r;
    }
    const auto at = ask_text(chosen->text().chopped(1), "When, from the start of the run (e.g. 0us for the whole run, 200us, 1ms):", "0us");
    if (!at) return;
    QString why;
    if (!add_fabric_event(box, link, action, *at, rate, &why)) emit message("Event not added: " + why);
}

std::set<uint64_t> TopologyEditor::selected_servers(uint64_t clicked) const {
    std::set<uint64_t> servers;
    for (uint64_t id : scene_->selected_boxes())
        if (const TopoBox* b = doc_.box(id); b && b->kind == BoxKind::server) servers.insert(id);
    if (!servers.count(clicked)) servers = {clicked};  // a right click outside the selection means that server alone
    return servers;
}

void TopologyEditor::show_job_menu(uint64_t box, QPoint screen_pos) {
    const JobMarks marks = job_marks(doc_, document_->scenario(), presets_);
    if (marks.names.isEmpty()) return;
    const std::set<uint64_t> servers = selected_servers(box);
    QMenu menu;
    std::vector<const QAction*> actions;
    for (const QString& name : marks.names)
        actions.push_back(menu.addAction(QString("Place job %1 on %2").arg(name, servers.size() == 1 ? QString("this server") : counted(servers.size(), "server", "servers"))));
    const QAction* chosen = menu.exec(screen_pos);
    for (size_t j = 0; j < actions.size(); ++j)
        if (chosen == actions[j]) place_job(int(j), servers);
}

bool TopologyEditor::place_job(int job, const std::set<uint64_t>& servers) {
    if (locked_ || servers.empty()) return false;
    const nlohmann::json placement = {{"policy", "hosts"}, {"hosts", host_ranges_of(doc_, servers)}};
    const nlohmann::json& s = document_->scenario();
    if (!s.contains("workload") || !s["workload"].contains("jobs") || !s["workload"]["jobs"].is_array() || size_t(job) >= s["workload"]["jobs"].size())
        return false;
    const std::string name = s["workload"]["jobs"][size_t(job)].value("name", "");
    std::string why;
    const bool ok = document_->set("Place job " + QString::fromStdString(name) + " on " + counted(servers.size(), "server", "servers"),
                                   "workload.jobs[" + std::to_string(job) + "].placement", &placement, this, &why);
    if (!ok) emit message("Job not placed: " + QString::fromStdString(why));
    return ok;
}

void TopologyEditor::set_doc(const TopoDoc& doc) {
    nlohmann::json scenario = nlohmann::json::object();
    if (!doc.boxes.empty()) scenario["topology"] = doc_to_topology(doc);
    pending_topology_ = scenario.contains("topology") ? scenario["topology"] : nlohmann::json();
    pending_ = doc;
    document_->load(std::move(scenario), doc_layout(doc));
}

void TopologyEditor::show_every_box(bool on) {
    if (every_box_->isChecked() != on) every_box_->setChecked(on);  // comes back here through toggled
    if (scene_->show_every_box() == on) return;
    scene_->set_show_every_box(on);
    apply(doc_);
    view_->fit();
}

void TopologyEditor::show_buffer(const QString& size) { switch_buffer_->setText(size); }

void TopologyEditor::set_locked(bool locked) {
    locked_ = locked;
    view_->setInteractive(!locked);
    palette_->setEnabled(!locked);
    link_panel_->setEnabled(!locked);
    box_panel_->setEnabled(!locked);
    events_list_->setEnabled(!locked);
    remove_event_->setEnabled(!locked && events_list_->currentRow() >= 0);
}

void TopologyEditor::edit(const QString& what, const std::function<void(TopoDoc&)>& change) {
    if (locked_) return;
    TopoDoc next = doc_;
    change(next);
    commit(what, std::move(next));
}

void TopologyEditor::add_from_palette(const QString& kind, QPointF scene_pos) {
    const QStringList parts = kind.split(':');
    if (parts.size() != 2) return;
    const int n = parts[1].toInt();
    const QPointF snapped(std::round(scene_pos.x() / kGrid) * kGrid, std::round(scene_pos.y() / kGrid) * kGrid);
    if (parts[0] == "server") edit(QString("Add server (%1 GPUs)").arg(n), [&](TopoDoc& d) { add_box(d, BoxKind::server, 0, n, snapped); });
    else edit(QString("Add tier-%1 switch").arg(n), [&](TopoDoc& d) { add_box(d, BoxKind::network_switch, n, 1, snapped); });
}

void TopologyEditor::delete_selection() {
    const std::set<uint64_t> boxes = scene_->selected_boxes(), links = scene_->selected_links();
    const int count = int(boxes.size() + links.size());
    if (count == 0 || locked_) return;
    if (count > 10 && !confirm_delete(count)) return;
    edit("Delete " + counted(count, "item", "items"), [&](TopoDoc& d) { remove(d, boxes, links); });
}

void TopologyEditor::copy_selection() {
    clipboard_ = extract(doc_, scene_->selected_boxes());
    paste_count_ = 0;
    emit message("Copied " + counted(clipboard_.boxes.size(), "box", "boxes") + " and " + counted(clipboard_.links.size(), "link", "links") + " between them");
}

void TopologyEditor::paste_clipboard() {
    if (clipboard_.boxes.empty()) return;
    ++paste_count_;
    std::set<uint64_t> added;
    edit("Paste " + counted(clipboard_.boxes.size(), "box", "boxes"), [&](TopoDoc& d) { added = paste(d, clipboard_, QPointF(40, 40) * paste_count_); });
    scene_->select(added);
}

void TopologyEditor::duplicate_selection() {
    const TopoDoc fragment = extract(doc_, scene_->selected_boxes());
    if (fragment.boxes.empty()) return;
    std::set<uint64_t> added;
    edit("Duplicate " + counted(fragment.boxes.size(), "box", "boxes"), [&](TopoDoc& d) { added = paste(d, fragment, QPointF(40, 40)); });
    scene_->select(added);
}

void TopologyEditor::generate(const nlohmann::json& generator) {
    TopoDoc next = doc_from_topology(generator, {}, presets_);
    // Fresh ids continue the current document's, so undo and selection never confuse old and new boxes.
    const uint64_t shift = doc_.next_id;
    for (TopoBox& b : next.boxes) b.id += shift;
    for (TopoLink& l : next.links) {
        l.id += shift;
        l.a += shift;
        l.b += shift;
    }
    next.next_id += shift;
    commit("Generate " + QString::fromStdString(generator.value("generator", std::string("fabric"))), std::move(next));
    view_->fit();
}

void TopologyEditor::open_generator_dialog() {
    GeneratorDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted) return;
    const nlohmann::json g = dialog.generator();
    try {
        generate(g);
    } catch (const InputError& e) {
        QMessageBox::warning(this, "Generate fabric", QString::fromStdString(e.what()));
    }
}

QString TopologyEditor::selection_text() const { return selection_label_->text(); }

void TopologyEditor::update_properties() {
    const std::set<uint64_t> boxes = scene_->selected_boxes(), links = scene_->selected_links();
    selection_label_->setText(boxes.empty() && links.empty() ? "Nothing selected"
                                                             : "Selected: " + counted(boxes.size(), "box", "boxes") + ", " + counted(links.size(), "link", "links"));
    link_panel_->setVisible(!links.empty());
    box_panel_->setVisible(boxes.size() == 1 && links.empty());
    if (!links.empty()) {
        const TopoLink* first = nullptr;
        for (const TopoLink& l : doc_.links)
            if (links.count(l.id)) {
                first = &l;
                break;
            }
        if (first) {
            link_rate_->setText(first->rate);
            link_delay_->setText(first->delay);
        }
    }
    if (boxes.size() == 1 && links.empty()) {
        const TopoBox* b = doc_.box(*boxes.begin());
        if (!b) return;
        box_name_->setText(b->name);
        box_gpus_->setValue(b->gpus);
        box_gpus_->setEnabled(b->kind == BoxKind::server);
        box_tier_->setCurrentIndex(std::max(0, b->tier - 1));
        box_tier_->setEnabled(b->kind == BoxKind::network_switch);
        switch_buffer_->setEnabled(b->kind == BoxKind::network_switch);
    }
}

void TopologyEditor::apply_link_properties() {
    const std::set<uint64_t> links = scene_->selected_links();
    if (links.empty()) return;
    std::string why;
    if (!parse_rate(link_rate_->text().toStdString(), &why)) {
        emit message("Link rate \"" + link_rate_->text() + "\": " + QString::fromStdString(why));
        update_properties();
        return;
    }
    if (!parse_time(link_delay_->text().toStdString(), false, &why)) {
        emit message("Link delay \"" + link_delay_->text() + "\": " + QString::fromStdString(why));
        update_properties();
        return;
    }
    bool differs = false;
    for (const TopoLink& l : doc_.links)
        if (links.count(l.id) && (l.rate != link_rate_->text() || l.delay != link_delay_->text())) differs = true;
    if (!differs) return;
    edit(QString("Set %1 to %2, %3").arg(counted(links.size(), "link", "links"), link_rate_->text(), link_delay_->text()), [&](TopoDoc& d) {
        for (TopoLink& l : d.links)
            if (links.count(l.id)) {
                l.rate = link_rate_->text();
                l.delay = link_delay_->text();
            }
        mark_edited(d);
    });
}

void TopologyEditor::apply_box_properties() {
    const std::set<uint64_t> boxes = scene_->selected_boxes();
    if (boxes.size() != 1) return;
    const TopoBox* b = doc_.box(*boxes.begin());
    if (!b) return;
    const QString name = box_name_->text().trimmed();
    const int gpus = box_gpus_->value(), tier = box_tier_->currentIndex() + 1;
    if (name.isEmpty() || name.contains(".gpu") || name.endsWith(".nvs")) {
        emit message("Box name \"" + name + "\": must not be empty nor contain .gpu or .nvs (those name a server's hosts and NVSwitch)");
        update_properties();
        return;
    }
    for (const TopoBox& other : doc_.boxes)
        if (other.id != b->id && other.name == name) {
            emit message("Box name \"" + name + "\" is taken");
            update_properties();
            return;
        }
    if (b->kind == BoxKind::server && gpus < b->gpus)
        for (const TopoLink& l : doc_.links)
            if ((l.a == b->id && l.port_a >= gpus) || (l.b == b->id && l.port_b >= gpus)) {
                emit message(QString("%1: NIC %2 has a link; delete it before reducing the server to %3 GPUs").arg(b->name).arg(std::max(l.port_a, l.port_b)).arg(gpus));
                update_properties();
                return;
            }
    if (name == b->name && (b->kind != BoxKind::server || gpus == b->gpus) && (b->kind != BoxKind::network_switch || tier == b->tier)) return;
    const uint64_t id = b->id;
    edit("Edit " + name, [&](TopoDoc& d) {
        TopoBox* x = d.box(id);
        x->name = name;
        if (x->kind == BoxKind::server) x->gpus = gpus;
        else x->tier = tier;
        mark_edited(d);
    });
}

}  // namespace orrery::views
