// Map: kKeys (every key, its value shape, and why it is not modelled where it is not) →
// read_hpcc_config() (shape checks) → scenario_from_hpcc_config() (meaning).
#include "io/hpcc_config.h"

#include <cstdio>
#include <cstring>

#include <cerrno>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/nesting.h"
#include "common/quantity.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace orrery {
namespace {

enum class Shape { uint, number, rate, path, map, triple };

struct KeyInfo {
    const char* key;
    Shape shape;
    const char* not_modelled;  // why Orrery ignores it; nullptr when it is modelled
};

constexpr KeyInfo kKeys[] = {
    {"ENABLE_QCN", Shape::uint, nullptr},
    {"USE_DYNAMIC_PFC_THRESHOLD", Shape::uint, nullptr},  // 1 is what the reference does whatever it says; 0 is warned below
    {"CLAMP_TARGET_RATE", Shape::uint, nullptr},
    {"PAUSE_TIME", Shape::number, "PFC pauses never expire in the reference model, so the pause time has no effect"},
    {"DATA_RATE", Shape::rate, "the reference reads it but takes every rate from the topology file"},
    {"LINK_DELAY", Shape::path, "the reference reads it but takes every delay from the topology file"},
    {"PACKET_PAYLOAD_SIZE", Shape::uint, nullptr},
    {"L2_CHUNK_SIZE", Shape::uint, nullptr},
    {"L2_ACK_INTERVAL", Shape::uint, nullptr},
    {"L2_BACK_TO_ZERO", Shape::uint, nullptr},
    {"TOPOLOGY_FILE", Shape::path, nullptr},
    {"FLOW_FILE", Shape::path, nullptr},
    {"TRACE_FILE", Shape::path, "Orrery writes no binary packet trace (mix.tr); it records queues and flows in its results store instead"},
    {"TRACE_OUTPUT_FILE", Shape::path, "Orrery writes no binary packet trace (mix.tr)"},
    {"SIMULATOR_STOP_TIME", Shape::number, nullptr},
    {"ALPHA_RESUME_INTERVAL", Shape::number, nullptr},
    {"RP_TIMER", Shape::number, nullptr},
    {"EWMA_GAIN", Shape::number, nullptr},
    {"FAST_RECOVERY_TIMES", Shape::uint, nullptr},
    {"RATE_AI", Shape::rate, nullptr},
    {"RATE_HAI", Shape::rate, nullptr},
    {"ERROR_RATE_PER_LINK", Shape::number, nullptr},
    {"CC_MODE", Shape::uint, nullptr},
    {"RATE_DECREASE_INTERVAL", Shape::number, nullptr},
    {"MIN_RATE", Shape::rate, nullptr},
    {"FCT_OUTPUT_FILE", Shape::path, nullptr},
    {"HAS_WIN", Shape::uint, nullptr},
    {"GLOBAL_T", Shape::uint, nullptr},
    {"MI_THRESH", Shape::uint, nullptr},
    {"VAR_WIN", Shape::uint, nullptr},
    {"FAST_REACT", Shape::uint, nullptr},
    {"U_TARGET", Shape::number, nullptr},
    {"INT_MULTI", Shape::uint, nullptr},
    {"RATE_BOUND", Shape::uint, nullptr},
    {"ACK_HIGH_PRIO", Shape::uint, nullptr},
    {"DCTCP_RATE_AI", Shape::rate, nullptr},
    {"PFC_OUTPUT_FILE", Shape::path, nullptr},
    {"LINK_DOWN", Shape::triple, nullptr},
    {"ENABLE_TRACE", Shape::uint, "Orrery writes no binary packet trace (mix.tr)"},
    {"KMAX_MAP", Shape::map, nullptr},
    {"KMIN_MAP", Shape::map, nullptr},
    {"PMAX_MAP", Shape::map, nullptr},
    {"BUFFER_SIZE", Shape::uint, nullptr},
    {"QLEN_MON_FILE", Shape::path, nullptr},
    {"QLEN_MON_START", Shape::uint, nullptr},
    {"QLEN_MON_END", Shape::uint, nullptr},
    {"MULTI_RATE", Shape::uint, nullptr},
    {"SAMPLE_FEEDBACK", Shape::uint, nullptr},
    {"PINT_LOG_BASE", Shape::number, "HPCC-PINT (CC_MODE 10) is not modelled"},
    {"PINT_PROB", Shape::number, "HPCC-PINT (CC_MODE 10) is not modelled"},
    // SimAI's monitors (astra-sim-alibabacloud ns-3 front end).
    {"QLEN_MON_INTERVAL", Shape::uint, nullptr},
    {"MON_START", Shape::uint, "SimAI's bandwidth/rate/CNP monitors are not reproduced; Orrery samples queues and rates itself (output.sample_interval)"},
    {"MON_END", Shape::uint, "SimAI's bandwidth/rate/CNP monitors are not reproduced"},
    {"QP_MON_INTERVAL", Shape::uint, "SimAI's per-QP rate monitor is not reproduced; Orrery records flow rates itself"},
    {"BW_MON_INTERVAL", Shape::uint, "SimAI's bandwidth monitor is not reproduced"},
    {"BW_MON_FILE", Shape::path, "SimAI's bandwidth monitor is not reproduced"},
    {"RATE_MON_FILE", Shape::path, "SimAI's rate monitor is not reproduced"},
    {"CNP_MON_FILE", Shape::path, "SimAI's CNP monitor is not reproduced"},
};

const KeyInfo* key_info(const std::string& key) {
    for (const KeyInfo& k : kKeys)
        if (key == k.key) return &k;
    return nullptr;
}

// Digits only, and small enough for a signed 64-bit integer (what the reference's readers hold them in).
bool is_uint(const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    const std::string digits = s.substr(std::min(s.find_first_not_of('0'), s.size() - 1));
    return digits.size() < 19 || (digits.size() == 19 && digits <= "9223372036854775807");
}
// A number std::stod reads back: finite, and neither overflowing nor underflowing a double (1e-400 is refused:
// stod throws on it).
bool is_number(const std::string& s) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && errno != ERANGE;
}

