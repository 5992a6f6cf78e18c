#include "views/topology/topology_doc.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <QSizeF>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "scenario/build.h"
#include "scenario/load.h"

namespace orrery::views {

const TopoBox* TopoDoc::box(uint64_t id) const {
    for (const TopoBox& b : boxes)
        if (b.id == id) return &b;
    return nullptr;
}
TopoBox* TopoDoc::box(uint64_t id) { return const_cast<TopoBox*>(std::as_const(*this).box(id)); }

size_t TopoDoc::host_count() const {
    size_t n = 0;
    for (const TopoBox& b : boxes)
        if (b.kind == BoxKind::server) n += size_t(b.gpus);
    return n;
}
size_t TopoDoc::switch_count() const {
    size_t n = 0;
    for (const TopoBox& b : boxes) n += b.kind == BoxKind::network_switch;
    return n;
}

QSizeF box_size(const TopoBox& b) {
    if (b.kind == BoxKind::network_switch) return {64, 26};
    if (b.gpus == 1) return {26, 26};
    return {std::max(48.0, b.gpus * 14.0 + 8), 34};
}

QPointF port_position(const TopoBox& b, int port, QPointF toward) {
    const QSizeF s = box_size(b);
    if (b.kind == BoxKind::server) return {b.pos.x() + 4 + 14.0 * std::clamp(port, 0, b.gpus - 1) + 7 - (b.gpus == 1 ? 4 : 0), b.pos.y()};
    const double cx = b.pos.x() + s.width() / 2;
    return toward.y() < b.pos.y() + s.height() / 2 ? QPointF(cx, b.pos.y()) : QPointF(cx, b.pos.y() + s.height());
}

namespace {

const char* tier_prefix(int tier) { return tier == 1 ? "leaf" : tier == 2 ? "spine" : "core"; }

int row_of(const TopoBox& b) { return b.kind == BoxKind::server ? 0 : std::clamp(b.tier, 1, 3); }

QString unique_name(const TopoDoc& doc, const QString& prefix) {
    std::set<QString> taken;
    for (const TopoBox& b : doc.boxes) taken.insert(b.name);
    for (size_t i = 0;; ++i) {
        QString name = prefix + QString::number(i);
        if (!taken.count(name)) return name;
    }
}

}  // namespace

void tiered_layout(TopoDoc& doc) {
    std::vector<std::vector<size_t>> rows(4);
    for (size_t i = 0; i < doc.boxes.size(); ++i) rows[row_of(doc.boxes[i])].push_back(i);
    std::vector<double> width(4, 0);
    constexpr double gap = 12;
    for (int r = 0; r < 4; ++r) {
        std::stable_sort(rows[r].begin(), rows[r].end(), [&](size_t x, size_t y) { return doc.boxes[x].group < doc.boxes[y].group; });
        for (size_t i : rows[r]) width[r] += box_size(doc.boxes[i]).width() + gap;
    }
    const double widest = *std::max_element(width.begin(), width.end());
    for (int r = 0; r < 4; ++r) {
        double x = (widest - width[r]) / 2;
        const double y = (3 - r) * 140.0;
        for (size_t i : rows[r]) {
            doc.boxes[i].pos = {x, y};
            x += box_size(doc.boxes[i]).width() + gap;
        }
    }
}

TopoDoc doc_from_fabric(const Fabric& f, const std::vector<std::string>& names, const nlohmann::json& generator) {
    TopoDoc doc;
    doc.generator = generator;
    const size_t n = f.node_count();
    std::vector<uint64_t> box_of(n, 0);
    std::vector<int> port_of(n, -1);
    std::map<int32_t, uint64_t> server_box;
    auto name_of = [&](NodeId node, const QString& fallback) {
        return node < names.size() && !names[node].empty() ? QString::fromStdString(names[node]) : fallback;
    };
    size_t servers = 0, tier_count[4] = {0, 0, 0, 0};
    for (NodeId node = 0; node < n; ++node) {
        if (f.node_kind[node] != NodeKind::host) continue;
        const int32_t server = f.node_server[node];
        if (server >= 0) {
            auto it = server_box.find(server);
            if (it == server_box.end()) {
                TopoBox b;
                b.id = doc.next_id++;
                b.kind = BoxKind::server;
                QString name = name_of(node, "server" + QString::number(servers));
                if (const int dot = name.lastIndexOf(".gpu"); dot > 0) name = name.left(dot);
                else if (node < names.size()) name = "server" + QString::number(servers);
                b.name = name;
                b.gpus = 0;
                b.group = f.node_group[node];
                doc.boxes.push_back(b);
                it = server_box.emplace(server, b.id).first;
                ++servers;
            }
            TopoBox* b = doc.box(it->second);
            box_of[node] = b->id;
            port_of[node] = b->gpus++;
        } else {
            TopoBox b;
            b.id = doc.next_id++;
            b.kind = BoxKind::server;
            b.name = name_of(node, "host" + QString::number(node));
            b.gpus = 1;
            b.group = f.node_group[node];
            box_of[node] = b.id;
            port_of[node] = 0;
            doc.boxes.push_back(b);
        }
    }
    for (NodeId node = 0; node < n; ++node) {
        if (f.node_kind[node] != NodeKind::network_switch) continue;
        TopoBox b;
        b.id = doc.next_id++;
        b.kind = BoxKind::network_switch;
        b.tier = std::clamp<int>(f.node_tier[node], 1, 3);
        b.name = name_of(node, tier_prefix(b.tier) + QString::number(tier_count[b.tier]++));
        b.group = f.node_group[node];
        b.fabric_node = node;
        box_of[node] = b.id;
        doc.boxes.push_back(b);
    }
    for (LinkId l = 0; l < f.link_count(); ++l) {
        const NodeId a = f.link_a[l], b = f.link_b[l];
        if (f.node_kind[a] == NodeKind::nvswitch || f.node_kind[b] == NodeKind::nvswitch) {
            doc.nvlink_rate = QString::fromStdString(format_rate(f.link_rate[l]));
            doc.nvlink_delay = QString::fromStdString(format_time(f.link_delay[l]));
            continue;
        }
        TopoLink link;
        link.id = doc.next_id++;
        link.a = box_of[a];
        link.b = box_of[b];
        link.port_a = port_of[a];
        link.port_b = port_of[b];
        link.rate = QString::fromStdString(format_rate(f.link_rate[l]));
        link.delay = QString::fromStdString(format_time(f.link_delay[l]));
        link.fabric_link = l;
        doc.links.push_back(link);
    }
    tiered_layout(doc);
    return doc;
}

TopoDoc doc_from_topology(const nlohmann::json& topology, const std::filesystem::path& base_dir, const PresetLibrary& presets,
                          const std::map<QString, QPointF>& positions) {
    const nlohmann::json document = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", topology}};
    LoadedScenario loaded = load_scenario_document(document, "topology", base_dir, presets, LoadOptions{false});
    const TopologySpec& spec = loaded.base.topology;
    TopoDoc doc;
    if (const auto* e = std::get_if<ExplicitTopology>(&spec.source)) {
        doc = doc_from_fabric(e->fabric, e->node_names, nullptr);
    } else {
        doc = doc_from_fabric(build_fabric(spec), {}, topology);
    }
    place_boxes(doc, positions);
    return doc;
}

nlohmann::json doc_to_topology(const TopoDoc& doc) {
    if (!doc.generator.is_null()) return doc.generator;
    nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array(), nvlinks = nlohmann::json::array();
    std::unordered_map<uint64_t, std::vector<std::string>> host_names;  // per server box: its hosts by NIC
    int server_index = 0;
    std::vector<std::pair<std::string, int>> nvswitches;
    for (const TopoBox& b : doc.boxes) {
        if (b.kind != BoxKind::server) continue;
        std::vector<std::string>& hosts = host_names[b.id];
        const std::string base = b.name.toStdString();
        for (int g = 0; g < b.gpus; ++g) {
            nlohmann::json node = {{"name", b.gpus == 1 ? base : base + ".gpu" + std::to_string(g)}, {"kind", "host"}};
            if (b.gpus > 1) node["server"] = server_index;
            if (b.group >= 0) node["group"] = b.group;
            hosts.push_back(node["name"]);
            nodes.push_back(node);
        }
        if (b.gpus > 1) {
            nvswitches.emplace_back(base + ".nvs", server_index);
            for (const std::string& h : hosts)
                nvlinks.push_back({{"a", h}, {"b", base + ".nvs"}, {"rate", doc.nvlink_rate.toStdString()}, {"delay", doc.nvlink_delay.toStdString()}});
            ++server_index;
        }
    }
    for (const auto& [name, server] : nvswitches) nodes.push_back({{"name", name}, {"kind", "nvswitch"}, {"server", server}});
    for (const TopoBox& b : doc.boxes) {
        if (b.kind != BoxKind::network_switch) continue;
        nlohmann::json node = {{"name", b.name.toStdString()}, {"kind", "switch"}, {"tier", b.tier}};
        if (b.group >= 0) node["group"] = b.group;
        nodes.push_back(node);
    }
    auto end_name = [&](uint64_t box, int port) {
        const TopoBox* b = doc.box(box);
        if (b->kind == BoxKind::server) return host_names[box][size_t(std::clamp(port, 0, b->gpus - 1))];
        return b->name.toStdString();
    };
    for (const TopoLink& l : doc.links)
        links.push_back({{"a", end_name(l.a, l.port_a)}, {"b", end_name(l.b, l.port_b)}, {"rate", l.rate.toStdString()}, {"delay", l.delay.toStdString()}});
    for (auto& l : nvlinks) links.push_back(l);
    return {{"nodes", nodes}, {"links", links}};
}

namespace {

bool only_keys(const nlohmann::json& o, std::initializer_list<const char*> keys) {
    for (auto it = o.begin(); it != o.end(); ++it)
        if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; })) return false;
    return true;
}

