#pragma once
// A fabric's failures and degradations as the canvas edits them (the scenario's topology.events): how an event
// names a link or a switch the canvas shows, the event a "Fail at…" / "Restore at…" / "Degrade to…" adds, and
// which links and switches the events touch, for the canvas to draw them apart. Plain functions over the
// topology document and the events' JSON; the editor makes each change one undoable step.
#include <map>
#include <optional>
#include <set>
#include <string>

#include <QString>
#include <nlohmann/json.hpp>

#include "views/topology/topology_doc.h"

namespace orrery::views {

enum class EventAction { fail, restore, degrade };

// How topology.events names the link or switch: by its ends' names (or the switch's) where the scenario lists
// the fabric node by node (`listed`), else by the index or id it has in the fabric the canvas was read from.
// nullopt for what events cannot name: a link with a server at one end (a host's link is its NIC's; events
// change links between switches), a link or switch drawn since the fabric was read.
std::optional<nlohmann::json> event_link(const TopoDoc& doc, const TopoLink& link, bool listed);
std::optional<nlohmann::json> event_switch(const TopoDoc& doc, const TopoBox& box, bool listed);

// The event: {"at": at, "link" | "switch": target, "state": "down" | "up"} or {…, "rate": rate}.
nlohmann::json fabric_event(bool is_switch, const nlohmann::json& target, const QString& at, EventAction action, const QString& rate = {});

// What the events do to what the canvas shows: links that go down at some time, links slowed, switches down;
// each with the events' words for a tooltip.
struct EventMarks {
    std::map<uint64_t, QString> failed_links, degraded_links, failed_boxes;
};
EventMarks event_marks(const TopoDoc& doc, const nlohmann::json& events, bool listed);

// One event as the events panel lists it: "link leaf0 – spine1 down at 200us", "link 12 at 200Gbps at 1ms"; with
// `doc`, a link or switch named by its index or id also by the names the canvas shows ("link 12 (leaf0 – spine1)").
QString event_text(const nlohmann::json& event, const TopoDoc* doc = nullptr);

}  // namespace orrery::views