// Checks one entry's values against its shape; returns an error message or "".
std::string check_shape(const KeyInfo& k, const std::vector<std::string>& v) {
    auto count = [&](size_t n) { return v.size() == n ? std::string() : "expected " + std::to_string(n) + " value" + (n > 1 ? "s" : "") + ", found " + std::to_string(v.size()); };
    std::string why;
    switch (k.shape) {
        case Shape::uint:
            if (!(why = count(1)).empty()) return why;
            return is_uint(v[0]) ? "" : "expected a non-negative integer below 2^63, found \"" + v[0] + "\"";
        case Shape::number:
            if (!(why = count(1)).empty()) return why;
            return is_number(v[0]) ? "" : "expected a number within a double's range, found \"" + v[0] + "\"";
        case Shape::rate:
            if (!(why = count(1)).empty()) return why;
            return parse_rate(v[0], &why) ? "" : "expected an ns-3 data rate like 1000Mb/s, found \"" + v[0] + "\": " + why;
        case Shape::path: return count(1);
        case Shape::triple:
            if (!(why = count(3)).empty()) return why;
            for (const std::string& s : v)
                if (!is_uint(s)) return "expected three non-negative integers (time_us nodeA nodeB), found \"" + s + "\"";
            return "";
        case Shape::map: {
            if (v.empty() || !is_uint(v[0])) return "expected a count then that many \"rate_bps value\" pairs";
            if (std::stoull(v[0]) > v.size()) return "the count " + v[0] + " announces more rate/value pairs than the line holds (" + std::to_string(v.size() - 1) + " values)";
            size_t n = std::stoul(v[0]);
            if (v.size() != 1 + 2 * n)
                return "the count " + v[0] + " announces " + std::to_string(2 * n) + " values after it (rate/value pairs), found " + std::to_string(v.size() - 1);
            for (size_t i = 0; i < n; ++i) {
                if (!is_uint(v[1 + 2 * i])) return "expected a link rate in bit/s, found \"" + v[1 + 2 * i] + "\"";
                if (!is_number(v[2 + 2 * i])) return "expected a number, found \"" + v[2 + 2 * i] + "\"";
            }
            return "";
        }
    }
    return "";
}

}  // namespace

