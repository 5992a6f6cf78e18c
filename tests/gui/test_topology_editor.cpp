// The topology editor: the document's conversions against the engine, and the editing operations through
// the widgets' own paths (palette drop, dragging from a port, Delete with its confirmation, undo and redo,
// copy and paste, generators, collapsing above 1,000 hosts).
#include <QComboBox>
#include <QGraphicsSceneDragDropEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "gui_fixtures.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "views/topology/generator_dialog.h"
#include "views/editors/scenario_checks.h"
#include "views/topology/topology_editor.h"

using namespace orrery;
using namespace orrery::views;

class TestTopologyEditor : public QObject {
    Q_OBJECT
    PresetLibrary presets = testing::source_presets();

    Fabric engine_fabric(const nlohmann::json& topology) {
        const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology}};
        return build_fabric(load_scenario_document(doc, "test", {}, presets, LoadOptions{false}).base.topology);
    }

private slots:
    void generated_document_matches_the_engine_fabric() {
        const nlohmann::json gen = {{"generator", "rail-optimized"}, {"gpus", 32}, {"gpus_per_server", 8}, {"tiers", 2}};
        TopoDoc doc = doc_from_topology(gen, {}, presets);
        const Fabric f = engine_fabric(gen);
        QCOMPARE(doc.host_count(), f.count(NodeKind::host));
        QCOMPARE(doc.switch_count(), f.count(NodeKind::network_switch));
        QVERIFY(doc_to_topology(doc) == gen);  // unedited: the generator form is kept
        // Edited, it becomes explicit nodes and links that build the same fabric.
        mark_edited(doc);
        const nlohmann::json explicit_form = doc_to_topology(doc);
        QVERIFY(explicit_form.contains("nodes"));
        const Fabric g = engine_fabric(explicit_form);
        QCOMPARE(g.count(NodeKind::host), f.count(NodeKind::host));
        QCOMPARE(g.count(NodeKind::nvswitch), f.count(NodeKind::nvswitch));
        QCOMPARE(g.count(NodeKind::network_switch), f.count(NodeKind::network_switch));
        QCOMPARE(g.link_count(), f.link_count());
        // Round trip through the explicit form keeps every box and link.
        const TopoDoc again = doc_from_topology(explicit_form, {}, presets);
        QCOMPARE(again.boxes.size(), doc.boxes.size());
        QCOMPARE(again.links.size(), doc.links.size());
    }

    void the_drawn_form_reads_back_without_the_engine() {
        // The canvas is rebuilt from the scenario document after an undo: the explicit form it writes reads back
        // to the same boxes, NICs and links, also while a server has NICs the engine would refuse unlinked.
        TopoDoc doc = doc_from_topology({{"generator", "rail-optimized"}, {"gpus", 16}, {"gpus_per_server", 8}, {"tiers", 2}}, {}, presets);
        mark_edited(doc);
        QString why;
        const uint64_t server = add_box(doc, BoxKind::server, 0, 4, {});
        const uint64_t leaf = add_box(doc, BoxKind::network_switch, 1, 1, {});
        QVERIFY(add_link(doc, server, 2, leaf, -1, &why));
        doc.links.back().rate = "200Gbps";
        const nlohmann::json drawn = doc_to_topology(doc);
        const std::optional<TopoDoc> back = doc_from_drawn(drawn);
        QVERIFY(back);
        QVERIFY(doc_to_topology(*back) == drawn);
        QCOMPARE(back->boxes.size(), doc.boxes.size());
        QCOMPARE(back->host_count(), doc.host_count());
        std::map<QString, const TopoBox*> by_name;
        for (const TopoBox& b : back->boxes) by_name[b.name] = &b;
        for (const TopoBox& b : doc.boxes) {
            QVERIFY2(by_name.count(b.name), qPrintable(b.name));
            QCOMPARE(by_name[b.name]->gpus, b.gpus);
            QCOMPARE(by_name[b.name]->tier, b.tier);
            QCOMPARE(by_name[b.name]->group, b.group);
        }
        QCOMPARE(back->links.back().port_a, 2);
        QCOMPARE(back->links.back().rate, QString("200Gbps"));
        // The engine refuses the half-linked server; the drawn form still shows it.
        bool refused = false;
        try {
            doc_from_topology(drawn, {}, presets);
        } catch (const InputError&) {
            refused = true;
        }
        QVERIFY(refused);
        // Other shapes are the engine's to read.
        QVERIFY(!doc_from_drawn({{"generator", "leaf-spine"}}));
        nlohmann::json other = drawn;
        other["nodes"][0]["rate"] = "100Gbps";
        QVERIFY(!doc_from_drawn(other));
    }

    // Failures and degradations from the canvas: a link between switches fails at a time, another is degraded,
    // a switch fails; each is one undoable edit of topology.events naming what the engine resolves to the same
    // link or switch, drawn apart on the canvas and listed in the events panel. A canvas edit keeps them.
    void links_and_switches_fail_and_degrade_from_the_canvas() {
        TopologyEditor editor(presets);
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 2}}, {}, presets));
        const TopoDoc& d = editor.doc();
        std::vector<TopoLink> fabric_links;
        for (const TopoLink& l : d.links)
            if (d.box(l.a)->kind == BoxKind::network_switch && d.box(l.b)->kind == BoxKind::network_switch) fabric_links.push_back(l);
        QCOMPARE(fabric_links.size(), size_t(4));
        const TopoLink failed = fabric_links[0], slowed = fabric_links[1];
        QString why;
        QVERIFY2(editor.add_fabric_event(0, failed.id, EventAction::fail, "200us", "", &why), qPrintable(why));
        QVERIFY2(editor.add_fabric_event(0, slowed.id, EventAction::degrade, "1ms", "200Gbps", &why), qPrintable(why));
        uint64_t spine = 0, server = 0;
        for (const TopoBox& b : d.boxes) {
            if (b.kind == BoxKind::network_switch && b.tier == 2) spine = b.id;
            if (b.kind == BoxKind::server) server = b.id;
        }
        QVERIFY2(editor.add_fabric_event(spine, 0, EventAction::fail, "0us", "", &why), qPrintable(why));
        // What events cannot name, and what does not read, is refused with the reason.
        QVERIFY(!editor.add_fabric_event(server, 0, EventAction::fail, "0us", "", &why));
        QVERIFY(!editor.add_fabric_event(0, failed.id, EventAction::fail, "soon", "", &why));
        QVERIFY(why.contains("soon"));
        QVERIFY(!editor.add_fabric_event(0, failed.id, EventAction::degrade, "0us", "fast", &why));

        const nlohmann::json scenario = editor.document()->scenario();
        const nlohmann::json& events = scenario["topology"]["events"];
        QCOMPARE(events.size(), size_t(3));
        QCOMPARE(events[0]["state"].get<std::string>(), std::string("down"));
        QCOMPARE(events[1]["rate"].get<std::string>(), std::string("200Gbps"));
        // The engine resolves each to the item the canvas showed.
        const nlohmann::json full = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", scenario["topology"]}};
        const LoadedScenario loaded = load_scenario_document(full, "events", {}, presets, LoadOptions{false});
        const Fabric f = build_fabric(loaded.base.topology);
        const std::vector<FabricEvent> resolved = resolve_fabric_events(loaded.base.topology.events, f, {});
        QCOMPARE(resolved.size(), size_t(3));
        auto ends = [&](const TopoLink& l) { return std::set<int64_t>{d.box(l.a)->fabric_node, d.box(l.b)->fabric_node}; };
        for (const FabricEvent& ev : resolved) {
            if (ev.at_ps == 200'000'000) QCOMPARE((std::set<int64_t>{f.link_a[ev.links[0]], f.link_b[ev.links[0]]}), ends(failed));
            if (ev.at_ps == 1'000'000'000) QCOMPARE((std::set<int64_t>{f.link_a[ev.links[0]], f.link_b[ev.links[0]]}), ends(slowed));
            if (ev.at_ps == 0) QCOMPARE(ev.links.size(), size_t(2));  // the spine's two links
        }
        // Drawn apart, and listed.
        QCOMPARE(editor.scene()->link_item(failed.id)->mark(), LinkItem::Mark::failed);
        QCOMPARE(editor.scene()->link_item(slowed.id)->mark(), LinkItem::Mark::degraded);
        QCOMPARE(editor.scene()->link_item(fabric_links[2].id)->mark(), LinkItem::Mark::none);
        QVERIFY(editor.scene()->box_item(spine)->failed());
        QCOMPARE(editor.events_list()->count(), 3);
        QVERIFY(editor.events_list()->item(0)->text().endsWith("down at 200us"));
        // Undo takes the last one back; redo returns it.
        editor.undo_stack()->undo();
        QCOMPARE(editor.document()->scenario()["topology"]["events"].size(), size_t(2));
        QVERIFY(!editor.scene()->box_item(spine)->failed());
        editor.undo_stack()->redo();
        QCOMPARE(editor.events_list()->count(), 3);
        // Moving a box keeps them; so does an edit that changes the fabric.
        editor.edit("Add switch", [](TopoDoc& doc) { add_box(doc, BoxKind::network_switch, 1, 1, {900, 100}); });
        QCOMPARE(editor.document()->scenario()["topology"]["events"].size(), size_t(3));
        editor.undo_stack()->undo();
        // The panel removes one, undoably.
        editor.remove_fabric_event(0);
        QCOMPARE(editor.document()->scenario()["topology"]["events"].size(), size_t(2));
        QCOMPARE(editor.scene()->link_item(failed.id)->mark(), LinkItem::Mark::none);
        editor.undo_stack()->undo();
        QCOMPARE(editor.scene()->link_item(failed.id)->mark(), LinkItem::Mark::failed);
    }

    void palette_drop_link_drag_delete_undo_redo() {
        TopologyEditor editor(presets);
        editor.resize(1000, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        auto drop = [&](const char* kind, QPointF at) {
            QMimeData mime;
            mime.setData(kPaletteMime, kind);
            QGraphicsSceneDragDropEvent e(QEvent::GraphicsSceneDrop);
            e.setMimeData(&mime);
            e.setScenePos(at);
            e.setProposedAction(Qt::CopyAction);
            QCoreApplication::sendEvent(editor.scene(), &e);
        };
        drop("server:8", {0, 300});
        drop("switch:1", {40, 100});
        QCOMPARE(editor.doc().boxes.size(), size_t(2));
        QCOMPARE(editor.doc().host_count(), size_t(8));
        QCOMPARE(editor.doc().boxes[1].pos, QPointF(40, 100));  // on the grid
        editor.view()->fit();
        QCoreApplication::processEvents();

        // Drag from the server's NIC 3 to the switch: one link, on NIC 3.
        const TopoBox server = editor.doc().boxes[0], leaf = editor.doc().boxes[1];
        const QPoint from = editor.view()->mapFromScene(port_position(server, 3, {}));
        const QPoint to = editor.view()->mapFromScene(leaf.pos + QPointF(20, 13));
        QTest::mousePress(editor.view()->viewport(), Qt::LeftButton, {}, from);
        QTest::mouseMove(editor.view()->viewport(), to);
        QTest::mouseRelease(editor.view()->viewport(), Qt::LeftButton, {}, to);
        QCOMPARE(editor.doc().links.size(), size_t(1));
        QCOMPARE(editor.doc().links[0].port_a, 3);
        QCOMPARE(editor.doc().links[0].b, leaf.id);

        // A second link asked for on the same NIC takes the nearest free one; servers never link to servers.
        QString why;
        TopoDoc d = editor.doc();
        QVERIFY(add_link(d, server.id, 3, leaf.id, -1, &why));
        QCOMPARE(d.links.back().port_a, 2);
        const uint64_t other = add_box(d, BoxKind::server, 0, 8, {});
        QCOMPARE(add_link(d, server.id, 0, other, 0, &why), uint64_t(0));
        QVERIFY(why.contains("switches"));

        // Delete the leaf: its link goes with it; undo brings both back; redo removes them again.
        editor.scene()->select({leaf.id});
        editor.delete_selection();
        QCOMPARE(editor.doc().boxes.size(), size_t(1));
        QCOMPARE(editor.doc().links.size(), size_t(0));
        editor.undo_stack()->undo();
        QCOMPARE(editor.doc().boxes.size(), size_t(2));
        QCOMPARE(editor.doc().links.size(), size_t(1));
        QVERIFY(editor.scene()->link_item(editor.doc().links[0].id));
        editor.undo_stack()->redo();
        QCOMPARE(editor.doc().boxes.size(), size_t(1));
        QVERIFY(editor.scene()->items().size() == 1);
        editor.undo_stack()->undo();
        editor.undo_stack()->undo();  // the link
        QCOMPARE(editor.doc().links.size(), size_t(0));
    }

    void a_link_is_picked_a_few_pixels_off_its_line_and_counts_read_right() {
        TopologyEditor editor(presets);
        editor.resize(1000, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 1}, {"spines", 1}, {"hosts_per_leaf", 1}}, {}, presets));
        editor.view()->fit();
        QCoreApplication::processEvents();
        // The leaf-spine link: clicked 3 screen pixels beside its middle, at the fitted zoom and zoomed out.
        const TopoLink* uplink = nullptr;
        for (const TopoLink& l : editor.doc().links) {
            const TopoBox* a = nullptr;
            for (const TopoBox& b : editor.doc().boxes) if (b.id == l.a || b.id == l.b) a = b.kind == BoxKind::network_switch && b.tier == 2 ? &b : a;
            if (a) uplink = &l;
        }
        QVERIFY(uplink);
        const uint64_t id = uplink->id;
        for (double zoom : {1.0, 0.25}) {
            editor.view()->scale(zoom, zoom);
            QCoreApplication::processEvents();
            LinkItem* item = editor.scene()->link_item(id);
            QVERIFY(item);
            const QPoint mid = editor.view()->mapFromScene(item->line().center());
            const QPointF dir = item->line().p2() - item->line().p1();
            const double len = std::hypot(dir.x(), dir.y());
            const QPoint off = mid + QPoint(int(std::lround(-dir.y() / len * 3)), int(std::lround(dir.x() / len * 3)));
            editor.scene()->clearSelection();
            QTest::mouseClick(editor.view()->viewport(), Qt::LeftButton, {}, off);
            QVERIFY2(editor.scene()->selected_links() == std::set<uint64_t>{id}, qPrintable(QString("zoom %1").arg(zoom)));
        }
        QVERIFY2(editor.selection_text() == "Selected: 0 boxes, 1 link", qPrintable(editor.selection_text()));
        editor.delete_selection();
        QCOMPARE(editor.undo_stack()->undoText(), QString("Delete 1 item"));
        editor.undo_stack()->undo();
        QCOMPARE(editor.undo_stack()->redoText(), QString("Delete 1 item"));
    }

    void delete_above_ten_items_asks_first() {
        TopologyEditor editor(presets);
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}, {}, presets));
        int asked = -1;
        bool answer = false;
        editor.confirm_delete = [&](int n) {
            asked = n;
            return answer;
        };
        std::set<uint64_t> all;
        for (const TopoBox& b : editor.doc().boxes) all.insert(b.id);
        editor.scene()->select(all);
        editor.delete_selection();
        QCOMPARE(asked, int(all.size()));
        QCOMPARE(editor.doc().boxes.size(), all.size());  // declined: nothing deleted
        answer = true;
        editor.delete_selection();
        QCOMPARE(editor.doc().boxes.size(), size_t(0));
        // Ten or fewer are deleted without asking.
        editor.undo_stack()->undo();
        asked = -1;
        editor.scene()->select({editor.doc().boxes[0].id, editor.doc().boxes[1].id});
        editor.delete_selection();
        QCOMPARE(asked, -1);
        QCOMPARE(editor.doc().boxes.size(), all.size() - 2);
    }

    void middle_button_pan_moves_the_view_not_the_boxes() {
        TopologyEditor editor(presets);
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 4}, {"spines", 2}, {"hosts_per_leaf", 8}}, {}, presets));
        editor.resize(500, 400);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.view()->zoom_by(4);  // zoomed in, so there is room to scroll
        QCoreApplication::processEvents();
        std::set<uint64_t> all;
        for (const TopoBox& b : editor.doc().boxes) all.insert(b.id);
        editor.scene()->select(all);  // even with every box selected, a pan is not a move
        const TopoDoc before = editor.doc();
        const int undo_before = editor.undo_stack()->count();
        QSignalSpy changed(&editor, &TopologyEditor::changed);
        QWidget* viewport = editor.view()->viewport();
        // Start on a box, as a user panning over a dense fabric does.
        const QPoint start = editor.view()->mapFromScene(before.boxes[0].pos + QPointF(10, 10));
        const int h = editor.view()->horizontalScrollBar()->value(), v = editor.view()->verticalScrollBar()->value();
        QTest::mousePress(viewport, Qt::MiddleButton, {}, start);
        QTest::mouseMove(viewport, start + QPoint(-60, -40));
        QTest::mouseMove(viewport, start + QPoint(-120, -80));
        QTest::mouseRelease(viewport, Qt::MiddleButton, {}, start + QPoint(-120, -80));
        QCoreApplication::processEvents();
        QCOMPARE(editor.undo_stack()->count(), undo_before);
        QCOMPARE(changed.count(), 0);
        for (size_t i = 0; i < before.boxes.size(); ++i) QCOMPARE(editor.doc().boxes[i].pos, before.boxes[i].pos);
        QVERIFY2(editor.view()->horizontalScrollBar()->value() != h || editor.view()->verticalScrollBar()->value() != v, "the view did not pan");
    }

    void a_server_linked_in_part_is_refused_before_the_run() {
        // Two 8-GPU servers under one leaf: the first with all its NICs linked, the second with 2 of 8.
        TopoDoc d;
        const uint64_t leaf = add_box(d, BoxKind::network_switch, 1, 0, {0, 0});
        const uint64_t full = add_box(d, BoxKind::server, 0, 8, {0, 200}), part = add_box(d, BoxKind::server, 0, 8, {400, 200});
        QString why;
        for (int nic = 0; nic < 8; ++nic) QVERIFY2(add_link(d, full, nic, leaf, -1, &why), qPrintable(why));
        for (int nic = 0; nic < 2; ++nic) QVERIFY2(add_link(d, part, nic, leaf, -1, &why), qPrintable(why));
        nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", doc_to_topology(d)},
                              {"workload", {{"kind", "flows"}, {"flows", {{{"src", 0}, {"dst", 9}, {"size", "1MB"}}}}}}};
        const std::vector<std::string> errors = validate_document(doc, ".", presets);
        QVERIFY(!errors.empty());
        QVERIFY2(errors[0].find("6 of its 8 GPUs have no network link") != std::string::npos, errors[0].c_str());
        // Every NIC linked: no complaint.
        for (int nic = 2; nic < 8; ++nic) QVERIFY2(add_link(d, part, nic, leaf, -1, &why), qPrintable(why));
        doc["topology"] = doc_to_topology(d);
        const std::vector<std::string> fine = validate_document(doc, ".", presets);
        QVERIFY2(fine.empty(), fine.empty() ? "" : fine[0].c_str());
    }

    void the_generate_dialog_shows_only_the_chosen_generators_fields() {
        GeneratorDialog dialog;
        const QStringList fields = {"gpus", "gpus_per_server", "tiers", "k", "leaves", "spines", "hosts"};
        const std::map<QString, QStringList> shown = {{"rail-optimized", {"gpus", "gpus_per_server", "tiers"}},
                                                      {"fat-tree", {"k"}},
                                                      {"leaf-spine", {"leaves", "spines", "hosts"}},
                                                      {"single-switch", {"hosts"}}};
        for (const auto& [generator, own] : shown) {
            dialog.kind()->setCurrentText(generator);
            for (const QString& f : fields) QVERIFY2(dialog.shows(f) == own.contains(f), qPrintable(generator + ": " + f));
            QCOMPARE(dialog.generator()["generator"].get<std::string>(), generator.toStdString());
        }
        dialog.kind()->setCurrentText("fat-tree");
        const nlohmann::json g = dialog.generator();
        QCOMPARE(g["k"].get<int>(), 4);
        QVERIFY(!g.contains("gpus") && !g.contains("leaves"));
    }

    void copy_paste_and_duplicate_keep_inner_links() {
        TopologyEditor editor(presets);
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 2}}, {}, presets));
        const size_t boxes = editor.doc().boxes.size(), links = editor.doc().links.size();
        // A leaf with its two hosts: three boxes, two links among them (its spine uplink stays behind).
        std::set<uint64_t> pick;
        for (const TopoBox& b : editor.doc().boxes)
            if (b.name == "leaf0") pick.insert(b.id);
        for (const TopoLink& l : editor.doc().links) {
            const TopoBox* a = editor.doc().box(l.a);
            const TopoBox* b = editor.doc().box(l.b);
            if (b->name == "leaf0" && a->kind == BoxKind::server) pick.insert(a->id);
        }
        QCOMPARE(pick.size(), size_t(3));
        editor.scene()->select(pick);
        editor.copy_selection();
        editor.paste_clipboard();
        QCOMPARE(editor.doc().boxes.size(), boxes + 3);
        QCOMPARE(editor.doc().links.size(), links + 2);
        // Pasted boxes have fresh unique names and their links join the copies, not the originals.
        std::set<QString> names;
        for (const TopoBox& b : editor.doc().boxes) names.insert(b.name);
        QCOMPARE(names.size(), editor.doc().boxes.size());
        for (size_t i = links; i < editor.doc().links.size(); ++i) {
            QVERIFY(!pick.count(editor.doc().links[i].a));
            QVERIFY(!pick.count(editor.doc().links[i].b));
        }
        editor.scene()->select(pick);
        editor.duplicate_selection();
        QCOMPARE(editor.doc().boxes.size(), boxes + 6);
        QCOMPARE(editor.doc().links.size(), links + 4);
        QVERIFY(editor.doc().generator.is_null());  // edited: saved as explicit nodes and links
    }

    void generators_give_editable_tiered_graphs() {
        TopologyEditor editor(presets);
        editor.generate({{"generator", "fat-tree"}, {"k", 4}});
        QCOMPARE(editor.doc().host_count(), size_t(16));
        QCOMPARE(editor.doc().switch_count(), size_t(20));
        QCOMPARE(editor.doc().links.size(), size_t(48));
        QVERIFY(!editor.scene()->collapsed());
        // Tiered: cores above aggregation above edge above hosts.
        std::map<int, double> y;
        for (const TopoBox& b : editor.doc().boxes) y[b.kind == BoxKind::server ? 0 : b.tier] = b.pos.y();
        QVERIFY(y[3] < y[2] && y[2] < y[1] && y[1] < y[0]);
        editor.undo_stack()->undo();
        QCOMPARE(editor.doc().boxes.size(), size_t(0));
        // Bad parameters give the engine's message.
        QVERIFY_THROWS_EXCEPTION(InputError, editor.generate({{"generator", "fat-tree"}, {"k", 5}}));
    }

    void large_fabrics_collapse_into_groups() {
        TopologyEditor editor(presets);
        editor.generate({{"generator", "fat-tree"}, {"k", 16}});
        QCOMPARE(editor.doc().host_count(), size_t(1024));
        QVERIFY(editor.scene()->collapsed());
        QVERIFY(editor.scene()->items().size() < 200);  // pods and tiers, not 1,344 boxes
        const CollapsedView v = collapse(editor.doc());
        size_t hosts = 0, switches = 0, links = 0;
        for (const CollapsedGroup& g : v.groups) {
            hosts += g.hosts;
            switches += g.switches;
        }
        for (const CollapsedLink& l : v.links) links += l.links;
        QCOMPARE(hosts, size_t(1024));
        QCOMPARE(switches, size_t(320));
        QVERIFY(links > 0 && links <= editor.doc().links.size());
        editor.generate({{"generator", "fat-tree"}, {"k", 8}});
        QVERIFY(!editor.scene()->collapsed());
    }

    void link_properties_are_validated() {
        TopologyEditor editor(presets);
        editor.set_doc(doc_from_topology({{"generator", "single-switch"}, {"hosts", 2}}, {}, presets));
        QSignalSpy messages(&editor, &TopologyEditor::message);
        editor.scene()->clearSelection();
        editor.scene()->link_item(editor.doc().links[0].id)->setSelected(true);
        auto* rate = editor.findChildren<QLineEdit*>()[0];
        rate->setText("fast");
        emit rate->editingFinished();
        QCOMPARE(messages.count(), 1);
        QVERIFY(messages[0][0].toString().contains("fast"));
        QCOMPARE(editor.doc().links[0].rate, QString("100Gbps"));
        rate->setText("200Gbps");
        emit rate->editingFinished();
        QCOMPARE(editor.doc().links[0].rate, QString("200Gbps"));
        QVERIFY(editor.doc().generator.is_null());
        // The link just edited stays selected, so the next field edits it too.
        QCOMPARE(editor.scene()->selected_links(), std::set<uint64_t>{editor.doc().links[0].id});
    }

    // A drop adds a box where it lands and leaves the view where it was: the canvas does not jump.
    void a_drop_leaves_the_view_where_it_was() {
        TopologyEditor editor(presets);
        editor.resize(1000, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.set_doc(doc_from_topology({{"generator", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}, {}, presets));
        QCoreApplication::processEvents();
        QGraphicsView* view = editor.view();
        const QPoint corner = view->viewport()->rect().topLeft() + QPoint(30, 30);
        const QPointF before_centre = view->mapToScene(view->viewport()->rect().center());
        // Near the viewport's corner, outside every box so far: the scene grows.
        const QPointF at = view->mapToScene(corner);
        QMimeData mime;
        mime.setData(kPaletteMime, "switch:1");
        QGraphicsSceneDragDropEvent e(QEvent::GraphicsSceneDrop);
        e.setMimeData(&mime);
        e.setScenePos(at);
        e.setProposedAction(Qt::CopyAction);
        QCoreApplication::sendEvent(editor.scene(), &e);
        QCoreApplication::processEvents();
        QCOMPARE(editor.doc().switch_count(), size_t(5));
        const QPointF after_centre = view->mapToScene(view->viewport()->rect().center());
        QVERIFY2(QLineF(before_centre, after_centre).length() < 1.0,
                 qPrintable(QString("the view moved by (%1, %2)").arg(after_centre.x() - before_centre.x()).arg(after_centre.y() - before_centre.y())));
        // The new box is where it was dropped (snapped to the grid), still on screen.
        QVERIFY(view->viewport()->rect().contains(view->mapFromScene(editor.doc().boxes.back().pos)));
    }

    // One gesture connects a server: Shift+drag from any of its NICs to a switch links every free NIC there;
    // Ctrl+Shift+drag links NIC r to the r-th switch of that row, left to right (rails).
    void one_gesture_links_every_nic_of_a_server() {
        TopologyEditor editor(presets);
        editor.resize(1200, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.edit("Build", [](TopoDoc& d) {
            add_box(d, BoxKind::server, 0, 8, {300, 400});
            for (int i = 7; i >= 0; --i) add_box(d, BoxKind::network_switch, 1, 1, {i * 120.0, 100});  // created right to left
        });
        editor.view()->fit();
        QCoreApplication::processEvents();
        const TopoBox server = editor.doc().boxes[0];
        auto leaf_at = [&](int column) {
            for (const TopoBox& b : editor.doc().boxes)
                if (b.kind != BoxKind::server && b.pos.x() == column * 120.0) return b;
            return TopoBox{};
        };
        auto drag = [&](const TopoBox& to, Qt::KeyboardModifiers mods) {
            const QPoint a = editor.view()->mapFromScene(port_position(server, 0, {}));
            const QPoint b = editor.view()->mapFromScene(to.pos + QPointF(20, 13));
            QTest::mousePress(editor.view()->viewport(), Qt::LeftButton, mods, a);
            QTest::mouseMove(editor.view()->viewport(), b);
            QTest::mouseRelease(editor.view()->viewport(), Qt::LeftButton, mods, b);
        };
        drag(leaf_at(5), Qt::ShiftModifier);
        QCOMPARE(editor.doc().links.size(), size_t(8));
        std::set<int> nics;
        for (const TopoLink& l : editor.doc().links) {
            QCOMPARE(l.b, leaf_at(5).id);
            nics.insert(l.port_a);
        }
        QCOMPARE(nics.size(), size_t(8));
        QCOMPARE(editor.scene()->selected_links().size(), size_t(8));  // the new links, highlighted
        QCOMPARE(editor.undo_stack()->undoText(), QString("Link 8 NICs"));
        editor.undo_stack()->undo();  // one gesture, one undo
        QVERIFY(editor.doc().links.empty());

        drag(leaf_at(5), Qt::ShiftModifier | Qt::ControlModifier);
        QCOMPARE(editor.doc().links.size(), size_t(8));
        for (const TopoLink& l : editor.doc().links) QCOMPARE(l.b, leaf_at(l.port_a).id);
        // Every NIC taken: nothing more, said.
        QSignalSpy messages(&editor, &TopologyEditor::message);
        drag(leaf_at(0), Qt::ShiftModifier);
        QCOMPARE(editor.doc().links.size(), size_t(8));
        QVERIFY(messages.count() == 1 && messages[0][0].toString().contains("every NIC already has a link"));
        // Fewer switches in the row than NICs: rails refused, naming both counts.
        editor.undo_stack()->undo();
        editor.edit("Drop two leaves", [&](TopoDoc& d) { remove(d, {leaf_at(6).id, leaf_at(7).id}, {}); });
        drag(leaf_at(0), Qt::ShiftModifier | Qt::ControlModifier);
        QVERIFY(editor.doc().links.empty());
        QVERIFY2(messages.back()[0].toString().contains("8 NICs but there are 6 tier-1 switches"), qPrintable(messages.back()[0].toString()));
    }
};

QTEST_MAIN(TestTopologyEditor)
#include "test_topology_editor.moc"
