#pragma once
// The Scenario: one typed model shared by the CLI, the workbench and the tests (engine/scenario/README.md).
// Every field carries its unit in its type; defaults are the reference model's (reference/ns3-hpcc) and
// are written next to each field.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/units.h"
#include "net/cc_list.h"
#include "net/cc_params.h"
#include "topology/fabric.h"
#include "topology/fabric_events.h"
#include "topology/generators.h"
#include "workload/jobs.h"
#include "workload/spec.h"

namespace orrery {

inline constexpr int kScenarioFormatVersion = 1;
inline constexpr const char* kScenarioFormatName = "orrery-scenario";

// ---- topology -----------------------------------------------------------------------------------------
struct ExplicitTopology {
    Fabric fabric;                        // built from the node and link lists, ports finalized
    std::vector<std::string> node_names;  // as written in the scenario
};


struct ImportedTopology {
    std::string format = "hpcc";          // a name of io/fabric_formats.h's table
    std::filesystem::path path;  // resolved against the scenario's folder
};

struct TopologySpec {
    std::string generator;  // "fat-tree", "three-tier", "rail-optimized", "leaf-spine", "single-switch", "explicit", "import"
    std::variant<ThreeTierParams, RailOptimizedParams, LeafSpineParams, SingleSwitchParams, ExplicitTopology, ImportedTopology> source;
    std::vector<FabricEventSpec> events;  // topology.events: failures, repairs, degradations (topology/fabric_events.h)
};
// The names of an explicit fabric's nodes; empty for generated and imported fabrics.
const std::vector<std::string>& topology_node_names(const TopologySpec& t);

// ---- network ------------------------------------------------------------------------------------------
// ECN thresholds for ports of one link rate (the reference's KMIN_MAP / KMAX_MAP / PMAX_MAP).
struct EcnThreshold {
    BitsPerSecond rate;
    Bytes kmin, kmax;
    double pmax = 0.2;
};

// How a switch picks among equal-cost next hops (engine/net/README.md, "Load balancing").
enum class LoadBalancing { ecmp, spray, adaptive, flowlet };

inline constexpr Picoseconds kNcclRetransmitTimeout{4'096'000LL << 20};
struct NetworkSpec {
    Bytes packet_payload{1000};            // PACKET_PAYLOAD_SIZE
    Bytes buffer_per_switch{32 << 20};     // BUFFER_SIZE 32 (MiB)
    bool ecn_enabled = true;               // ENABLE_QCN
    std::vector<EcnThreshold> ecn;         // per link rate; empty = the reference's DCQCN values scaled by rate
    bool pfc_enabled = true;               // false: pause frames are ignored (the reference's QbbEnabled), lossy
    bool pfc_dynamic_threshold = true;     // false: a static threshold per (port, priority)
    int pfc_alpha_shift = 3;               // dynamic threshold = free buffer >> shift
    std::optional<Bytes> pfc_static_threshold;  // with the dynamic threshold off; default: an even split
    Bytes pfc_port_reserve{4096};
    Bytes pfc_resume_offset{3072};
    LoadBalancing load_balancing = LoadBalancing::ecmp;
    Picoseconds flowlet_gap{50'000'000};   // flowlet: an idle gap after which a flow may take another port
    bool out_of_order = false;             // nic.delivery: receivers place packets by sequence (else go-back-N)
    // nic.retransmit_timeout: a sender with bytes unacknowledged and no progress for this long sends them again;
    // 0 = none (the reference's NIC, and imported HPCC configs). The default is NCCL's: NCCL_IB_TIMEOUT 20, the
    // InfiniBand local ACK timeout 4.096 µs × 2^20.
    Picoseconds retransmit_timeout{kNcclRetransmitTimeout};
    // routing.convergence: how long after a link or switch fails (or returns) routing has moved around it.
    // Events at time 0 are the fabric as it starts, converged.
    Picoseconds routing_convergence{1'000'000'000};
    bool capacity_weights = false;         // routing.weights "capacity": next hops weighted by the capacity they lead to (else "equal")
    int ack_interval_packets = 1;          // L2_ACK_INTERVAL
    // ack.switch_queue "control": switches carry ACKs and NACKs in queue 0 (strict priority, never paused,
    // outside the PFC buffer accounting), ns-3's SwitchNode::AckHighPrio. "data" (false, the reference's
    // main, which never sets that attribute): in the class of the data they acknowledge.
    bool acks_in_control_queue = false;
    Bytes go_back_chunk{4000};             // L2_CHUNK_SIZE
    bool go_back_to_zero = false;          // L2_BACK_TO_ZERO
    double error_rate_per_link = 0.0;      // ERROR_RATE_PER_LINK: loss probability of links whose own rate is 0
};

// ---- congestion control -------------------------------------------------------------------------------
// One value per row of net/cc_list.h, whose id it takes (the engine's net::CcMode).
#define ORRERY_CC_ALGORITHM(Name, name, id, ...) name = id,
enum class CcAlgorithm : uint8_t { ORRERY_CC_LIST(ORRERY_CC_ALGORITHM) };
#undef ORRERY_CC_ALGORITHM
const char* cc_algorithm_name(CcAlgorithm a);
std::optional<CcAlgorithm> cc_algorithm_named(std::string_view name);
const std::vector<std::string>& cc_algorithm_names();  // in net/cc_list.h's order
int hpcc_cc_mode(CcAlgorithm a);  // the reference's CC_MODE; 0 where it has no such CC
bool cc_windowed_by_default(CcAlgorithm a);

// Each CC's parameters, DcqcnParams, HpccParams, …: net/cc_params.h declares them, with their defaults and
// the reference's keys.
ORRERY_CC_LIST(ORRERY_CC_PARAMS_STRUCT)

struct CcSpec {
    CcAlgorithm algorithm = CcAlgorithm::dcqcn;
    BitsPerSecond min_rate{1'000'000'000};      // MIN_RATE
    bool rate_bound = true;                     // RATE_BOUND: pace each QP at its rate
    bool window = false;                        // HAS_WIN (reference default per algorithm)
    bool variable_window = false;               // VAR_WIN
    bool global_base_rtt = true;                // GLOBAL_T
    bool ack_high_priority = true;              // ACK_HIGH_PRIO
    std::vector<EcnThreshold> ecn;              // the ECN setting this CC is tuned for; overrides network.ecn
    ORRERY_CC_LIST(ORRERY_CC_PARAMS_MEMBER)  // DcqcnParams dcqcn; HpccParams hpcc; …
};

// ---- workload -----------------------------------------------------------------------------------------
struct FlowSpec {
    NodeId src = 0, dst = 0;
    int priority = 3;           // pg: switch queue 1..7
    uint16_t dport = 100;
    uint16_t sport = 0;         // assigned like the reference: 10000 + n-th flow of the (src, dst) pair
    Bytes size;
    Picoseconds start;
    std::string where;          // file:line or JSON path, for later messages
};

struct WorkloadSpec {
    std::string kind = "flows";               // "flows", "llm" or "jobs"
    std::vector<FlowSpec> flows;
    std::optional<LlmWorkload> llm;           // kind "llm": the training job
    std::optional<JobsWorkload> jobs;         // kind "jobs": several training jobs on the fabric
    std::filesystem::path flow_file;          // set when the flows came from an HPCC flow.txt
    std::optional<Picoseconds> stop_time;     // SIMULATOR_STOP_TIME; none = until every flow finishes
    bool trains() const { return llm || jobs; }  // LLM training: one job or several (llm_session.h runs it)
    // The training jobs' workloads: the one job's, or every job's of a mix; empty for flows.
    std::vector<const LlmWorkload*> llm_workloads() const {
        std::vector<const LlmWorkload*> out;
        if (llm) out.push_back(&*llm);
        if (jobs)
            for (const JobSpec& j : jobs->jobs) out.push_back(&j.llm);
        return out;
    }
};

// ---- output -------------------------------------------------------------------------------------------
struct OutputSpec {
    std::string store = "results.sqlite";
    Picoseconds sample_interval{10'000'000};  // 10 us
    bool record_fct = true, record_pfc = true, record_queues = true, record_flow_rates = true;
    std::optional<Picoseconds> queue_monitor_start, queue_monitor_end;
    Picoseconds queue_monitor_interval{100'000};  // 100 ns, as the reference samples
    std::string hpcc_fct_file, hpcc_pfc_file, hpcc_qlen_file;  // reference-format outputs; empty = not written
};

// ---- steady-state skipping (engine/wormhole) -----------------------------------------------------------
// Off by default: the packet-level reference, bit for bit. On: steady partitions are fast-forwarded and
// transients already seen are reused (Wormhole, NSDI '26).
struct SkippingSpec {
    bool enabled = false;
    double theta = 0.05;                      // relative spread (max − min) / mean of a flow's last l rate samples
    std::optional<int> window;                // l; none = from Wormhole appendix F per partition (C·RTT, flows per port)
    std::optional<Picoseconds> sample_interval;  // rate sampling; none = 2 × the experiment's largest base RTT
    bool memo = true;                         // reuse transients of partitions seen before
    std::filesystem::path memo_file;          // SQLite file the memo persists in across runs; empty = this run only
    // Experiments of one run with the same congestion control settings reuse each other's transients: each
    // sees what the experiments before it in the sweep learned (runtime/memo_rounds.h). Off: each sees only
    // the memo file and its own, and its results are the same as when it runs alone.
    bool share_memo = false;
};

// ---- sweep --------------------------------------------------------------------------------------------
struct SweepParameter {
    std::string path;                     // "cc.algorithm", "topology.k", "workload.flows[0].size"
    std::vector<nlohmann::json> values;
};
struct SweepSpec {
    std::vector<SweepParameter> parameters;
    bool zip = false;                     // false: Cartesian product; true: i-th values together
    std::vector<uint64_t> seeds;          // replications: one experiment per seed for every combination
};

struct Scenario {
    std::string name, description;
    uint64_t seed = 1;
    TopologySpec topology;
    NetworkSpec network;
    CcSpec cc;
    WorkloadSpec workload;
    OutputSpec output;
    SkippingSpec skipping;
    SweepSpec sweep;
    std::string source;                   // file name for messages
    std::filesystem::path base_dir;       // relative paths resolve here
    nlohmann::json document;              // the scenario with presets resolved
};

// The ECN thresholds in force for switch ports of `rate`: its entry of cc.ecn (else network.ecn); a rate the
// table lacks gets the entry of the nearest rate scaled in proportion to rate (`derived_from` then holds that
// entry); no table: the reference's defaults for `rate`.
EcnThreshold ecn_for_rate(const Scenario& s, BitsPerSecond rate, std::optional<EcnThreshold>* derived_from = nullptr);

}  // namespace orrery