Diagnostics in_config_terms(const HpccConfig& config, const std::string& scenario_source, const Diagnostics& d) {
    // Scenario fields written by scenario_from_hpcc_config, and the key each came from (longest prefix wins).
    static const std::vector<std::pair<std::string, const char*>> kFieldKeys = [] {
        std::vector<std::pair<std::string, const char*>> keys = {
        {"network.packet_payload", "PACKET_PAYLOAD_SIZE"}, {"network.buffer_per_switch", "BUFFER_SIZE"},
        {"network.ecn.enabled", "ENABLE_QCN"}, {"network.ecn.thresholds", "KMAX_MAP"}, {"cc.ecn", "KMAX_MAP"},
        {"network.ack.interval_packets", "L2_ACK_INTERVAL"}, {"network.loss_recovery.chunk", "L2_CHUNK_SIZE"},
        {"network.loss_recovery.back_to_zero", "L2_BACK_TO_ZERO"}, {"network.error_rate_per_link", "ERROR_RATE_PER_LINK"},
        {"cc.algorithm", "CC_MODE"}, {"cc.min_rate", "MIN_RATE"}, {"cc.rate_bound", "RATE_BOUND"}, {"cc.window", "HAS_WIN"},
        {"cc.variable_window", "VAR_WIN"}, {"cc.global_base_rtt", "GLOBAL_T"}, {"cc.ack_high_priority", "ACK_HIGH_PRIO"},
        {"workload.stop_time", "SIMULATOR_STOP_TIME"}, {"workload.file", "FLOW_FILE"}, {"workload", "FLOW_FILE"}, {"topology", "TOPOLOGY_FILE"},
        {"output.queue_monitor.start", "QLEN_MON_START"}, {"output.queue_monitor.end", "QLEN_MON_END"}};
        // Each CC parameter's key in the reference (net/cc_params.h).
#define ORRERY_CC_PARAM_KEY(cc, type, member, value, kind, min, max, reference, ...) \
    if (std::string_view(reference).size()) keys.emplace_back("cc." #cc "." #member, reference);
        ORRERY_CC_PARAMS(ORRERY_CC_PARAM_KEY)
#undef ORRERY_CC_PARAM_KEY
        return keys;
    }();
    Diagnostics out;
    const std::string prefix = scenario_source + ": ";
    for (const Diagnostic& item : d.items()) {
        Diagnostic t = item;
        if (item.where.rfind(prefix, 0) == 0) {
            const std::string path = item.where.substr(prefix.size());
            const char* key = nullptr;
            size_t best = 0;
            for (const auto& [field, k] : kFieldKeys) {
                const size_t n = field.size();
                if (n > best && path.compare(0, n, field) == 0 && (path.size() == n || path[n] == '.' || path[n] == '[')) {
                    key = k;
                    best = n;
                }
            }
            std::string name = key ? key : "";
            if (name == "KMAX_MAP" && path.find("kmin") != std::string::npos) name = "KMIN_MAP";
            if (name == "KMAX_MAP" && path.find("pmax") != std::string::npos) name = "PMAX_MAP";
            if (!name.empty()) {
                // Advice given in scenario JSON reads, in a config, as the keys to change.
                if (const size_t json_advice = t.message.find("; add {\"rate\""); json_advice != std::string::npos)
                    t.message = t.message.substr(0, json_advice) + "; add that rate (in bit/s) to KMIN_MAP, KMAX_MAP and PMAX_MAP";
                const HpccConfigEntry* e = config.find(name);
                t.where = config.source + (e ? ":" + std::to_string(e->line) : "");
                t.message = name + ": " + t.message + (e ? "" : " (the key is absent: this is the default)");
            }
        }
        if (t.severity == Diagnostic::Severity::error) out.error(t.where, t.message);
        else out.warning(t.where, t.message);
    }
    return out;
}

std::vector<std::string> known_hpcc_config_keys() {
    std::vector<std::string> out;
    for (const KeyInfo& k : kKeys) out.push_back(k.key);
    return out;
}

const HpccConfigEntry* HpccConfig::find(const std::string& key) const {
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
        if (it->key == key) return &*it;
    return nullptr;
}

HpccConfig read_hpcc_config(const std::string& text, const std::string& source, const std::filesystem::path& folder,
                            Diagnostics& diags) {
    HpccConfig config;
    config.source = source;
    config.folder = folder;
    std::map<std::string, size_t> first_line;
    size_t line_number = 0, start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        ++line_number;
        std::vector<std::string> tokens;
        for (size_t i = 0; i < line.size();) {
            while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
            size_t j = i;
            while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
            if (j > i) tokens.push_back(line.substr(i, j - i));
            i = j;
        }
        if (tokens.empty()) continue;
        const std::string where = source + ":" + std::to_string(line_number);
        if (!valid_utf8(line)) {
            diags.error(where, "not valid UTF-8 text (a file name or value with bytes of another encoding)");
            continue;
        }
        const KeyInfo* info = key_info(tokens[0]);
        if (!info) {
            std::string hint = closest_match(tokens[0], known_hpcc_config_keys());
            diags.warning(where, "unknown key \"" + tokens[0] + "\", skipped as the reference skips it" +
                                     (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
            continue;
        }
        HpccConfigEntry entry{tokens[0], std::vector<std::string>(tokens.begin() + 1, tokens.end()), line_number};
        std::string problem = check_shape(*info, entry.values);
        if (!problem.empty()) {
            diags.error(where, entry.key + ": " + problem);
            continue;
        }
        if (info->not_modelled) diags.warning(where, entry.key + " is not modelled by Orrery: " + info->not_modelled);
        if (entry.key == "USE_DYNAMIC_PFC_THRESHOLD" && entry.values[0] != "1")
            diags.warning(where, "USE_DYNAMIC_PFC_THRESHOLD " + entry.values[0] +
                                     " has no effect, in the reference as in Orrery: the reference reads it into QbbNetDevice's DynamicThreshold, "
                                     "which nothing reads, so its switches always use the dynamic threshold (a static one: network.pfc.dynamic_threshold "
                                     "false in a scenario)");
        if (entry.key == "LINK_DOWN" && entry.values != std::vector<std::string>{"0", "0", "0"})
            diags.warning(where, "LINK_DOWN " + entry.values[0] + " " + entry.values[1] + " " + entry.values[2] +
                                     " is not modelled by Orrery: link failures are not simulated, the link stays up");
        if (auto [it, fresh] = first_line.emplace(entry.key, line_number); !fresh)
            diags.warning(where, entry.key + " was already given on line " + std::to_string(it->second) + "; this later value wins, as in the reference");
        config.entries.push_back(std::move(entry));
    }
    return config;
}

std::filesystem::path resolve_config_file(const HpccConfig& config, const HpccConfigEntry& entry,
                                          const std::filesystem::path& working_dir, Diagnostics& diags) {
    const std::filesystem::path name = entry.values[0];
    const std::string where = config.source + ":" + std::to_string(entry.line);
    if (name.is_absolute()) {
        if (!std::filesystem::exists(name)) diags.error(where, entry.key + " " + name.string() + ": file not found");
        return name;
    }
    if (std::filesystem::exists(working_dir / name)) return working_dir / name;
    if (std::filesystem::exists(config.folder / name)) {
        diags.warning(where, entry.key + " " + name.string() + " is not in the working directory " + working_dir.string() +
                                 ", where the reference looks; using the one beside the config");
        return config.folder / name;
    }
    diags.error(where, entry.key + " " + name.string() + ": file not found in the working directory " + working_dir.string() +
                           " (where the reference looks) nor beside the config");
    return working_dir / name;
}

namespace {

// A config's keys as the conversion reads them: absent keys take third.cc's defaults.
struct ConfigKeys {
    const HpccConfig& config;

    const HpccConfigEntry* get(const char* key) const { return config.find(key); }
    uint64_t u(const char* key, uint64_t fallback) const {
        const HpccConfigEntry* e = get(key);
        return e ? std::stoull(e->values[0]) : fallback;
    }
    double d(const char* key, double fallback) const {
        const HpccConfigEntry* e = get(key);
        return e ? std::stod(e->values[0]) : fallback;
    }
    bool flag(const char* key, bool fallback) const { return u(key, fallback ? 1 : 0) != 0; }
    std::string rate(const char* key, const char* fallback) const {
        const HpccConfigEntry* e = get(key);
        return format_rate(*parse_rate(e ? e->values[0] : fallback));
    }
    static std::string micro(double us) { return format_time(Picoseconds(std::llround(us * 1e6))); }
    std::string where(const HpccConfigEntry* e) const { return config.source + ":" + std::to_string(e ? e->line : 0); }
};

// The scenario's "network": ECN maps, payload, buffer, ACK interval, loss recovery, link errors.
nlohmann::json network_json(const ConfigKeys& k, Diagnostics& diags) {
    nlohmann::json thresholds = nlohmann::json::array();
    std::map<uint64_t, nlohmann::json> by_rate;
    for (const char* key : {"KMIN_MAP", "KMAX_MAP", "PMAX_MAP"}) {
        const HpccConfigEntry* e = k.get(key);
        if (!e) continue;
        size_t n = std::stoul(e->values[0]);
        for (size_t i = 0; i < n; ++i) {
            uint64_t r = std::stoull(e->values[1 + 2 * i]);
            double v = std::stod(e->values[2 + 2 * i]);
            nlohmann::json& t = by_rate[r];
            t["rate"] = format_rate(BitsPerSecond(int64_t(r)));
            if (std::string(key) == "PMAX_MAP") t["pmax"] = v;
            else t[std::string(key) == "KMIN_MAP" ? "kmin" : "kmax"] = format_size(Bytes(std::llround(v * 1000)));
        }
    }
    for (auto& [r, t] : by_rate) {
        for (const char* part : {"kmin", "kmax", "pmax"})
            if (!t.contains(part))
            {
                const char* key = std::string(part) == "kmin" ? "KMIN_MAP" : std::string(part) == "kmax" ? "KMAX_MAP" : "PMAX_MAP";
                diags.error(k.where(k.get(key)), std::string(key) + ": no value for " + t["rate"].get<std::string>() +
                                                 " links, which another ECN map names: KMIN_MAP, KMAX_MAP and PMAX_MAP must name the same rates");
            }
        thresholds.push_back(t);
    }
    // L2_ACK_INTERVAL is in bytes, counted against the receiver's next expected byte: 1 (or up to a packet)
    // acknowledges every packet, k packets' worth every k-th.
    const uint64_t payload = std::max<uint64_t>(1, k.u("PACKET_PAYLOAD_SIZE", 1000)), ack_bytes = k.u("L2_ACK_INTERVAL", 1);
    const uint64_t ack_packets = ack_bytes <= payload ? 1 : (ack_bytes + payload - 1) / payload;
    if (ack_bytes > payload && ack_bytes % payload != 0) {
        char average[32];
        std::snprintf(average, sizeof average, "%.2f", double(ack_bytes) / double(payload));
        diags.warning(k.where(k.get("L2_ACK_INTERVAL")), "L2_ACK_INTERVAL " + std::to_string(ack_bytes) + " is not a whole number of " + std::to_string(payload) +
                                                         "-byte packets: an ACK every " + std::to_string(ack_packets) +
                                                         " packets (the reference's fall unevenly, every " + average + " packets on average)");
    }
    nlohmann::json network = {
        {"packet_payload", format_size(Bytes(int64_t(k.u("PACKET_PAYLOAD_SIZE", 1000))))},
        {"buffer_per_switch", format_size(Bytes(int64_t(k.u("BUFFER_SIZE", 16)) << 20))},
        {"ecn", {{"enabled", k.flag("ENABLE_QCN", true)}, {"thresholds", thresholds}}},
        {"ack", {{"interval_packets", ack_packets}}},
        {"loss_recovery", {{"chunk", format_size(Bytes(int64_t(k.u("L2_CHUNK_SIZE", 4000))))}, {"back_to_zero", k.flag("L2_BACK_TO_ZERO", false)}}},
        {"error_rate_per_link", k.d("ERROR_RATE_PER_LINK", 0.0)},
        {"nic", {{"retransmit_timeout", "off"}}},  // the reference's NIC has none
    };
    if (k.u("L2_ACK_INTERVAL", 1) == 0) diags.error(k.where(k.get("L2_ACK_INTERVAL")), "L2_ACK_INTERVAL 0 would acknowledge nothing; use 1 or more");
    if (const HpccConfigEntry* e = k.get("L2_CHUNK_SIZE"); e && k.u("L2_CHUNK_SIZE", 4000) == 0) {
        // 0 turns chunk ACKs off (RdmaHw's L2ChunkSize: "disable chunk mode if equals to 0"), but the reference
        // then divides by it wherever it rounds to a chunk: in go-back-to-zero and below an ACK milestone.
        if (k.flag("L2_BACK_TO_ZERO", false) || k.u("L2_ACK_INTERVAL", 1) > 1)
            diags.error(k.where(e), "L2_CHUNK_SIZE 0 with " + std::string(k.flag("L2_BACK_TO_ZERO", false) ? "L2_BACK_TO_ZERO 1" : "L2_ACK_INTERVAL above 1") +
                                      ": the reference divides by the chunk size there (RdmaHw::ReceiverCheckSeq), a division by zero; give a chunk size");
        else
            diags.warning(k.where(e), "L2_CHUNK_SIZE 0: no chunk ACKs (each data packet is ACKed as L2_ACK_INTERVAL says); "
                                    "the reference would divide by zero with L2_BACK_TO_ZERO 1 or L2_ACK_INTERVAL above 1");
    }
    return network;
}

// The scenario's "cc": the CC of CC_MODE with the keys it reads; warnings for keys another CC reads. Null
// when CC_MODE names no CC Orrery models (an error said so).
nlohmann::json cc_json(const ConfigKeys& k, Diagnostics& diags) {
    const HpccConfig& config = k.config;
    const uint64_t mode = k.u("CC_MODE", 1);
    std::map<uint64_t, std::string> algorithms;  // the reference's CC_MODE of each CC it has
    std::string modelled;
    for (const std::string& name : cc_algorithm_names())
        if (const int reference = hpcc_cc_mode(*cc_algorithm_named(name))) {
            algorithms[uint64_t(reference)] = name;
            modelled += (modelled.empty() ? "" : ", ") + std::to_string(reference) + " (" + name + ")";
        }
    nlohmann::json cc;
    if (!algorithms.count(mode)) {
        diags.error(k.where(k.get("CC_MODE")), "CC_MODE " + std::to_string(mode) + (mode == 10 ? " (HPCC-PINT) is not modelled" : " is not a congestion control of the reference") +
                                               "; Orrery models " + modelled);
    } else {
        const std::string algorithm = algorithms.at(mode);
        cc = {{"algorithm", algorithm},
              {"min_rate", k.rate("MIN_RATE", "100Mb/s")},
              {"rate_bound", k.flag("RATE_BOUND", true)},
              {"window", k.flag("HAS_WIN", true)},
              {"variable_window", k.flag("HAS_WIN", true) && k.flag("VAR_WIN", false)},
              {"global_base_rtt", k.u("GLOBAL_T", 1) == 1},
              {"ack_high_priority", k.u("ACK_HIGH_PRIO", 0) != 0}};
        // Keys of one congestion control do nothing under another, in the reference as here: say so on their line.
        const std::map<std::string, std::set<uint64_t>> used_by = {
            {"RATE_AI", {1, 3, 7}}, {"RATE_HAI", {1, 7}}, {"ALPHA_RESUME_INTERVAL", {1}}, {"RATE_DECREASE_INTERVAL", {1}},
            {"RP_TIMER", {1}}, {"FAST_RECOVERY_TIMES", {1}}, {"CLAMP_TARGET_RATE", {1}}, {"EWMA_GAIN", {1, 8}},
            {"U_TARGET", {3}}, {"MI_THRESH", {3}}, {"FAST_REACT", {3}}, {"MULTI_RATE", {3}}, {"SAMPLE_FEEDBACK", {3}},
            {"INT_MULTI", {3}}, {"DCTCP_RATE_AI", {8}}};
        std::map<int, std::string> unused;  // by line: the reference's run.py writes every key for every CC
        for (const auto& [key, modes] : used_by)
            if (const HpccConfigEntry* e = k.get(key.c_str()); e && !modes.count(mode)) unused[e->line] = key;
        if (!unused.empty()) {
            std::string list;
            for (const auto& [line, key] : unused) list += (list.empty() ? "" : ", ") + key + " (line " + std::to_string(line) + ")";
            diags.warning(config.source + ":" + std::to_string(unused.begin()->first),
                          list + (unused.size() == 1 ? " has" : " have") + " no effect with CC_MODE " + std::to_string(mode) + " (" + algorithm +
                              "), in the reference as in Orrery");
        }
        if (k.flag("VAR_WIN", false) && !k.flag("HAS_WIN", true))
            diags.warning(k.where(k.get("VAR_WIN")), "VAR_WIN 1 has no effect with HAS_WIN 0 (no window at all)");
        if (algorithm == "dcqcn")
            cc["dcqcn"] = {{"rate_ai", k.rate("RATE_AI", "5Mb/s")}, {"rate_hai", k.rate("RATE_HAI", "50Mb/s")},
                           {"alpha_resume_interval", ConfigKeys::micro(k.d("ALPHA_RESUME_INTERVAL", 55))},
                           {"rate_decrease_interval", ConfigKeys::micro(k.d("RATE_DECREASE_INTERVAL", 4))},
                           {"rp_timer", ConfigKeys::micro(k.d("RP_TIMER", 300))}, {"g", k.d("EWMA_GAIN", 0.0)},  // third.cc: 1 / 16 in integers
                           {"fast_recovery_times", k.u("FAST_RECOVERY_TIMES", 5)}, {"clamp_target_rate", k.flag("CLAMP_TARGET_RATE", false)}};
        else if (algorithm == "hpcc")
            cc["hpcc"] = {{"eta", k.d("U_TARGET", 0.95)}, {"mi_thresh", k.u("MI_THRESH", 5)}, {"rate_ai", k.rate("RATE_AI", "5Mb/s")},
                          {"fast_react", k.flag("FAST_REACT", true)}, {"multi_rate", k.flag("MULTI_RATE", true)},
                          {"sample_feedback", k.flag("SAMPLE_FEEDBACK", false)}, {"int_multi", k.u("INT_MULTI", 1)}};
        else if (algorithm == "timely")
            cc["timely"] = {{"rate_ai", k.rate("RATE_AI", "5Mb/s")}, {"rate_hai", k.rate("RATE_HAI", "50Mb/s")}};
        else
            cc["dctcp"] = {{"rate_ai", k.rate("DCTCP_RATE_AI", "1000Mb/s")}, {"g", k.d("EWMA_GAIN", 0.0)}};
    }
    return cc;
}

// The scenario's "output": the reference-format files, next to the scenario, and the queue monitor.
nlohmann::json output_json(const ConfigKeys& k, Diagnostics& diags) {
    nlohmann::json files = nlohmann::json::object();
    if (auto* e = k.get("FCT_OUTPUT_FILE")) files["fct"] = e->values[0];
    if (auto* e = k.get("PFC_OUTPUT_FILE")) files["pfc"] = e->values[0];
    if (auto* e = k.get("QLEN_MON_FILE")) files["qlen"] = e->values[0];
    nlohmann::json output = {{"hpcc_files", files}};
    if (k.get("QLEN_MON_FILE")) {
        output["queue_monitor"] = {{"start", format_time(Picoseconds(int64_t(k.u("QLEN_MON_START", 2000000000)) * 1000))},
                                   {"end", format_time(Picoseconds(int64_t(k.u("QLEN_MON_END", 2100000000)) * 1000))},
                                   {"interval", format_time(Picoseconds(int64_t(k.u("QLEN_MON_INTERVAL", 100)) * 1000))}};
        if (k.u("QLEN_MON_END", 2100000000) < k.u("QLEN_MON_START", 2000000000))
            diags.error(k.where(k.get("QLEN_MON_END")), "QLEN_MON_END is before QLEN_MON_START");
    }
    return output;
}

}  // namespace

nlohmann::json scenario_from_hpcc_config(const HpccConfig& config, const std::filesystem::path& working_dir,
                                         const std::filesystem::path& scenario_dir, Diagnostics& diags) {
    const ConfigKeys k{config};
    auto relative = [&](const std::filesystem::path& p) {
        std::error_code ec;
        std::filesystem::path r = std::filesystem::relative(p, scenario_dir, ec);
        return (ec || r.empty() ? std::filesystem::absolute(p) : r).generic_string();
    };

    nlohmann::json s = {{"format", "orrery-scenario"}, {"version", 1},
                        {"name", std::filesystem::path(config.source).stem().string()},
                        {"description", "Imported from the HPCC/SimAI config " + config.source}};
    if (const HpccConfigEntry* t = k.get("TOPOLOGY_FILE")) {
        std::filesystem::path file = resolve_config_file(config, *t, working_dir, diags);
        s["topology"] = {{"import", relative(file)}, {"format", "hpcc"}};
    } else {
        diags.error(config.source, "no TOPOLOGY_FILE: the reference reads the fabric from it (SimAI passes it with -n instead)");
    }

    // Values the conversion scales must fit what they scale into: refused here with their line, never wrapped.
    const auto at_most = [&](const char* key, double limit, const std::string& why) {
        if (const HpccConfigEntry* e = k.get(key); e && std::stod(e->values[0]) > limit) diags.error(k.where(e), std::string(key) + " " + e->values[0] + ": " + why);
    };
    at_most("BUFFER_SIZE", 4095, "at most 4095 (MiB): the switch buffer model counts bytes in 32 bits");
    at_most("SIMULATOR_STOP_TIME", 9.2e6, "at most 9.2e6 (seconds): time is counted in 64-bit picoseconds");
    at_most("QLEN_MON_START", 9.2e15, "at most 9.2e15 (ns): time is counted in 64-bit picoseconds");
    at_most("QLEN_MON_END", 9.2e15, "at most 9.2e15 (ns): time is counted in 64-bit picoseconds");
    at_most("PACKET_PAYLOAD_SIZE", 65536, "at most 65536 bytes");
    at_most("L2_CHUNK_SIZE", 1e15, "at most 1e15 bytes");
    if (diags.has_errors()) return {};

    s["network"] = network_json(k, diags);
    if (nlohmann::json cc = cc_json(k, diags); !cc.is_null()) s["cc"] = cc;

    nlohmann::json workload = {{"kind", "flows"}};
    if (const HpccConfigEntry* fl = k.get("FLOW_FILE")) workload["file"] = relative(resolve_config_file(config, *fl, working_dir, diags));
    else diags.error(config.source, "no FLOW_FILE: the reference reads the flows from it");
    if (k.get("SIMULATOR_STOP_TIME")) workload["stop_time"] = format_time(Picoseconds(std::llround(k.d("SIMULATOR_STOP_TIME", 0) * 1e12)));
    s["workload"] = workload;
    s["output"] = output_json(k, diags);
    return s;
}


std::string write_hpcc_config(const Scenario& s, const std::string& topology_file, const std::string& flow_file) {
    const NetworkSpec& n = s.network;
    const CcSpec& c = s.cc;
    auto us = [](Picoseconds t) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.10g", double(t.count) / 1e6);
        return std::string(buf);
    };
    auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.10g", v);
        return std::string(buf);
    };
    auto mbps = [](BitsPerSecond r) { return format_rate(r); };
    auto line = [](std::string& out, const std::string& key, const std::string& value) { out += key + " " + value + "\n"; };
    std::string out;
    line(out, "ENABLE_QCN", n.ecn_enabled ? "1" : "0");
    line(out, "USE_DYNAMIC_PFC_THRESHOLD", "1");  // the reference ignores it; the caller refuses a static threshold
    line(out, "PACKET_PAYLOAD_SIZE", std::to_string(n.packet_payload.count));
    line(out, "TOPOLOGY_FILE", topology_file);
    line(out, "FLOW_FILE", flow_file);
    if (!s.output.hpcc_fct_file.empty()) line(out, "FCT_OUTPUT_FILE", s.output.hpcc_fct_file);
    if (!s.output.hpcc_pfc_file.empty()) line(out, "PFC_OUTPUT_FILE", s.output.hpcc_pfc_file);
    if (s.workload.stop_time) line(out, "SIMULATOR_STOP_TIME", num(double(s.workload.stop_time->count) / 1e12));
    line(out, "CC_MODE", std::to_string(hpcc_cc_mode(c.algorithm)));
    line(out, "ALPHA_RESUME_INTERVAL", us(c.dcqcn.alpha_resume_interval));
    line(out, "RATE_DECREASE_INTERVAL", us(c.dcqcn.rate_decrease_interval));
    line(out, "CLAMP_TARGET_RATE", c.dcqcn.clamp_target_rate ? "1" : "0");
    line(out, "RP_TIMER", us(c.dcqcn.rp_timer));
    const double g = c.algorithm == CcAlgorithm::dctcp ? c.dctcp.g : c.algorithm == CcAlgorithm::timely ? c.timely.g : c.dcqcn.g;
    line(out, "EWMA_GAIN", num(g));
    line(out, "FAST_RECOVERY_TIMES", std::to_string(c.dcqcn.fast_recovery_times));
    const BitsPerSecond ai = c.algorithm == CcAlgorithm::hpcc ? c.hpcc.rate_ai : c.algorithm == CcAlgorithm::timely ? c.timely.rate_ai : c.dcqcn.rate_ai;
    const BitsPerSecond hai = c.algorithm == CcAlgorithm::hpcc ? c.hpcc.rate_ai : c.algorithm == CcAlgorithm::timely ? c.timely.rate_hai : c.dcqcn.rate_hai;
    line(out, "RATE_AI", mbps(ai));
    line(out, "RATE_HAI", mbps(hai));
    line(out, "MIN_RATE", mbps(c.min_rate));
    line(out, "DCTCP_RATE_AI", mbps(c.dctcp.rate_ai));
    line(out, "ERROR_RATE_PER_LINK", num(n.error_rate_per_link));
    line(out, "L2_CHUNK_SIZE", std::to_string(n.go_back_chunk.count));
    // In bytes in the reference (1: every packet).
    line(out, "L2_ACK_INTERVAL", std::to_string(n.ack_interval_packets <= 1 ? 1 : int64_t(n.ack_interval_packets) * n.packet_payload.count));
    line(out, "L2_BACK_TO_ZERO", n.go_back_to_zero ? "1" : "0");
    line(out, "HAS_WIN", c.window ? "1" : "0");
    line(out, "GLOBAL_T", c.global_base_rtt ? "1" : "0");
    line(out, "VAR_WIN", c.variable_window ? "1" : "0");
    line(out, "FAST_REACT", c.hpcc.fast_react ? "1" : "0");
    line(out, "U_TARGET", num(c.hpcc.eta));
    line(out, "MI_THRESH", std::to_string(c.hpcc.mi_thresh));
    line(out, "INT_MULTI", std::to_string(c.hpcc.int_multi));
    line(out, "MULTI_RATE", c.hpcc.multi_rate ? "1" : "0");
    line(out, "SAMPLE_FEEDBACK", c.hpcc.sample_feedback ? "1" : "0");
    line(out, "RATE_BOUND", c.rate_bound ? "1" : "0");
    line(out, "ACK_HIGH_PRIO", c.ack_high_priority ? "1" : "0");
    line(out, "LINK_DOWN", "0 0 0");
    line(out, "ENABLE_TRACE", "0");
    const std::vector<EcnThreshold>& ecn = !c.ecn.empty() ? c.ecn : n.ecn;
    if (!ecn.empty()) {
        std::string kmax = std::to_string(ecn.size()), kmin = kmax, pmax = kmax;
        for (const EcnThreshold& t : ecn) {
            std::string r(1, ' ');
            r += std::to_string(t.rate.count);
            r += ' ';
            kmax += r + num(double(t.kmax.count) / 1000);
            kmin += r + num(double(t.kmin.count) / 1000);
            pmax += r + num(t.pmax);
        }
        line(out, "KMAX_MAP", kmax);
        line(out, "KMIN_MAP", kmin);
        line(out, "PMAX_MAP", pmax);
    }
    line(out, "BUFFER_SIZE", std::to_string(n.buffer_per_switch.count >> 20));
    if (!s.output.hpcc_qlen_file.empty()) {
        line(out, "QLEN_MON_FILE", s.output.hpcc_qlen_file);
        if (s.output.queue_monitor_start) line(out, "QLEN_MON_START", std::to_string(s.output.queue_monitor_start->count / 1000));
        if (s.output.queue_monitor_end) line(out, "QLEN_MON_END", std::to_string(s.output.queue_monitor_end->count / 1000));
    }
    return out;
}

}  // namespace orrery