// A node of doc_to_topology's explicit form as the box it belongs to (added to `doc`); false for another shape.
bool read_drawn_node(const nlohmann::json& n, TopoDoc& doc, std::map<std::string, std::pair<uint64_t, int>>& ends, std::map<int, uint64_t>& servers,
                     std::set<std::string>& nvswitches) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string() || !n.contains("kind") || !n["kind"].is_string()) return false;
    if (n.contains("group") && !n["group"].is_number_integer()) return false;
    const std::string name = n["name"], kind = n["kind"];
    const int group = n.value("group", -1);
    if (kind == "nvswitch") return only_keys(n, {"name", "kind", "server"}) && nvswitches.insert(name).second;
    TopoBox b;
    b.group = group;
    if (kind == "switch") {
        if (!only_keys(n, {"name", "kind", "tier", "group"}) || !n.contains("tier") || !n["tier"].is_number_integer()) return false;
        b.kind = BoxKind::network_switch;
        b.tier = n["tier"];
        if (b.tier < 1 || b.tier > 3) return false;
    } else if (kind != "host" || !only_keys(n, {"name", "kind", "server", "group"})) {
        return false;
    } else if (n.contains("server")) {  // a GPU of a server: "<server>.gpu<NIC>", NICs in order
        if (!n["server"].is_number_integer()) return false;
        const size_t dot = name.rfind(".gpu");
        if (dot == std::string::npos || dot == 0) return false;
        auto it = servers.find(n["server"].get<int>());
        if (it == servers.end()) {
            b.id = doc.next_id++;
            b.name = QString::fromStdString(name.substr(0, dot));
            b.gpus = 0;
            doc.boxes.push_back(b);
            it = servers.emplace(n["server"].get<int>(), b.id).first;
        }
        TopoBox* server = doc.box(it->second);
        if (name != server->name.toStdString() + ".gpu" + std::to_string(server->gpus)) return false;
        return ends.emplace(name, std::make_pair(server->id, server->gpus++)).second;
    }
    b.id = doc.next_id++;
    b.name = QString::fromStdString(name);
    doc.boxes.push_back(b);
    return ends.emplace(name, std::make_pair(b.id, b.kind == BoxKind::server ? 0 : -1)).second;
}

}  // namespace

