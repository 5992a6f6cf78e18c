#include "imports/simai_busbw.h"

#include <algorithm>
#include <cmath>

#include "common/diagnostics.h"
#include "imports/import_job.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "workload/llm_job.h"
#include "workload/tables.h"

namespace orrery {
namespace {

// SimAI's GB: 2^30 bytes.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct BusBw {
    float busbw = 0;        // GiB/s
    bool nvlink = false;    // the bottleneck is NVLink (selects the NVLink ratio table for TP gathers)
};

// SimAI's calbusbw for a group spanning `nodes` servers of `gpus` GPUs with `nics` NICs each (ring and
// the cross-NIC rule; the tree and NVLS variants are never chosen by SimAI_analytical's callers).
BusBw bus_bandwidth(const BusbwParams& p, float nics, int nodes, CollectiveKind kind, int gpus) {
    BusBw r;
    const float nvlink = float(p.nvlink_gib_per_s), nic = float(p.nic_gib_per_s);
    if (nvlink <= 0 || nic <= 0 || gpus < 1 || int(nics) < 1 || nodes < 1) return {-1, false};
    if (gpus * nodes == 1) return {-1, false};  // SimAI: "requires at least two GPUs"
    const bool cross_nic = nics * nic > nvlink;
    float all_gather = 0;
    if (nodes == 1) {
        all_gather = nvlink;
    } else if (gpus == 1) {
        all_gather = nic * nics;
    } else if (cross_nic) {
        const float across = nvlink * float(gpus) / float(gpus - 1);
        if (across < nic * nics) all_gather = across, r.nvlink = true;
        else all_gather = nic * nics;
    } else {
        if (nvlink < nic * nics) all_gather = nvlink, r.nvlink = true;
        else all_gather = nic * nics;
    }
    if (kind == CollectiveKind::all_to_all) {
        if (nodes == 1) return {nvlink, true};
        const int ranks = nodes * gpus;
        r.busbw = nic * nics / float(gpus) * float(ranks - 1) / float((nodes - 1) * gpus);
        return r;
    }
    r.busbw = all_gather;
    return r;
}

// SimAI's getValue: the ratio at `bytes` in the column of `nodes`, relative to the column's last row.
float ratio_value(const std::vector<std::vector<double>>& table, double bytes, int nodes, const std::string& source) {
    int column = 5;
    switch (nodes) {
        case 1: column = 1; break;
        case 2: column = 2; break;
        case 4: column = 3; break;
        case 8: column = 4; break;
        case 16: column = 5; break;
        case 32: column = 6; break;
        case 64: column = 7; break;
        case 128: column = 8; break;
        case 9: column = 9; break;  // SimAI's "multi" column
        default: break;
    }
    if (bytes == 0) return 1.0f;
    const double last = table.back()[size_t(column)];
    if (bytes < table.front()[0]) return float(table.front()[size_t(column)] / last);
    for (size_t i = 0; i + 1 < table.size(); ++i) {
        const double s1 = table[i][0], s2 = table[i + 1][0];
        if (bytes >= s1 && bytes <= s2) {
            const double v1 = table[i][size_t(column)], v2 = table[i + 1][size_t(column)];
            return float((v1 + (v2 - v1) * (bytes - s1) / (s2 - s1)) / last);
        }
    }
    throw InputError(source, "a collective of " + std::to_string(int64_t(bytes)) + " B is beyond SimAI's efficiency tables (up to " +
                                 std::to_string(int64_t(table.back()[0])) + " B); SimAI_analytical aborts on it too");
}

float ratio_of(const BusbwRatios& t, const BusbwParams& p, double bytes, int ranks, int tp, SimaiGroup group, CollectiveKind kind, bool nvlink,
               const std::string& source) {
    const int per = p.gpus_per_server;
    const bool gather = kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter;
    if (gather && group == SimaiGroup::tp) return ratio_value(nvlink ? t.nvlink : t.nic, bytes, tp < per ? 1 : tp / per, source);
    if (kind == CollectiveKind::all_to_all && group == SimaiGroup::ep) {
        if (tp * ranks <= per) return ratio_value(t.all_to_all, bytes, 1, source);
        if (tp >= per) return ratio_value(t.all_to_all, bytes, 9, source);
        return ratio_value(t.all_to_all, bytes, tp * ranks / per, source);
    }
    if (kind == CollectiveKind::all_to_all && group == SimaiGroup::tp) return ratio_value(t.all_to_all, bytes, tp <= per ? 1 : tp / per, source);
    return 1.0f;
}

// SimAI's Layer::compute_time, in ns: one collective of `bytes` among `ranks` members of `group`.
double collective_ns(const SimaiComm& c, int ranks, int tp, int ep, const BusbwParams& p, const BusbwRatios& t, const std::string& source) {
    if (c.group == SimaiGroup::none) return 0;  // no collective issued
    if (1 < c.bytes && c.bytes < 1048576) {  // SimAI's fixed small-message latencies (other group sizes: 0)
        switch (ranks) {
            case 2: return 10000;
            case 4: return 12000;
            case 8: return 15000;
            case 16: return 66000;
            case 32: return 135000;
            case 64: return 200000;
            case 128: return 320000;
            default: return 0;
        }
    }
    const int per = p.gpus_per_server;
    const int nics = p.nics_per_server;  // SimAI divides it as an integer before it becomes a float
    BusBw bw;
    if (c.group == SimaiGroup::tp) {
        bw = tp <= per ? bus_bandwidth(p, float(nics), 1, c.kind, tp) : bus_bandwidth(p, float(nics), tp / per, c.kind, per);
    } else if (c.group == SimaiGroup::ep && ranks > 1) {
        if (tp * ranks <= per) {
            bw = bus_bandwidth(p, float(nics), 1, c.kind, per / tp);
        } else {
            const int gpus = per / tp > 1 ? per / tp : 1;
            const float n = float(tp > per ? nics / per : nics / tp);
            bw = bus_bandwidth(p, n, tp * ranks / per, c.kind, gpus);
        }
    } else if (c.group == SimaiGroup::dp && ranks > 1) {
        bw = tp <= per ? bus_bandwidth(p, float(nics / tp), ranks, c.kind, per / tp) : bus_bandwidth(p, float(nics / per), ranks, c.kind, 1);
    } else if (c.group == SimaiGroup::dp_ep && ranks > 1) {
        bw = tp * ep <= per ? bus_bandwidth(p, float(nics / (tp * ep)), ranks, c.kind, per / (tp * ep))
                            : bus_bandwidth(p, float(nics / per), ranks, c.kind, 1);
    } else {
        return 0;
    }
    const float ratio = ratio_of(t, p, double(c.bytes), ranks, tp, c.group, c.kind, bw.nvlink, source);
    const float rate = ratio * bw.busbw;
    const double factor = c.kind == CollectiveKind::all_reduce ? 2.0 * (ranks - 1) / (ranks / 1.0) : (ranks - 1) / (ranks / 1.0);
    return std::floor(double(c.bytes) / kGiB / rate * 1e9 * factor);  // SimAI keeps whole ns (Tick)
}

std::vector<std::vector<double>> table_of(const nlohmann::json& doc, const char* key, const std::string& where) {
    std::vector<std::vector<double>> rows;
    const nlohmann::json& t = doc["tables"][key];
    if (!t.is_array() || t.size() < 2) throw InputError(where, std::string("tables.") + key + ": expected rows of [bytes, ratios…]");
    for (const auto& row : t) {
        if (!row.is_array() || row.size() < 10) throw InputError(where, std::string("tables.") + key + ": every row needs bytes and at least 9 ratios");
        rows.push_back(row.get<std::vector<double>>());
    }
    return rows;
}

}  // namespace

