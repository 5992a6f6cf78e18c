#include "views/topology/topology_scene.h"

#include <cmath>

#include <QApplication>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsView>
#include <QPainterPathStroker>
#include <QKeyEvent>
#include <QResizeEvent>
#include <QMimeData>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

namespace orrery::views {
namespace {

QColor box_color(const TopoBox& b) {
    if (b.kind == BoxKind::server) return b.gpus > 1 ? QColor(0x4c, 0x8b, 0x5a) : QColor(0x5a, 0x7d, 0x9a);
    return b.tier == 1 ? QColor(0x3d, 0x6f, 0xb6) : b.tier == 2 ? QColor(0x7a, 0x52, 0xa8) : QColor(0xb0, 0x5a, 0x3a);
}

QColor link_color(const QString& rate) {
    // Faster links darker, so rails and uplinks of different rates read apart.
    if (rate.startsWith("400") || rate.startsWith("800")) return QColor(40, 40, 40);
    if (rate.startsWith("200")) return QColor(90, 90, 90);
    return QColor(140, 140, 140);
}

class GroupItem : public QGraphicsItem {
public:
    explicit GroupItem(const CollapsedGroup& g) : g_(g) { setPos(g.pos); setToolTip(tooltip()); }
    QRectF boundingRect() const override { return {0, 0, 180, 56}; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        TopoBox probe;
        probe.kind = g_.tier == 0 ? BoxKind::server : BoxKind::network_switch;
        probe.tier = g_.tier;
        probe.gpus = 8;
        p->setBrush(box_color(probe).lighter(130));
        p->setPen(QPen(box_color(probe), 2));
        p->drawRoundedRect(boundingRect().adjusted(1, 1, -1, -1), 8, 8);
        p->setPen(Qt::black);
        p->drawText(boundingRect().adjusted(6, 4, -6, -4), Qt::AlignCenter, g_.label + "\n" + counts());
    }

private:
    QString counts() const {
        if (g_.tier == 0) return QString("%1 servers, %2 hosts").arg(g_.servers).arg(g_.hosts);
        return QString("%1 switches").arg(g_.switches);
    }
    QString tooltip() const { return g_.label + ": " + counts(); }
    CollapsedGroup g_;
};

}  // namespace

// ---- BoxItem ------------------------------------------------------------------------------------------
BoxItem::BoxItem(TopologyScene* scene, const TopoBox& box) : owner_(scene), box_(box) {
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setPos(box.pos);
    setZValue(1);
    setToolTip(box.name);
}

void BoxItem::set_box(const TopoBox& box) {
    const bool resized = box_size(box) != box_size(box_);
    if (resized) prepareGeometryChange();
    box_ = box;
    setToolTip(box.name);
    if (pos() != box.pos) setPos(box.pos);
    update();
}

QRectF BoxItem::boundingRect() const {
    const QSizeF s = box_size(box_);
    return {-3, -3, s.width() + 6, s.height() + 6};
}

void BoxItem::paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget*) {
    const QSizeF s = box_size(box_);
    const double lod = o->levelOfDetailFromTransform(p->worldTransform());
    const QColor c = box_color(box_);
    p->setBrush(isSelected() ? c.lighter(150) : c);
    p->setPen(isSelected() ? QPen(Qt::yellow, 2) : QPen(c.darker(140), 1));
    if (lod < 0.25) {
        p->drawRect(QRectF(QPointF(0, 0), s));
        return;
    }
    p->drawRoundedRect(QRectF(QPointF(0, 0), s), 4, 4);
    p->setPen(Qt::white);
    if (lod > 0.45) {
        QFont f = p->font();
        f.setPointSizeF(7);
        p->setFont(f);
        p->drawText(QRectF(0, s.height() * 0.35, s.width(), s.height() * 0.65), Qt::AlignCenter, box_.name);
    }
    if (failed_) {
        QPen red(QColor(200, 30, 30), 2.5, Qt::DashLine);
        red.setCosmetic(true);
        p->setPen(red);
        p->setBrush(Qt::NoBrush);
        p->drawRoundedRect(QRectF(QPointF(-2, -2), s + QSizeF(4, 4)), 5, 5);
    }
    p->setPen(Qt::NoPen);
    p->setBrush(QColor(250, 220, 90));
    if (box_.kind == BoxKind::server) {
        for (int g = 0; g < box_.gpus; ++g) {
            const int job = owner_->job_at(box_.id, g);  // a mix's jobs: each GPU in its job's colour, larger
            p->setBrush(job >= 0 ? job_color(job) : QColor(250, 220, 90));
            const double r = job >= 0 ? 4.5 : 3.5;
            p->drawEllipse(port_position(box_, g, {}) - pos(), r, r);
        }
    } else {
        p->drawEllipse(QPointF(s.width() - 6, s.height() / 2), 3.5, 3.5);  // the connector: drag from here
    }
}