std::optional<TopoDoc> doc_from_drawn(const nlohmann::json& t) {
    if (!t.is_object() || t.size() != 2 || !t.contains("nodes") || !t.contains("links") || !t["nodes"].is_array() || !t["links"].is_array())
        return std::nullopt;
    TopoDoc doc;
    std::map<std::string, std::pair<uint64_t, int>> ends;  // node name → its box and NIC (-1 on a switch)
    std::map<int, uint64_t> servers;
    std::set<std::string> nvswitches;
    for (const nlohmann::json& n : t["nodes"])
        if (!read_drawn_node(n, doc, ends, servers, nvswitches)) return std::nullopt;
    for (const nlohmann::json& l : t["links"]) {
        if (!l.is_object() || !only_keys(l, {"a", "b", "rate", "delay"}) || l.size() != 4) return std::nullopt;
        for (const char* k : {"a", "b", "rate", "delay"})
            if (!l[k].is_string()) return std::nullopt;
        const std::string a = l["a"], b = l["b"];
        const QString rate = QString::fromStdString(l["rate"].get<std::string>()), delay = QString::fromStdString(l["delay"].get<std::string>());
        if (nvswitches.count(a) || nvswitches.count(b)) {
            doc.nvlink_rate = rate;
            doc.nvlink_delay = delay;
            continue;
        }
        const auto ea = ends.find(a), eb = ends.find(b);
        if (ea == ends.end() || eb == ends.end()) return std::nullopt;
        TopoLink link;
        link.id = doc.next_id++;
        std::tie(link.a, link.port_a) = ea->second;
        std::tie(link.b, link.port_b) = eb->second;
        link.rate = rate;
        link.delay = delay;
        doc.links.push_back(link);
    }
    tiered_layout(doc);
    return doc;
}

