#pragma once
// The topology editor's document as plain data: boxes (GPU servers with their NICs, switches) and the links
// between their ports, with positions. A GPU server of G GPUs stands for G hosts (one NIC each) joined by an
// NVSwitch; its NVLinks are implied. The document converts to the scenario's `topology` section: the
// generator form while it is exactly what a generator built, the explicit `nodes` + `links` form once edited.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <QPointF>
#include <QSizeF>
#include <QString>
#include <nlohmann/json.hpp>

#include "scenario/presets.h"
#include "topology/fabric.h"

namespace orrery::views {

enum class BoxKind { server, network_switch };

struct TopoBox {
    uint64_t id = 0;           // stable while the document lives (undo, selection); not saved
    BoxKind kind = BoxKind::server;
    QString name;
    int tier = 0;              // switches: 1 leaf/ToR, 2 spine/aggregation, 3 core; servers 0
    int gpus = 1;              // servers: GPUs, one NIC each (1 = a plain host, no NVSwitch)
    int group = -1;            // pod or rail the generator put it in (levels of detail); -1 none
    QPointF pos;               // scene coordinates of the top-left corner
    int64_t fabric_node = -1;  // switches: the node's id in the fabric it was read from (events name it so); -1 drawn
};

// What a link drawn by hand (the first of a fabric; later ones copy the last) and the Generate dialog start
// with: one default for both, a current cluster's NIC rate.
inline const QString kNewLinkRate = "400Gbps", kNewLinkDelay = "1us";

struct TopoLink {
    uint64_t id = 0;
    uint64_t a = 0, b = 0;     // box ids
    int port_a = -1, port_b = -1;  // NIC index on a server; -1 on a switch (ports follow link order)
    QString rate = kNewLinkRate, delay = kNewLinkDelay;
    int64_t fabric_link = -1;  // the link's index in the fabric it was read from (events name it so); -1 drawn
};

struct TopoDoc {
    std::vector<TopoBox> boxes;
    std::vector<TopoLink> links;
    uint64_t next_id = 1;
    QString nvlink_rate = "7200Gbps", nvlink_delay = "25ns";  // inside servers (the engine's NVLink defaults)
    nlohmann::json generator;  // the generator section this document is exactly; null once edited

    const TopoBox* box(uint64_t id) const;
    TopoBox* box(uint64_t id);
    size_t host_count() const;
    size_t switch_count() const;
};

// What the canvas shows: every box, or (above kCollapseHosts hosts) one item per pod / rail and per tier
// outside pods, with the links between them counted.
inline constexpr size_t kCollapseHosts = 1000;

struct CollapsedGroup {
    QString label;             // "pod 3", "core"
    int tier = 0;              // row: 0 servers, 1–3 switch tiers
    int group = -1;
    size_t servers = 0, hosts = 0, switches = 0;
    QPointF pos;
};
struct CollapsedLink {
    size_t a = 0, b = 0;       // indices into groups
    size_t links = 0;
};
struct CollapsedView {
    std::vector<CollapsedGroup> groups;
    std::vector<CollapsedLink> links;
};
CollapsedView collapse(const TopoDoc& doc);

// From a fabric the engine built (generators, imports, explicit lists). `names` may be empty.
TopoDoc doc_from_fabric(const Fabric& fabric, const std::vector<std::string>& names, const nlohmann::json& generator);
// The scenario's topology section (generator, preset, explicit or import) through the engine; positions by
// box name override the tiered layout. Throws InputError with the engine's messages.
TopoDoc doc_from_topology(const nlohmann::json& topology, const std::filesystem::path& base_dir, const PresetLibrary& presets,
                          const std::map<QString, QPointF>& positions = {});
// The scenario section: the generator while unedited, else explicit nodes (hosts, NVSwitches, switches) and links.
nlohmann::json doc_to_topology(const TopoDoc& doc);
// The inverse of doc_to_topology's explicit form, read without the engine, so a fabric still being drawn (NICs
// not yet linked, which the engine refuses) shows as it was; nullopt for any other shape (read by the engine).
std::optional<TopoDoc> doc_from_drawn(const nlohmann::json& topology);
// Boxes named in `places` moved there; the others stay.
void place_boxes(TopoDoc& doc, const std::map<QString, QPointF>& places);
// The boxes' places as the scenario document's layout keeps them ({"name": [x, y]}), and back.
nlohmann::json doc_layout(const TopoDoc& doc);
std::map<QString, QPointF> layout_positions(const nlohmann::json& layout);
// `to` rebuilt from the scenario document: its boxes take the ids they had in `from` (by name) and its links
// theirs (by both ends and ports), the rest fresh ones, so the canvas keeps its items and selection.
void carry_ids(const TopoDoc& from, TopoDoc& to);

// Rows by tier (core on top, servers at the bottom), boxes ordered by group then name, rows centred.
void tiered_layout(TopoDoc& doc);
QSizeF box_size(const TopoBox& b);
// Where a link attaches to a box: a server's NIC on its top edge; a switch's top or bottom centre, facing `toward`.
QPointF port_position(const TopoBox& b, int port, QPointF toward);

// Editing, as functions from a document to the next one (the undo stack keeps both).
uint64_t add_box(TopoDoc& doc, BoxKind kind, int tier, int gpus, QPointF pos);  // names it "server3", "leaf2", …
// A link from (a, port_a) to b; on a server b takes its free NIC nearest `port_b` (-1: the first free).
// Returns 0 and sets `why` when a NIC is taken, the boxes are the same, or both are servers.
uint64_t add_link(TopoDoc& doc, uint64_t a, int port_a, uint64_t b, int port_b, QString* why);
// Connecting a server in one gesture: every free NIC of `server` to the switch `target`, or with `rails`, NIC r
// to the r-th switch of the target's tier counted left to right (a rail-optimized wiring). Returns the new
// links' ids; none, with `why` set, when every NIC is taken or there are fewer switches than rails.
std::vector<uint64_t> link_every_nic(TopoDoc& doc, uint64_t server, uint64_t target, bool rails, QString* why);
void remove(TopoDoc& doc, const std::set<uint64_t>& boxes, const std::set<uint64_t>& links);
// The boxes and the links among them (inner links kept), for copy and duplicate.
TopoDoc extract(const TopoDoc& doc, const std::set<uint64_t>& boxes);
// Adds `fragment` moved by `offset`, with fresh ids and unique names; returns the new box ids.
std::set<uint64_t> paste(TopoDoc& doc, const TopoDoc& fragment, QPointF offset);
void mark_edited(TopoDoc& doc);  // drops the generator form

}  // namespace orrery::views