int BoxItem::port_at(QPointF scene_point) const {
    const QPointF local = scene_point - pos();
    if (box_.kind == BoxKind::server) {
        for (int g = 0; g < box_.gpus; ++g)
            if (QLineF(port_position(box_, g, {}) - pos(), local).length() < 6) return g;
        return -2;
    }
    const QSizeF s = box_size(box_);
    return QLineF(QPointF(s.width() - 6, s.height() / 2), local).length() < 7 ? -1 : -2;
}

QVariant BoxItem::itemChange(GraphicsItemChange change, const QVariant& value) {
    if (change == ItemPositionChange && !(QApplication::keyboardModifiers() & Qt::AltModifier)) {
        const QPointF p = value.toPointF();  // snap to the grid; Alt places freely
        return QPointF(std::round(p.x() / kGrid) * kGrid, std::round(p.y() / kGrid) * kGrid);
    }
    if (change == ItemPositionHasChanged) {
        box_.pos = value.toPointF();
        owner_->box_moved(box_.id);
    }
    return QGraphicsItem::itemChange(change, value);
}

void BoxItem::set_failed(bool failed, const QString& events) {
    failed_ = failed;
    setToolTip(events);
    update();
}

// ---- LinkItem -----------------------------------------------------------------------------------------
LinkItem::LinkItem(const TopoLink& link) : link_(link) {
    setFlags(ItemIsSelectable);
    setZValue(0);
    set_link(link);
}

void LinkItem::set_link(const TopoLink& link) {
    link_ = link;
    set_mark(mark_, {});
}

void LinkItem::set_mark(Mark mark, const QString& events) {
    mark_ = mark;
    QPen pen(mark == Mark::failed ? QColor(200, 30, 30) : mark == Mark::degraded ? QColor(235, 140, 20) : link_color(link_.rate), mark == Mark::none ? 1.5 : 2.5);
    if (mark != Mark::none) pen.setStyle(Qt::DashLine);
    pen.setCosmetic(true);
    setPen(pen);
    setToolTip(link_.rate + ", " + link_.delay + (events.isEmpty() ? QString() : "\n" + events));
}

double LinkItem::scene_per_pixel() const {
    if (!scene() || scene()->views().isEmpty()) return 1.0;
    const double scale = scene()->views().first()->transform().m11();
    return scale > 0 ? 1.0 / scale : 1.0;
}

QRectF LinkItem::boundingRect() const {
    const double half = std::max(4.0, kHitPixels / 2 * scene_per_pixel());
    return QGraphicsLineItem::boundingRect().adjusted(-half, -half, half, half);
}

QPainterPath LinkItem::shape() const {
    QPainterPath path(line().p1());
    path.lineTo(line().p2());
    QPainterPathStroker stroker;
    stroker.setWidth(kHitPixels * scene_per_pixel());
    stroker.setCapStyle(Qt::RoundCap);
    return stroker.createStroke(path);
}

void LinkItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    if (isSelected()) {
        QPen glow(QColor(250, 180, 40, 200), 6);
        glow.setCosmetic(true);
        glow.setCapStyle(Qt::RoundCap);
        p->setPen(glow);
        p->drawLine(line());
    }
    p->setPen(pen());
    p->drawLine(line());
}

// ---- TopologyScene ------------------------------------------------------------------------------------
TopologyScene::TopologyScene(QObject* parent) : QGraphicsScene(parent) { setItemIndexMethod(QGraphicsScene::BspTreeIndex); }

BoxItem* TopologyScene::box_item(uint64_t id) const {
    auto it = boxes_.find(id);
    return it == boxes_.end() ? nullptr : it->second;
}
LinkItem* TopologyScene::link_item(uint64_t id) const {
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second;
}

