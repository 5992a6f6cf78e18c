#include "views/topology/fabric_event_edit.h"

namespace orrery::views {
namespace {

QString text_of(const nlohmann::json& v) { return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump()); }

bool same_target(const nlohmann::json& a, const nlohmann::json& b) {
    if (a == b) return true;
    // Two ends in either order; an id written as a number or as text.
    if (a.is_array() && b.is_array() && a.size() == 2 && b.size() == 2)
        return (text_of(a[0]) == text_of(b[1]) && text_of(a[1]) == text_of(b[0])) || (text_of(a[0]) == text_of(b[0]) && text_of(a[1]) == text_of(b[1]));
    return !a.is_array() && !b.is_array() && !a.is_object() && !b.is_object() && text_of(a) == text_of(b);
}

}  // namespace

std::optional<nlohmann::json> event_link(const TopoDoc& doc, const TopoLink& link, bool listed) {
    const TopoBox *a = doc.box(link.a), *b = doc.box(link.b);
    if (!a || !b || a->kind != BoxKind::network_switch || b->kind != BoxKind::network_switch) return std::nullopt;
    if (listed) return nlohmann::json::array({a->name.toStdString(), b->name.toStdString()});
    if (link.fabric_link < 0) return std::nullopt;
    return nlohmann::json(link.fabric_link);
}

std::optional<nlohmann::json> event_switch(const TopoDoc&, const TopoBox& box, bool listed) {
    if (box.kind != BoxKind::network_switch) return std::nullopt;
    if (listed) return nlohmann::json(box.name.toStdString());
    if (box.fabric_node < 0) return std::nullopt;
    return nlohmann::json(std::to_string(box.fabric_node));
}

nlohmann::json fabric_event(bool is_switch, const nlohmann::json& target, const QString& at, EventAction action, const QString& rate) {
    nlohmann::json e = {{"at", at.toStdString()}, {is_switch ? "switch" : "link", target}};
    if (action == EventAction::degrade) e["rate"] = rate.toStdString();
    else e["state"] = action == EventAction::fail ? "down" : "up";
    return e;
}

EventMarks event_marks(const TopoDoc& doc, const nlohmann::json& events, bool listed) {
    EventMarks m;
    if (!events.is_array()) return m;
    auto note = [](std::map<uint64_t, QString>& into, uint64_t id, const QString& text) {
        QString& s = into[id];
        s += (s.isEmpty() ? "" : "; ") + text;
    };
    for (const nlohmann::json& e : events) {
        if (!e.is_object()) continue;
        const QString text = event_text(e);
        const bool down = e.value("state", "") == "down", slowed = e.contains("rate");
        if (!down && !slowed) continue;
        if (e.contains("switch")) {
            for (const TopoBox& b : doc.boxes)
                if (auto ref = event_switch(doc, b, listed); ref && same_target(*ref, e["switch"])) note(m.failed_boxes, b.id, text);
        } else if (e.contains("link")) {
            for (const TopoLink& l : doc.links)
                if (auto ref = event_link(doc, l, listed); ref && same_target(*ref, e["link"])) note(down ? m.failed_links : m.degraded_links, l.id, text);
        }
    }
    return m;
}

QString event_text(const nlohmann::json& e, const TopoDoc* doc) {
    if (!e.is_object()) return text_of(e);
    QString what;
    if (e.contains("switch")) {
        what = "switch " + text_of(e["switch"]);
        if (doc)
            for (const TopoBox& b : doc->boxes)
                if (b.fabric_node >= 0 && QString::number(b.fabric_node) == text_of(e["switch"]) && b.name != text_of(e["switch"])) what += " (" + b.name + ")";
    } else {
        const nlohmann::json& l = e.value("link", nlohmann::json());
        if (l.is_array() && l.size() == 2) what = "link " + text_of(l[0]) + " – " + text_of(l[1]);
        else what = "link " + text_of(l);
        if (doc && l.is_number_integer())
            for (const TopoLink& link : doc->links)
                if (link.fabric_link == l.get<int64_t>() && doc->box(link.a) && doc->box(link.b))
                    what += " (" + doc->box(link.a)->name + " – " + doc->box(link.b)->name + ")";
    }
    const QString how = e.contains("rate") ? "at " + text_of(e["rate"]) : text_of(e.value("state", nlohmann::json("down")));
    return what + " " + how + " at " + text_of(e.value("at", nlohmann::json("0us")));
}

}  // namespace orrery::views