void place_boxes(TopoDoc& doc, const std::map<QString, QPointF>& places) {
    for (TopoBox& b : doc.boxes)
        if (auto it = places.find(b.name); it != places.end()) b.pos = it->second;
}

nlohmann::json doc_layout(const TopoDoc& doc) {
    nlohmann::json out = nlohmann::json::object();
    for (const TopoBox& b : doc.boxes) out[b.name.toStdString()] = {b.pos.x(), b.pos.y()};
    return out;
}

std::map<QString, QPointF> layout_positions(const nlohmann::json& layout) {
    std::map<QString, QPointF> out;
    if (!layout.is_object()) return out;
    for (auto it = layout.begin(); it != layout.end(); ++it)
        if (it.value().is_array() && it.value().size() == 2 && it.value()[0].is_number() && it.value()[1].is_number())
            out[QString::fromStdString(it.key())] = QPointF(it.value()[0].get<double>(), it.value()[1].get<double>());
    return out;
}

void carry_ids(const TopoDoc& from, TopoDoc& to) {
    std::map<QString, uint64_t> box_id;
    for (const TopoBox& b : from.boxes) box_id[b.name] = b.id;
    uint64_t next = std::max(from.next_id, to.next_id);
    std::map<uint64_t, uint64_t> renamed;  // to's old box id → carried id
    for (TopoBox& b : to.boxes) {
        auto it = box_id.find(b.name);
        renamed[b.id] = it != box_id.end() ? it->second : next++;
        b.id = renamed[b.id];
    }
    using Ends = std::tuple<uint64_t, int, uint64_t, int>;
    std::map<Ends, std::vector<uint64_t>> link_ids;  // parallel links in their order
    for (auto l = from.links.rbegin(); l != from.links.rend(); ++l) link_ids[{l->a, l->port_a, l->b, l->port_b}].push_back(l->id);
    for (TopoLink& l : to.links) {
        l.a = renamed[l.a];
        l.b = renamed[l.b];
        std::vector<uint64_t>& ids = link_ids[{l.a, l.port_a, l.b, l.port_b}];
        if (ids.empty()) {
            l.id = next++;
        } else {
            l.id = ids.back();
            ids.pop_back();
        }
    }
    to.next_id = next;
}

