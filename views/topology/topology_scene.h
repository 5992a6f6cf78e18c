#pragma once
// The canvas of the topology editor: one item per box and per link of a TopoDoc (or, above
// kCollapseHosts hosts, one per group), kept in step with the document by sync(). The scene never edits the
// document itself: it asks (signals) and the editor pushes an undoable command.
#include <map>
#include <set>
#include <unordered_map>

#include <QGraphicsItem>
#include <QGraphicsLineItem>
#include <QGraphicsScene>
#include <QGraphicsView>

#include "views/topology/fabric_event_edit.h"
#include "views/topology/job_marks.h"
#include "views/topology/topology_doc.h"

namespace orrery::views {

inline constexpr double kGrid = 10.0;

class TopologyScene;

class BoxItem : public QGraphicsItem {
public:
    BoxItem(TopologyScene* scene, const TopoBox& box);
    uint64_t id() const { return box_.id; }
    const TopoBox& box() const { return box_; }
    void set_box(const TopoBox& box);
    QRectF boundingRect() const override;
    void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
    // The NIC (server) under `scene_point`, -1 for a switch's connector, -2 when not on a port.
    int port_at(QPointF scene_point) const;
    // A switch the fabric's events take down: a red, dashed outline; `events` in its tooltip.
    void set_failed(bool failed, const QString& events);
    bool failed() const { return failed_; }

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    TopologyScene* owner_;
    TopoBox box_;
    bool failed_ = false;
};

class LinkItem : public QGraphicsLineItem {
public:
    LinkItem(const TopoLink& link);
    uint64_t id() const { return link_.id; }
    const TopoLink& link() const { return link_; }
    void set_link(const TopoLink& link);
    // Drawn apart when the fabric's events take it down (red, dashed) or slow it (orange, dashed); `events`
    // says which, in its tooltip.
    enum class Mark { none, failed, degraded };
    void set_mark(Mark mark, const QString& events);
    Mark mark() const { return mark_; }
    // A selected link is drawn highlighted along its whole length, not with Qt's dashed bounding box.
    void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
    QRectF boundingRect() const override;
    // Picked within kHitPixels / 2 screen pixels of the line, at any zoom (a 1.5-px line alone is hard to hit).
    QPainterPath shape() const override;
    static constexpr double kHitPixels = 8;

private:
    // Scene units per screen pixel in the scene's first view (1 without a view).
    double scene_per_pixel() const;
    TopoLink link_;
    Mark mark_ = Mark::none;
};

class TopologyScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit TopologyScene(QObject* parent = nullptr);
    // Makes the items match `doc`: new boxes and links appear, removed ones go, changed ones update.
    void sync(const TopoDoc& doc);
    // A new document gets a scene rect fitted to it again (edits only ever grow it: see keep_room).
    void forget_room();
    bool collapsed() const { return collapsed_; }
    // Above kCollapseHosts hosts the canvas shows groups unless asked for every box (slower, editable).
    void set_show_every_box(bool on) { show_every_box_ = on; }
    bool show_every_box() const { return show_every_box_; }
    std::set<uint64_t> selected_boxes() const;
    std::set<uint64_t> selected_links() const;
    void select(const std::set<uint64_t>& boxes, const std::set<uint64_t>& links = {});
    BoxItem* box_item(uint64_t id) const;
    LinkItem* link_item(uint64_t id) const;
    void box_moved(uint64_t id);  // called by BoxItem while it moves: its links follow
    const TopoDoc& doc() const { return doc_; }
    // The fabric's events drawn on the links and switches they touch (fabric_event_edit.h).
    void set_event_marks(const EventMarks& marks);
    // A mix's jobs: each server's GPUs drawn in the colour of the job that holds them (job_marks.h).
    void set_job_marks(const JobMarks& marks);
    // The job holding GPU `gpu` of server box `box`, -1 none.
    int job_at(uint64_t box, int gpu) const;

signals:
    // A right click on a box or a link (0: none), at `screen_pos`.
    void contextRequested(uint64_t box, uint64_t link, QPoint screen_pos);
    void linkRequested(uint64_t a, int port_a, uint64_t b, int port_b);
    // Shift held at the drop: every free NIC of the server to that switch; Ctrl+Shift: each NIC to its rail's switch.
    void linkEveryNicRequested(uint64_t server, uint64_t target, bool rails);
    void moveFinished(std::map<uint64_t, QPointF> positions);
    void addRequested(QString palette_kind, QPointF scene_pos);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* e) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent* e) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* e) override;
    void contextMenuEvent(QGraphicsSceneContextMenuEvent* e) override;
    void dragEnterEvent(QGraphicsSceneDragDropEvent* e) override;
    void dragMoveEvent(QGraphicsSceneDragDropEvent* e) override;
    void dropEvent(QGraphicsSceneDragDropEvent* e) override;

private:
    void place_link(LinkItem* item);
    void build_collapsed(const TopoDoc& doc);
    void keep_room();
    QRectF room_;
    TopoDoc doc_;
    bool collapsed_ = false;
    bool show_every_box_ = false;
    std::unordered_map<uint64_t, BoxItem*> boxes_;
    std::unordered_map<uint64_t, LinkItem*> links_;
    std::unordered_map<uint64_t, std::vector<uint64_t>> links_of_box_;
    QGraphicsLineItem* drag_line_ = nullptr;
    uint64_t drag_box_ = 0;
    int drag_port_ = -2;
    EventMarks marks_;
    JobMarks jobs_;
};

// Wheel zooms at the cursor, the middle button or Space + drag pans, a left drag on empty canvas selects
// with a rubber band; accepts palette drops.
class TopologyView : public QGraphicsView {
    Q_OBJECT
public:
    explicit TopologyView(TopologyScene* scene, QWidget* parent = nullptr);
    void fit();                 // now, and again on the next resize until the user zooms or pans
    void zoom_by(double factor);
    double zoom() const;

protected:
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void keyReleaseEvent(QKeyEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    bool panning_ = false;
    bool fit_on_resize_ = false;
    bool middle_panning_ = false;  // the middle button is down: the view scrolls, the scene sees nothing
    QPoint middle_last_;
};

inline constexpr const char* kPaletteMime = "application/x-orrery-palette";

}  // namespace orrery::views
