#include "io/hpcc_flows.h"

#include "common/memory_budget.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "common/diagnostics.h"
#include "common/quantity.h"
#include "io/token_stream.h"
#include "net/ns3_arith.h"
#include "scenario/load.h"

namespace orrery {

std::vector<FlowSpec> read_hpcc_flows(const std::string& text, const std::string& source) {
    TokenStream in(text, source);
    const uint64_t count = in.unsigned_integer("the flow count", 1 << 28);
    std::vector<FlowSpec> flows;
    refuse_beyond_memory(source, "reading " + std::to_string(count) + " flows", count * (sizeof(FlowSpec) + source.size() + 48));
    flows.reserve(count);
    std::map<std::pair<NodeId, NodeId>, uint16_t> next_port;
    double previous_start = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const std::string ordinal = "flow " + std::to_string(i + 1) + " of " + std::to_string(count);
        FlowSpec f;
        f.src = NodeId(in.unsigned_integer("the source node of " + ordinal, 0xffff));
        f.where = in.where();
        f.dst = NodeId(in.unsigned_integer("the destination node of " + ordinal, 0xffff));
        f.priority = int(in.unsigned_integer("the priority class (pg) of " + ordinal, 7));
        if (f.priority == 0) in.fail("priority class 0 of " + ordinal + " is the control queue; data flows use 1..7");
        f.dport = uint16_t(in.unsigned_integer("the destination port of " + ordinal, 65535));
        uint64_t size = in.unsigned_integer("the size in bytes of " + ordinal, uint64_t(INT64_MAX));
        if (size == 0) in.fail(ordinal + " has size 0; flows carry at least one byte");
        f.size = Bytes(int64_t(size));
        double start = in.number("the start time in seconds of " + ordinal);
        if (start < 0) in.fail(ordinal + " starts at a negative time");
        if (start < previous_start)
            in.fail(ordinal + " starts at " + std::to_string(start) + " s, before the flow above it (" + std::to_string(previous_start) +
                    " s): the file must be sorted by start time, as the reference reads it as a cursor");
        if (f.src == f.dst) in.fail(ordinal + " goes from node " + std::to_string(f.src) + " to itself");
        previous_start = start;
        f.start = Picoseconds(net::ns3_seconds_to_ns(start) * 1000);
        auto [it, fresh] = next_port.emplace(std::make_pair(f.src, f.dst), uint16_t(10000));
        f.sport = it->second++;
        flows.push_back(f);
    }
    if (!in.at_end())
        in.fail("unexpected content after the " + std::to_string(count) + " flows the first line announces: \"" + in.word("") + "\"");
    return flows;
}

std::vector<FlowSpec> read_hpcc_flow_file(const std::filesystem::path& file) {
    return read_hpcc_flows(read_text_file(file), file.string());
}

namespace {
// The shortest decimal seconds that the reference's Seconds(double(s)) maps back to exactly `ns`.
std::string seconds_text(int64_t ns) {
    char buf[64];
    for (int digits = 9; digits <= 12; ++digits) {
        for (double nudge : {0.0, 0.25, 0.5}) {
            std::snprintf(buf, sizeof buf, "%.*f", digits, (double(ns) + nudge) / 1e9);
            if (net::ns3_seconds_to_ns(std::strtod(buf, nullptr)) == ns) return buf;
        }
    }
    throw InputError("flow start", "cannot write " + std::to_string(ns) + " ns exactly in seconds");
}
}  // namespace

std::string write_hpcc_flows(const std::vector<FlowSpec>& flows) {
    std::string out = std::to_string(flows.size()) + "\n";
    for (const FlowSpec& f : flows) {
        if (f.start.count % 1000 != 0)
            throw InputError(f.where, "start time " + format_time(f.start) + " has no exact nanosecond, the HPCC flow format's resolution");
        out += std::to_string(f.src) + " " + std::to_string(f.dst) + " " + std::to_string(f.priority) + " " + std::to_string(f.dport) +
               " " + std::to_string(f.size.count) + " " + seconds_text(f.start.count / 1000) + "\n";
    }
    return out;
}

}  // namespace orrery