void TopologyScene::place_link(LinkItem* item) {
    const BoxItem* a = box_item(item->link().a);
    const BoxItem* b = box_item(item->link().b);
    if (!a || !b) return;
    const QPointF ca = a->sceneBoundingRect().center(), cb = b->sceneBoundingRect().center();
    item->setLine(QLineF(port_position(a->box(), item->link().port_a, cb), port_position(b->box(), item->link().port_b, ca)));
}

void TopologyScene::box_moved(uint64_t id) {
    auto it = links_of_box_.find(id);
    if (it == links_of_box_.end()) return;
    for (uint64_t l : it->second)
        if (LinkItem* item = link_item(l)) place_link(item);
}

void TopologyScene::build_collapsed(const TopoDoc& doc) {
    const CollapsedView v = collapse(doc);
    std::vector<QGraphicsItem*> items;
    for (const CollapsedGroup& g : v.groups) {
        auto* item = new GroupItem(g);
        addItem(item);
        items.push_back(item);
    }
    for (const CollapsedLink& l : v.links) {
        const QPointF a = items[l.a]->sceneBoundingRect().center(), b = items[l.b]->sceneBoundingRect().center();
        auto* line = addLine(QLineF(a, b), QPen(QColor(120, 120, 120), std::min(6.0, 1 + std::log2(double(l.links)) / 2)));
        line->setZValue(-1);
        line->setToolTip(QString("%1 links").arg(l.links));
    }
}

void TopologyScene::sync(const TopoDoc& doc) {
    const bool collapse_now = doc.host_count() > kCollapseHosts && !show_every_box_;
    if (collapse_now || collapsed_) {
        clear();
        boxes_.clear();
        links_.clear();
        links_of_box_.clear();
        drag_line_ = nullptr;
        collapsed_ = collapse_now;
        if (collapsed_) {
            doc_ = doc;
            build_collapsed(doc);
            return;
        }
    }
    doc_ = doc;
    std::set<uint64_t> keep_boxes, keep_links;
    for (const TopoBox& b : doc.boxes) {
        keep_boxes.insert(b.id);
        if (BoxItem* item = box_item(b.id)) {
            item->set_box(b);
        } else {
            auto* fresh = new BoxItem(this, b);
            addItem(fresh);
            boxes_[b.id] = fresh;
        }
    }
    for (auto it = boxes_.begin(); it != boxes_.end();) {
        if (!keep_boxes.count(it->first)) {
            delete it->second;
            it = boxes_.erase(it);
        } else {
            ++it;
        }
    }
    links_of_box_.clear();
    for (const TopoLink& l : doc.links) {
        keep_links.insert(l.id);
        LinkItem* item = link_item(l.id);
        if (item) {
            item->set_link(l);
        } else {
            item = new LinkItem(l);
            addItem(item);
            links_[l.id] = item;
        }
        links_of_box_[l.a].push_back(l.id);
        links_of_box_[l.b].push_back(l.id);
        place_link(item);
    }
    for (auto it = links_.begin(); it != links_.end();) {
        if (!keep_links.count(it->first)) {
            delete it->second;
            it = links_.erase(it);
        } else {
            ++it;
        }
    }
    keep_room();
}

void TopologyScene::forget_room() {
    room_ = QRectF();
    setSceneRect(QRectF());
}

void TopologyScene::keep_room() {
    // QGraphicsView re-centres a scene that fits in it whenever the scene's rect changes, so a box dropped beyond
    // the others made the whole canvas jump. The rect is therefore set, with a wide margin, and only grows.
    const QRectF items = itemsBoundingRect();
    if (items.isEmpty() || room_.contains(items.adjusted(-100, -100, 100, 100))) return;
    const double margin = std::max({items.width(), items.height(), 1500.0});
    room_ = room_.united(items.adjusted(-margin, -margin, margin, margin));
    setSceneRect(room_);
}