CollapsedView collapse(const TopoDoc& doc) {
    CollapsedView v;
    std::map<std::pair<int, int>, size_t> index;  // (row, group) → group index; switches outside pods by tier
    std::unordered_map<uint64_t, size_t> group_of;
    for (const TopoBox& b : doc.boxes) {
        const int row = row_of(b);
        const std::pair<int, int> key{row, b.group};
        auto it = index.find(key);
        if (it == index.end()) {
            CollapsedGroup g;
            g.tier = row;
            g.group = b.group;
            const QString what = row == 0 ? "servers" : tier_prefix(row) + QString("s");
            g.label = b.group >= 0 ? QString("%1 of group %2").arg(what).arg(b.group) : QString("%1 (tier %2)").arg(what).arg(row);
            it = index.emplace(key, v.groups.size()).first;
            v.groups.push_back(g);
        }
        CollapsedGroup& g = v.groups[it->second];
        if (b.kind == BoxKind::server) {
            ++g.servers;
            g.hosts += size_t(b.gpus);
        } else {
            ++g.switches;
        }
        group_of[b.id] = it->second;
    }
    std::map<std::pair<size_t, size_t>, size_t> counts;
    for (const TopoLink& l : doc.links) {
        size_t a = group_of[l.a], b = group_of[l.b];
        if (a == b) continue;
        if (a > b) std::swap(a, b);
        ++counts[{a, b}];
    }
    for (const auto& [ab, c] : counts) v.links.push_back({ab.first, ab.second, c});
    std::vector<double> x(4, 0);
    for (CollapsedGroup& g : v.groups) {
        g.pos = {x[g.tier], (3 - g.tier) * 160.0};
        x[g.tier] += 200;
    }
    const double widest = *std::max_element(x.begin(), x.end());
    for (CollapsedGroup& g : v.groups) g.pos.rx() += (widest - x[g.tier]) / 2;
    return v;
}

void mark_edited(TopoDoc& doc) { doc.generator = nullptr; }

uint64_t add_box(TopoDoc& doc, BoxKind kind, int tier, int gpus, QPointF pos) {
    TopoBox b;
    b.id = doc.next_id++;
    b.kind = kind;
    b.tier = kind == BoxKind::server ? 0 : std::clamp(tier, 1, 3);
    b.gpus = kind == BoxKind::server ? std::max(1, gpus) : 1;
    b.name = unique_name(doc, kind == BoxKind::server ? (b.gpus == 1 ? "host" : "server") : tier_prefix(b.tier));
    b.pos = pos;
    doc.boxes.push_back(b);
    mark_edited(doc);
    return b.id;
}

uint64_t add_link(TopoDoc& doc, uint64_t a, int port_a, uint64_t b, int port_b, QString* why) {
    const TopoBox* ba = doc.box(a);
    const TopoBox* bb = doc.box(b);
    if (!ba || !bb) {
        *why = "a link needs a box at both ends";
        return 0;
    }
    if (a == b) {
        *why = ba->name + ": a link cannot join a box to itself";
        return 0;
    }
    if (ba->kind == BoxKind::server && bb->kind == BoxKind::server) {
        *why = "servers connect through switches: link " + ba->name + " or " + bb->name + " to a leaf switch";
        return 0;
    }
    auto taken = [&](uint64_t box, int port) {
        for (const TopoLink& l : doc.links)
            if ((l.a == box && l.port_a == port) || (l.b == box && l.port_b == port)) return true;
        return false;
    };
    auto pick = [&](const TopoBox* box, int wanted, int* out) {
        if (box->kind != BoxKind::server) {
            *out = -1;
            return true;
        }
        if (wanted >= 0 && wanted < box->gpus && !taken(box->id, wanted)) {
            *out = wanted;
            return true;
        }
        int best = -1;
        for (int p = 0; p < box->gpus; ++p)
            if (!taken(box->id, p) && (best < 0 || std::abs(p - wanted) < std::abs(best - wanted))) best = p;
        if (best < 0) {
            *why = box->name + ": every NIC already has a link (one link per NIC)";
            return false;
        }
        *out = best;
        return true;
    };
    TopoLink link;
    if (!pick(ba, port_a, &link.port_a) || !pick(bb, port_b, &link.port_b)) return 0;
    link.id = doc.next_id++;
    link.a = a;
    link.b = b;
    if (!doc.links.empty()) {
        link.rate = doc.links.back().rate;
        link.delay = doc.links.back().delay;
    }
    doc.links.push_back(link);
    mark_edited(doc);
    return link.id;
}