BusbwRatios load_busbw_ratios(const PresetLibrary& presets) {
    const nlohmann::json doc = read_data_table(presets, "simai_busbw_ratios.json", "orrery-simai-busbw-ratios");
    const std::string where = "data/simai_busbw_ratios.json";
    return {table_of(doc, "nic", where), table_of(doc, "nvlink", where), table_of(doc, "all_to_all", where)};
}

BusbwEstimate simai_busbw_estimate(const SimaiWorkload& w, int world, const BusbwParams& p, const BusbwRatios& t) {
    const bool micro = w.policy == "MICRO";
    const int tp = micro ? 1 : w.tp, pp = micro ? 1 : w.pp, ep = micro ? 1 : w.ep;
    const int ga = std::max(1, w.ga), vpp = std::max(1, w.vpp);
    if (world % (tp * pp) != 0)
        throw InputError(w.source + ":1", "TP " + std::to_string(tp) + " × PP " + std::to_string(pp) + " does not divide the " + std::to_string(world) + " GPUs");
    const int dp = world / (tp * pp);
    // SimAI divides NICs per server by TP (by TP·EP for DP_EP groups) as integers: fewer NICs than that
    // makes 0 NICs, a negative bandwidth, and collectives SimAI reports as free. Refused instead.
    const int share = std::min(p.gpus_per_server, tp * ep);
    if (p.nics_per_server / std::min(p.gpus_per_server, tp) < 1 || (ep > 1 && p.nics_per_server / share < 1))
        throw InputError("workload.collectives.busbw.nics_per_server",
                         std::to_string(p.nics_per_server) + " NICs per server for TP " + std::to_string(tp) + (ep > 1 ? " × EP " + std::to_string(ep) : "") +
                             ": SimAI's model gives the data-parallel groups 0 NICs (it divides them as integers) and reports their collectives as free; "
                             "give at least " + std::to_string(ep > 1 ? share : std::min(p.gpus_per_server, tp)) + " NICs per server");
    double compute = 0, exposed = 0, before_bubble = 0, dp_comm = 0, dp_ep_comm = 0, tp_comm = 0, ep_comm = 0;  // ns
    for (const SimaiRecord& r : w.records) {
        // Group sizes as SimAI's report takes them: EP or TP for fwd/ig, DP/EP or DP for wg.
        auto mp_size = [&](const SimaiComm& c) { return c.group == SimaiGroup::ep ? ep : tp; };
        const double fwd = collective_ns(r.forward, mp_size(r.forward), tp, ep, p, t, w.source + ":" + std::to_string(r.line));
        const double ig = collective_ns(r.input_grad, mp_size(r.input_grad), tp, ep, p, t, w.source + ":" + std::to_string(r.line));
        const double wg = collective_ns(r.weight_grad, r.weight_grad.group == SimaiGroup::dp_ep ? dp / ep : dp, tp, ep, p, t,
                                        w.source + ":" + std::to_string(r.line));
        const double work = double(r.forward_ns + r.weight_grad_ns + r.input_grad_ns);
        if (r.name != "embedding_layer") before_bubble += fwd + work + ig;
        const double wg_exposed = wg * (1 - p.dp_overlap);
        (r.weight_grad.group == SimaiGroup::dp_ep ? dp_ep_comm : dp_comm) += wg_exposed;
        const bool ep_group = r.forward.group == SimaiGroup::ep;
        const double overlap = ep_group ? p.ep_overlap : p.tp_overlap;
        (ep_group ? ep_comm : tp_comm) += (fwd + ig) * (1 - overlap);
        compute += work;
        exposed += (fwd + ig) * (1 - overlap) + wg_exposed;
    }
    BusbwEstimate e;
    const double pp_ns = std::floor(2.0 * vpp * ga * (double(w.pp_comm) / kGiB / p.pp_overlap * 1e9)) * (1 - p.pp_overlap);
    const double bubble = before_bubble * double(pp - 1) / double(ga * vpp);
    e.exposed_dp_s = dp_comm * 1e-9;
    e.exposed_dp_ep_s = dp_ep_comm * 1e-9;
    e.exposed_tp_s = tp_comm * 1e-9;
    e.exposed_ep_s = ep_comm * 1e-9;
    e.exposed_pp_s = pp_ns * 1e-9;
    e.bubble_s = bubble * 1e-9;
    e.compute_s = compute * 1e-9;
    e.exposed_s = exposed * 1e-9;
    e.total_s = (compute + exposed + bubble + pp_ns) * 1e-9;
    return e;
}

BusbwEstimate estimate_simai_import(const LlmWorkload& w, uint32_t hosts, const BusbwRatios& ratios, Diagnostics& warnings) {
    if (!w.trace || w.trace->format != "simai") throw InputError("workload.collectives.model", "the busbw model needs a SimAI/AICB import");
    SimaiWorkload s = read_simai_workload(read_text_file(w.trace->path), w.trace->path.string(), warnings);
    const uint32_t world = complete_simai_parallelism(s, *w.trace, hosts, warnings);
    return simai_busbw_estimate(s, int(world), w.collectives.busbw, ratios);
}

LlmOutcome busbw_outcome(const BusbwEstimate& e) {
    LlmOutcome o;
    o.iteration_time_s = e.total_s;
    RankBreakdown b;
    b.compute_s = e.compute_s;
    b.exposed_tp_s = e.exposed_tp_s;
    b.exposed_pp_s = e.exposed_pp_s;
    b.exposed_dp_s = e.exposed_dp_s + e.exposed_dp_ep_s;
    b.exposed_ep_s = e.exposed_ep_s;
    b.bubble_s = e.bubble_s;
    b.idle_s = 0;
    o.ranks.push_back(b);
    return o;
}

}  // namespace orrery
