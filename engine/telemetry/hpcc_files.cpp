#include "telemetry/hpcc_files.h"

#include <cinttypes>
#include <cstdio>

namespace orrery {

std::string format_hpcc_fct(const Batch& b, const ExperimentResult& r) {
    std::string out;
    char line[160];
    for (const FlowResult& fr : r.flows) {
        if (fr.finish == net::kNever) continue;
        const net::FlowInfo& f = b.flow[fr.flow];
        std::snprintf(line, sizeof line, "%08x %08x %u %u %" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu64 "\n", f.sip, f.dip, unsigned(f.sport),
                      unsigned(f.dport), f.size, f.start / 1000, (fr.finish - f.start) / 1000, f.standalone_fct_ns);
        out += line;
    }
    return out;
}

std::string format_hpcc_pfc(const ExperimentResult& r) {
    std::string out;
    char line[96];
    for (const net::PfcEvent& e : r.pfc) {
        std::snprintf(line, sizeof line, "%" PRId64 " %u %u %u %u\n", e.time / 1000, e.node, unsigned(e.node_type), unsigned(e.ifindex),
                      unsigned(e.pause));
        out += line;
    }
    return out;
}

std::string format_hpcc_qlen(const ExperimentResult& r) {
    std::string out;
    for (const QueueSnapshot& s : r.queues) {
        out += "time: " + std::to_string(s.time / 1000) + "\n";
        for (const QueueSnapshot::Port& p : s.ports) {
            out += std::to_string(p.node) + " " + std::to_string(p.ifindex);
            for (uint32_t c : p.counts) {
                out += ' ';
                out += std::to_string(c);
            }
            out += "\n";
        }
    }
    return out;
}

}  // namespace orrery