std::vector<uint64_t> link_every_nic(TopoDoc& doc, uint64_t server, uint64_t target, bool rails, QString* why) {
    const TopoBox* s = doc.box(server);
    const TopoBox* t = doc.box(target);
    if (!s || !t || s->kind != BoxKind::server || t->kind == BoxKind::server) {
        *why = "drag from a server's NIC to a switch to link its NICs";
        return {};
    }
    // Rails: the switches of the target's tier, left to right, are rails 0, 1, …; NIC r goes to rail r.
    std::vector<const TopoBox*> rail_switches;
    if (rails) {
        for (const TopoBox& b : doc.boxes)
            if (b.kind != BoxKind::server && b.tier == t->tier) rail_switches.push_back(&b);
        std::stable_sort(rail_switches.begin(), rail_switches.end(), [](const TopoBox* x, const TopoBox* y) { return x->pos.x() < y->pos.x(); });
        if (int(rail_switches.size()) < s->gpus) {
            *why = QString("%1 has %2 NICs but there are %3 tier-%4 switches: a rail per NIC needs %2 of them, left to right")
                       .arg(s->name)
                       .arg(s->gpus)
                       .arg(rail_switches.size())
                       .arg(t->tier);
            return {};
        }
    }
    std::vector<uint64_t> added;
    const QString name = s->name;
    const int nics = s->gpus;
    for (int nic = 0; nic < nics; ++nic) {
        const bool taken = std::any_of(doc.links.begin(), doc.links.end(), [&](const TopoLink& l) {
            return (l.a == server && l.port_a == nic) || (l.b == server && l.port_b == nic);
        });
        if (taken) continue;
        QString ignored;
        if (const uint64_t id = add_link(doc, server, nic, rails ? rail_switches[size_t(nic)]->id : target, -1, &ignored)) added.push_back(id);
    }
    if (added.empty()) *why = name + ": every NIC already has a link (one link per NIC)";
    return added;
}

void remove(TopoDoc& doc, const std::set<uint64_t>& boxes, const std::set<uint64_t>& links) {
    std::erase_if(doc.links, [&](const TopoLink& l) { return links.count(l.id) || boxes.count(l.a) || boxes.count(l.b); });
    std::erase_if(doc.boxes, [&](const TopoBox& b) { return boxes.count(b.id) > 0; });
    mark_edited(doc);
}

TopoDoc extract(const TopoDoc& doc, const std::set<uint64_t>& boxes) {
    TopoDoc out;
    out.generator = nullptr;
    for (const TopoBox& b : doc.boxes)
        if (boxes.count(b.id)) out.boxes.push_back(b);
    for (const TopoLink& l : doc.links)
        if (boxes.count(l.a) && boxes.count(l.b)) out.links.push_back(l);
    out.next_id = doc.next_id;
    return out;
}

std::set<uint64_t> paste(TopoDoc& doc, const TopoDoc& fragment, QPointF offset) {
    std::unordered_map<uint64_t, uint64_t> fresh;
    std::set<uint64_t> added;
    for (const TopoBox& b : fragment.boxes) {
        TopoBox c = b;
        c.id = doc.next_id++;
        c.pos += offset;
        const QString stem = b.kind == BoxKind::server ? (b.gpus == 1 ? "host" : "server") : tier_prefix(b.tier);
        c.name = unique_name(doc, stem);
        fresh[b.id] = c.id;
        added.insert(c.id);
        doc.boxes.push_back(c);
    }
    for (const TopoLink& l : fragment.links) {
        TopoLink c = l;
        c.id = doc.next_id++;
        c.a = fresh[l.a];
        c.b = fresh[l.b];
        doc.links.push_back(c);
    }
    mark_edited(doc);
    return added;
}

}  // namespace orrery::views