std::set<uint64_t> TopologyScene::selected_boxes() const {
    std::set<uint64_t> out;
    for (QGraphicsItem* i : selectedItems())
        if (auto* b = dynamic_cast<BoxItem*>(i)) out.insert(b->id());
    return out;
}
std::set<uint64_t> TopologyScene::selected_links() const {
    std::set<uint64_t> out;
    for (QGraphicsItem* i : selectedItems())
        if (auto* l = dynamic_cast<LinkItem*>(i)) out.insert(l->id());
    return out;
}
void TopologyScene::select(const std::set<uint64_t>& boxes, const std::set<uint64_t>& links) {
    clearSelection();
    for (uint64_t id : boxes)
        if (BoxItem* b = box_item(id)) b->setSelected(true);
    for (uint64_t id : links)
        if (LinkItem* l = link_item(id)) l->setSelected(true);
}

void TopologyScene::set_job_marks(const JobMarks& marks) {
    jobs_ = marks;
    for (auto& [id, item] : boxes_) {
        if (item->box().kind != BoxKind::server) continue;
        QStringList held;
        if (auto it = jobs_.gpu_job.find(id); it != jobs_.gpu_job.end())
            for (int g = 0; g < int(it->second.size()); ++g)
                if (it->second[size_t(g)] >= 0 && !held.contains(jobs_.names.value(it->second[size_t(g)])))
                    held << jobs_.names.value(it->second[size_t(g)]);
        item->setToolTip(held.isEmpty() ? QString() : "job " + held.join(", job "));
        item->update();
    }
}

int TopologyScene::job_at(uint64_t box, int gpu) const {
    auto it = jobs_.gpu_job.find(box);
    return it == jobs_.gpu_job.end() || gpu < 0 || size_t(gpu) >= it->second.size() ? -1 : it->second[size_t(gpu)];
}

void TopologyScene::set_event_marks(const EventMarks& marks) {
    marks_ = marks;
    for (auto& [id, item] : links_) {
        auto down = marks.failed_links.find(id), slow = marks.degraded_links.find(id);
        if (down != marks.failed_links.end()) item->set_mark(LinkItem::Mark::failed, down->second + (slow != marks.degraded_links.end() ? "; " + slow->second : ""));
        else if (slow != marks.degraded_links.end()) item->set_mark(LinkItem::Mark::degraded, slow->second);
        else if (item->mark() != LinkItem::Mark::none) item->set_mark(LinkItem::Mark::none, {});
    }
    for (auto& [id, item] : boxes_) {
        auto down = marks.failed_boxes.find(id);
        if (down != marks.failed_boxes.end()) item->set_failed(true, down->second);
        else if (item->failed()) item->set_failed(false, {});
    }
}

void TopologyScene::contextMenuEvent(QGraphicsSceneContextMenuEvent* e) {
    if (collapsed_) return;
    for (QGraphicsItem* i : items(e->scenePos())) {
        if (auto* b = dynamic_cast<BoxItem*>(i)) {
            emit contextRequested(b->id(), 0, e->screenPos());
            e->accept();
            return;
        }
        if (auto* l = dynamic_cast<LinkItem*>(i)) {
            emit contextRequested(0, l->id(), e->screenPos());
            e->accept();
            return;
        }
    }
}

void TopologyScene::mousePressEvent(QGraphicsSceneMouseEvent* e) {
    if (e->button() == Qt::LeftButton && !collapsed_) {
        for (QGraphicsItem* i : items(e->scenePos())) {
            auto* b = dynamic_cast<BoxItem*>(i);
            if (!b) continue;
            const int port = b->port_at(e->scenePos());
            if (port == -2) break;
            drag_box_ = b->id();
            drag_port_ = port;
            QPen pen(QColor(250, 180, 40), 2, Qt::DashLine);
            pen.setCosmetic(true);
            drag_line_ = addLine(QLineF(e->scenePos(), e->scenePos()), pen);
            drag_line_->setZValue(5);
            e->accept();
            return;
        }
    }
    QGraphicsScene::mousePressEvent(e);
}

void TopologyScene::mouseMoveEvent(QGraphicsSceneMouseEvent* e) {
    if (drag_line_) {
        drag_line_->setLine(QLineF(drag_line_->line().p1(), e->scenePos()));
        e->accept();
        return;
    }
    QGraphicsScene::mouseMoveEvent(e);
}

void TopologyScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* e) {
    if (drag_line_) {
        delete drag_line_;
        drag_line_ = nullptr;
        const TopoBox* from = doc_.box(drag_box_);
        const bool every_nic = (e->modifiers() & Qt::ShiftModifier) && from && from->kind == BoxKind::server;
        for (QGraphicsItem* i : items(e->scenePos()))
            if (auto* b = dynamic_cast<BoxItem*>(i)) {
                const int port = b->port_at(e->scenePos());
                if (every_nic) emit linkEveryNicRequested(drag_box_, b->id(), (e->modifiers() & Qt::ControlModifier) != 0);
                else emit linkRequested(drag_box_, drag_port_, b->id(), port >= 0 ? port : -1);
                break;
            }
        drag_box_ = 0;
        e->accept();
        return;
    }
    QGraphicsScene::mouseReleaseEvent(e);
    std::map<uint64_t, QPointF> moved;
    for (const auto& [id, item] : boxes_) {
        const TopoBox* b = doc_.box(id);
        if (b && b->pos != item->pos()) moved[id] = item->pos();
    }
    if (!moved.empty()) emit moveFinished(moved);
}

void TopologyScene::dragEnterEvent(QGraphicsSceneDragDropEvent* e) {
    if (e->mimeData()->hasFormat(kPaletteMime) && !collapsed_) e->acceptProposedAction();
}
void TopologyScene::dragMoveEvent(QGraphicsSceneDragDropEvent* e) {
    if (e->mimeData()->hasFormat(kPaletteMime) && !collapsed_) e->acceptProposedAction();
}
void TopologyScene::dropEvent(QGraphicsSceneDragDropEvent* e) {
    if (!e->mimeData()->hasFormat(kPaletteMime) || collapsed_) return;
    emit addRequested(QString::fromUtf8(e->mimeData()->data(kPaletteMime)), e->scenePos());
    e->acceptProposedAction();
}

// ---- TopologyView -------------------------------------------------------------------------------------
TopologyView::TopologyView(TopologyScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
    setDragMode(RubberBandDrag);
    setRenderHint(QPainter::Antialiasing, true);
    setTransformationAnchor(AnchorUnderMouse);
    setViewportUpdateMode(SmartViewportUpdate);
    setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
    setAcceptDrops(true);
    setBackgroundBrush(QColor(245, 245, 242));
}

void TopologyView::resizeEvent(QResizeEvent* e) {
    QGraphicsView::resizeEvent(e);
    if (fit_on_resize_) {
        fit();
        fit_on_resize_ = true;
    }
}

void TopologyView::fit() {
    fit_on_resize_ = true;
    const QRectF r = scene()->itemsBoundingRect();
    if (!r.isEmpty()) fitInView(r.adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
}

double TopologyView::zoom() const { return transform().m11(); }

void TopologyView::zoom_by(double factor) {
    fit_on_resize_ = false;
    const double z = zoom() * factor;
    if (z < 0.005 || z > 20) return;
    scale(factor, factor);
}

void TopologyView::wheelEvent(QWheelEvent* e) {
    zoom_by(std::pow(1.0015, e->angleDelta().y()));
    e->accept();
}

// The middle button pans by scrolling the view itself. (A synthetic left press handed to Qt's hand drag
// reached the scene too: boxes under the cursor moved with the pan, and its end recorded "Move 12 boxes" in
// the undo stack and marked the project modified.)
void TopologyView::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::MiddleButton) {
        fit_on_resize_ = false;
        middle_panning_ = true;
        middle_last_ = e->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        e->accept();
        return;
    }
    QGraphicsView::mousePressEvent(e);
}

void TopologyView::mouseMoveEvent(QMouseEvent* e) {
    if (middle_panning_) {
        const QPoint delta = e->position().toPoint() - middle_last_;
        middle_last_ = e->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        e->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(e);
}

void TopologyView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() == Qt::MiddleButton && middle_panning_) {
        middle_panning_ = false;
        viewport()->unsetCursor();
        e->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(e);
}

void TopologyView::keyPressEvent(QKeyEvent* e) {
    if (e->key() == Qt::Key_Space && !e->isAutoRepeat()) {
        panning_ = true;
        setDragMode(ScrollHandDrag);
        return;
    }
    QGraphicsView::keyPressEvent(e);
}

void TopologyView::keyReleaseEvent(QKeyEvent* e) {
    if (e->key() == Qt::Key_Space && !e->isAutoRepeat()) {
        panning_ = false;
        setDragMode(RubberBandDrag);
        return;
    }
    QGraphicsView::keyReleaseEvent(e);
}

}  // namespace orrery::views
