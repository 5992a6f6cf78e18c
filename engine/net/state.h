#pragma once
// The packet engine's tables: one row per entity across all experiments of a batch, each row carrying
// its experiment. Host code (engine/runtime/batch.cpp) owns them as std::vector columns; systems see them
// through NetView, a struct of raw pointers, so the same functions compile for the CPU and under nvcc.
//
// Time is integer picoseconds. The reference model's own quantities (INT timestamps, TIMELY RTTs, base
// RTT) are nanoseconds there; they are converted where they are used and named *_ns.
#include <cstddef>
#include <cstdint>

#include "common/host_device.h"
#include "net/blocks.h"
#include "net/cc_params.h"
#include "net/columns.h"
#include "net/packet.h"

namespace orrery::net {

inline constexpr int64_t kNever = INT64_MAX;
inline constexpr uint32_t kNoRow = 0xffffffffu;
inline constexpr int kPriorities = 8;

// The engine's id of each congestion control (net/cc_list.h).
#define ORRERY_CC_MODE(Name, name, id, ...) k##Name = id,
enum CcMode : uint8_t { ORRERY_CC_LIST(ORRERY_CC_MODE) };
#undef ORRERY_CC_MODE

// ---- experiments ----------------------------------------------------------------------------------------
// How a switch picks among the equal-cost ports toward a destination (net/switch.h, switch_egress).
//   ecmp      the flow's path, fixed at compile by the reference's hash of its five-tuple
//   spray     per packet, a port drawn by a counter-based hash
//   adaptive  per packet, the port with the fewest bytes queued for the packet's class plus in transmission
//   flowlet   per flow and switch, the least-loaded port again after a silence of ExperimentParams::flowlet_gap
//   ecmp_table ECMP's choice (the reference's hash of the five-tuple) made at each switch from the experiment's
//             current routing table rather than fixed at compile: an experiment whose routing changes during
//             the run (topology.events) forwards by it
enum LoadBalancingMode : uint8_t { kLbEcmp = 0, kLbSpray = 1, kLbAdaptive = 2, kLbFlowlet = 3, kLbEcmpTable = 4 };
// A routing table cell (spray_set) with no route to the destination group (failures cut it off); kNoRow: the
// switch is attached to it.
inline constexpr uint32_t kNoRoute = 0xfffffffeu;

// A switch's memory of one flow direction's port under flowlet switching (a slot of its table, indexed by a
// hash of the flow; a flow that finds another in its slot starts a new flowlet and takes the slot over).
inline constexpr uint32_t kFlowletSlots = 256;  // per switch
struct FlowletEntry {
    int64_t last = 0;         // ps: the last packet it sent this way
    uint32_t flow = kNoRow;   // kNoRow: empty
    uint16_t port = 0;        // local port
    uint8_t toward_source = 0;  // 1: ACKs and NACKs, 0: data
    uint8_t unused = 0;
};

// Each CC's parameters as its hooks read them: DcqcnConfig, HpccConfig, … (net/cc_params.h).
ORRERY_CC_LIST(ORRERY_CC_CONFIG_STRUCT)

// Parameters of one experiment (written by compile, read by every system).
struct ExperimentParams {
    uint8_t cc_mode = kDcqcn;
    // What the CC's packets carry (its row of net/cc_list.h, copied by compile so that the step reads a field
    // instead of testing the CC).
    uint32_t data_header = kDataHeaderBytes;  // wire bytes of a data packet besides its payload
    uint16_t ack_wire = kAckBytes;            // wire bytes of an ACK or NACK
    uint8_t ack_int_hops = 1;                 // INT records an ACK echoes; more than one: switches stamp INT on data
    bool send_time_stamped = false;           // data packets carry their send time (ns)
    bool ecn_enabled = true;
    bool rate_bound = true;
    bool var_win = false;
    bool back_to_zero = false;
    bool pfc_enabled = true;           // network.pfc.enabled: receivers act on pause frames
    uint8_t ack_pause_class = 3;       // the PFC class that pauses a NIC's ACK queue (ACK_HIGH_PRIO ? 0 : 3)
    bool out_of_order = false;         // receivers place packets by sequence; senders resend only holes (nic.h)
    bool weighted = false;             // routing tables weight their next hops (set_weights: routing.weights "capacity")
    uint32_t mtu = 1000;               // payload bytes per data packet
    uint32_t ack_interval = 1;   // bytes of data between ACKs (network.ack.interval_packets × MTU; 1: every packet)
    uint32_t chunk = 4000;
    uint64_t min_rate = 0;             // bit/s
    double rate_on_first_cnp = 1.0;
    int64_t nack_interval_ps = 500000000;
    // Each CC's own parameters in engine units (net/cc_params.h): ep.dcqcn.rate_ai, ep.hpcc.eta, …
    ORRERY_CC_LIST(ORRERY_CC_CONFIG_MEMBER)
    uint64_t seed = 1;
    uint32_t port_base = 0;            // first port row of the experiment: random streams are keyed by the
                                       // port's index inside its experiment, so a batch changes nothing
    uint32_t node_base = 0;            // first node row of the experiment, likewise
    int64_t qlen_start = kNever, qlen_end = kNever, qlen_interval = 100000;  // queue monitor, ps
    int64_t stop_time = kNever;
    int64_t sample_interval = kNever;  // ps: telemetry samples (queues, rates); kNever = none
    uint8_t load_balancing = kLbEcmp;  // how switches pick among equal-cost ports (LoadBalancingMode)
    uint32_t group_count = 0;          // other than ECMP: destination groups of the experiment's routing
    uint32_t spray_table = 0;          // other than ECMP: first cell of the experiment in spray_set
    uint32_t flowlet_table = 0;        // flowlet: first entry of the experiment in `flowlet`
    int64_t flowlet_gap = kNever;      // flowlet: ps of silence after which a flow may take another port
    int64_t retransmit_timeout_ps = 0; // a sender without progress this long resends what is unacknowledged; 0: never (nic.h)
    uint8_t ack_switch_class = 0xFF;   // the class switches carry ACKs and NACKs in: 0 (network.ack.switch_queue "control") or 0xFF, the data's
};

// Fills the fields of `ep` that say what packets of its CC carry (ExperimentParams: data_header …).
inline void set_cc_packet_fields(ExperimentParams& ep) {
    switch (ep.cc_mode) {
#define ORRERY_CC_PACKETS(Name, name, id, ref, State, extra, ack, hops, send_time, ...) \
    case k##Name:                                                              \
        ep.data_header = kDataHeaderBytes + (extra);                           \
        ep.ack_wire = uint16_t(ack);                                           \
        ep.ack_int_hops = uint8_t(hops);                                       \
        ep.send_time_stamped = (send_time);                                    \
        break;
        ORRERY_CC_LIST(ORRERY_CC_PACKETS)
#undef ORRERY_CC_PACKETS
    }
}


// ---- nodes ----------------------------------------------------------------------------------------------
enum NodeRole : uint8_t { kRoleHost = 0, kRoleSwitch = 1, kRoleIdle = 2 };

// ---- ports ----------------------------------------------------------------------------------------------
inline constexpr uint16_t kPortDown = 1;

// Static facts of a directed port (the transmit side of one end of a link). Written by compile.
struct PortInfo {
    uint32_t node;           // owner
    uint32_t peer_port;      // global row of the other end, whose ring receives what this port sends
    uint16_t local;          // index among the owner's ports (reference ifindex = local + 1)
    uint16_t flags;          // kPortDown: its link has failed (topology.events; written by the host between steps)
    uint64_t rate_bps;
    int64_t delay_ps;
};

// The serialization times (ps) of the last data packet size and the last control frame size seen on a link,
// by its sender (PortTx; serialization_ps, link.h, reads and fills it) and, with the link's delay added, by
// its receiver (RingHead; arrival_lead_ps, node.h): a port sends both kinds, so one entry would miss for
// most packets.
struct SerializationCache {
    uint16_t wire[2] = {0, 0};    // [0] data packets, [1] ACK, NACK and PFC frames
    int64_t ser_ps[2] = {0, 0};
};

// Packets arriving at a port: a FIFO of blocks (net/blocks.h) written by the peer (sender) and read by the
// owner (receiver). The writer publishes its counter for the reader at the end of a step, into the slot of
// that step's parity, so the two never touch the same counter in the same step. The writer's and the
// reader's counters live in separate cache lines, as do all per-entity states written by one node's thread.
// The reader keeps its last block until it reads the first packet of the next one, so the writer never
// links a new block to one that was freed.
struct alignas(64) RingTail {     // written by the sending node
    uint64_t tail = 0;            // packets written
    uint64_t published_tail[2] = {0, 0};
    uint32_t block = kNoBlock;    // the block the next packet goes into, when tail is not a block boundary
    uint32_t first_block = kNoBlock;  // the ring's first block ever, where its reader starts
    uint32_t reader = 0;          // the receiving node, whose arrivals_published the writer sets (node.h: publish_tails)
};
struct alignas(64) RingHead {     // written by the receiving node
    uint64_t head = 0;            // packets consumed
    uint32_t block = kNoBlock;    // the block of the last packet consumed (kNoBlock before the first)
    SerializationCache lead;      // the sender's serialization times plus the link's delay, by the wire sizes it sends
};

// The block that holds the packet at a ring's head: the reader's current block, or at a block boundary the
// one the writer linked after it (or the ring's first block).
ORRERY_HD inline uint32_t ring_head_block(const RingHead& h, const RingTail& t, const uint32_t* next) {
    if (h.head % kBlockPackets != 0) return h.block;
    return h.block == kNoBlock ? t.first_block : next[h.block];
}

// Transmit state of a port (switch egress or NIC). Written by the owner's systems.
struct alignas(64) PortTx {
    int64_t busy_until = 0;       // ps; the port is transmitting before this
    uint8_t paused = 0;           // bit per priority: paused by a PFC frame from the peer
    uint8_t rr_last = 0;          // switch: last priority served by round robin
    uint8_t busy = 0;             // 1 from transmit start until its completion is handled (ns-3's BUSY; a switch
                                  // port's completion without an event is handled when settled or at the step's
                                  // end: switch.h switch_settle, node.h close_completions)
    // A switch port's queues at a glance, in this line rather than PortQueues' because every packet the switch
    // forwards reads them beside the fields above, and most are sent on at once without touching a queue.
    uint8_t queued = 0;           // switch: bit per priority: its queue holds a packet (the dequeue's round robin reads it)
    uint32_t queued_bytes = 0;    // switch: wire bytes in its queues, all priorities (HPCC's INT queue length)
    SerializationCache ser;       // of what it sends
    uint64_t tx_bytes = 0;        // bytes sent (HPCC INT counter)
    uint64_t ecn_draws = 0;       // counter of this port's random ECN draws
    uint64_t loss_draws = 0;      // counter of this port's random link-loss draws (packets received)
};

static_assert(sizeof(PortTx) == 64, "a port's transmit state is one cache line");

// A switch egress port's queues: one FIFO of blocks per priority (their bit and byte count are in PortTx).
struct alignas(64) PortQueues {
    BlockFifo fifo[kPriorities];
};

// Buffer accounting of one priority class at a switch port.
struct ClassBuffer {
    uint32_t ingress_bytes;       // counted at the port the packets arrived on
    uint32_t hdrm_bytes;          // of them, in the headroom
    uint32_t egress_bytes;        // counted at the port they leave by
};

// Buffer accounting of a switch port (the reference's SwitchMmu, per port and priority). Class 0 (PFC frames,
// and ACKs sent at high priority) takes no buffer in the reference, so it has no entry: with the port's settings
// first, classes 1–3 share the first cache line, and a packet of the reference's data class 3 reads one line at
// the port it arrives on and one at the port it leaves by (two and one with the counters by field).
struct alignas(64) PortMmu {
    uint8_t ingress_paused;       // bit per priority: this switch has paused the peer on this port
    uint8_t pfc_shift;            // dynamic threshold = free >> shift
    uint16_t reserved;
    uint32_t headroom;            // bytes: rate·delay/8·3
    uint32_t kmin, kmax;          // bytes
    double pmax;
    ClassBuffer classes[kPriorities - 1];  // classes 1..7 (class_buffer)
};
static_assert(offsetof(PortMmu, classes) + 3 * sizeof(ClassBuffer) <= 64, "classes 1-3 in the first line");

ORRERY_HD inline ClassBuffer& class_buffer(PortMmu& m, int q) { return m.classes[q - 1]; }
ORRERY_HD inline const ClassBuffer& class_buffer(const PortMmu& m, int q) { return m.classes[q - 1]; }
// Bytes queued to leave by the port, all classes: what the queue monitor and the telemetry samples read.
ORRERY_HD inline uint32_t egress_bytes_total(const PortMmu& m) {
    uint32_t bytes = 0;
    for (int q = 1; q < kPriorities; ++q) bytes += class_buffer(m, q).egress_bytes;
    return bytes;
}

// Per switch: the shared buffer and its PFC settings (network.pfc).
struct alignas(64) SwitchMmu {
    uint32_t buffer_size;
    uint32_t total_hdrm;
    uint32_t total_rsrv;
    uint32_t shared_used;
    uint32_t port_reserve;        // bytes per (port, priority) before the shared buffer counts (pfc.port_reserve)
    uint32_t resume_offset;       // bytes below the threshold before a resume (pfc.resume_offset)
    uint32_t static_threshold;    // bytes of shared use per (port, priority) that pause; 0 = the dynamic threshold
    uint32_t drops;               // packets dropped for lack of buffer: headroom full (or, with PFC off, the lossy limit)
    uint32_t reserved;
    int64_t next_sample = kNever; // ps: next queue-monitor sample
};

// ---- flows (queue pairs) --------------------------------------------------------------------------------
struct FlowInfo {
    uint32_t src, dst;            // host nodes
    uint32_t sip, dip;            // reference addresses
    uint16_t sport, dport;
    uint8_t pg;
    uint8_t reserved[3];
    uint64_t size;                // payload bytes
    int64_t start;                // ps
    uint64_t win;                 // bytes; 0 = no window
    uint64_t base_rtt_ns;
    uint64_t standalone_fct_ns;
};

// A flow's paths, what a switch reads of it for each packet it forwards: apart from FlowInfo, 8 flows
// per cache line.
struct FlowPaths {
    uint32_t data_path;           // offset in path_ports: egress ports (local) from the sender's NIC on
    uint32_t ack_path;            // offset in path_ports: egress ports from the receiver's NIC on
};

// kAbandoned: the QP gave up after kRetryLimit retransmission timeouts (net/nic.h); its flow never finishes.
enum FlowPhase : uint8_t { kWaiting = 0, kActive = 1, kDone = 2, kAbandoned = 3 };

struct alignas(64) QpState {
    uint64_t snd_nxt = 0, snd_una = 0;
    uint64_t rate = 0, max_rate = 0;   // bit/s
    int64_t next_avail = 0;            // ps: pacing
    uint32_t last_pkt_size = 0;
    uint8_t phase = kWaiting;
    uint8_t reserved[3] = {0, 0, 0};
    int64_t finish = kNever;           // ps: the ACK covering the last byte reached the sender
    uint64_t completion_order = 0;     // sender NIC's running count, to order equal finish times
};

inline constexpr uint32_t kReorderWindow = 256;  // packets from the next expected one an out-of-order receiver tracks

struct alignas(64) RxState {
    uint64_t expected = 0;
    uint64_t milestone = 0;            // bytes: the next ACK is due when `expected` reaches it (set to one ACK interval when compiled)
    int64_t nack_timer = 0;            // ps
    uint64_t last_nack = 0;
    // Out-of-order delivery: bit j set = the packet j MTUs past `expected` is placed (bit 0 is `expected` itself,
    // never set). The rest of the line, so the state stays one cache line.
    uint64_t placed[kReorderWindow / 64] = {0, 0, 0, 0};
};
static_assert(sizeof(RxState) == 64, "a receiver's state is one cache line");

// Out-of-order delivery, at the sender: bytes [next, end) the receiver reported missing, to send again before
// new data (nic.h). Empty when next >= end.
struct RetxRange {
    uint64_t next = 0, end = 0;
};

// A sender's loss recovery beyond the CC (nic.h): the retransmission timeout's reference point and what was
// sent again.
struct QpRecovery {
    int64_t progress = 0;              // ps: when the cumulative ACK last moved, or sending began with nothing in flight
    uint64_t high_water = 0;           // bytes: the end of the furthest byte sent; a packet below it is a retransmission
    uint32_t timeouts = 0;             // retransmission timeouts that fired
    uint32_t retransmits = 0;          // data packets sent again (go-back-N, a reported hole, a timeout)
    uint32_t retries = 0;              // timeouts since the cumulative ACK last moved (nic.h: kRetryLimit)
};

// Each congestion control's per-flow state is its own, defined in its net/cc_<name>.h; the columns (NetView's
// pointers) need only its name. What needs the whole struct includes net/cc.h (runtime/batch.h does).
#define ORRERY_CC_STATE_DECLARE(Name, name, id, reference, State, ...) struct State;
ORRERY_CC_LIST(ORRERY_CC_STATE_DECLARE)
#undef ORRERY_CC_STATE_DECLARE

// ---- hosts ----------------------------------------------------------------------------------------------
struct alignas(64) NicState {
    uint32_t port = kNoRow;            // global row of the NIC's port
    uint32_t qp_offset = 0;            // active QPs: nic_qps[qp_offset .. qp_offset + qp_count), in creation order
    uint32_t qp_count = 0;
    uint32_t rr_last = 0;
    uint32_t starts_offset = 0;        // flows sourced here, by start time: nic_starts[starts_offset .. + starts_count)
    uint32_t starts_count = 0;
    uint32_t starts_next = 0;
    BlockFifo acks;                    // ACK/NACK queue
    int64_t next_send = kNever;        // ps: a scheduled retry of DequeueAndTransmit
    int64_t next_send_scheduled = 0;
    uint64_t completions = 0;
    // The retransmission timer, checked lazily: due no later than the earliest QP's progress + timeout (it
    // then finds each QP's own deadline and sets itself again); kNever while nothing is in flight.
    int64_t timeout_check = kNever;
    int64_t timeout_check_scheduled = 0;
};

// ---- telemetry written by systems, drained by the host after each step ---------------------------------
struct PfcEvent {
    int64_t time;                      // ps
    uint32_t node;
    uint16_t ifindex;                  // the receiving port, reference numbering (local + 1)
    uint8_t node_type;                 // 0 host, 1 switch
    uint8_t pause;                     // 1 pause, 0 resume
};

// PFC events received in a step by the nodes one worker processed: events[0 .. count). The host drains it
// after the step and sizes it before, to the pause frames in flight (every frame a step receives was sent
// before it began, since the lookahead is at most a link's delay).
struct PfcLog {
    PfcEvent* events = nullptr;
    uint32_t count = 0;
    uint32_t capacity = 0;
    bool shared = false;  // written by every node at once (device backend): count is taken atomically
};

struct alignas(64) NodeOutput {
    uint32_t events_overflow = 0;      // bits: 1 PFC log full, 2 no block for a ring, 4 for a switch queue, 8 for an ACK queue
    uint32_t suspended = 0;            // device backend: stopped within the step for want of blocks, to be resumed
    uint64_t pfc_sent = 0;             // PFC frames this node put on a link, cumulative
    uint64_t pfc_received = 0;         // PFC frames that reached this node's ports, cumulative (lost ones too)
    int64_t blocks_held = 0;           // packet blocks this node took minus those it gave back (net/blocks.h)
    uint64_t packets_processed = 0;    // events handled (for speed figures)
    uint64_t transmissions = 0;        // packets put on a link (packet-hops)
    int64_t next_event = kNever;       // ps: earliest pending local event after the step
    int64_t next_busy_event = kNever;  // ps: the same, leaving out queue-monitor samples
    int64_t min_sent_arrival = kNever; // ps: earliest arrival among the packets this node sent in the step
    uint32_t completions = 0;          // flows this node completed (as sender), cumulative
    uint32_t open_completions = 0;     // 1: a switch port of the node may be sending with no completion event (node.h)
    uint64_t lost = 0;                 // packets this node's ports received corrupted (link loss), cumulative
    uint64_t sent_into_failures = 0;   // packets a switch had to send into a failed link or had no route for, cumulative
    uint32_t host_wrote = 1;           // 1: a host hook may have changed the node's state since its last step (node.h: process_node)
    uint64_t active_step = 0;          // the last step in which it handled an event or the host wrote it (its rings' tails moved)
    uint64_t steps_rested = 0;         // steps it was left as it stood (node.h: process_node), cumulative
    // Set by its peers (by the step's parity, as ring tails are published): 1 when a ring of this node got packets
    // in that step, so that the node's next step looks at its rings; 0 lets a quiet node rest without a look at
    // each port (node.h: process_node). Written by several threads at once, to the same value (set_flag).
    uint8_t arrivals_published[2] = {0, 0};
};

// ---- a node's events ------------------------------------------------------------------------------------
// The kinds of event a node handles, in their tie order (node.h).
// kSrcTimeout comes after kSrcNone, which stays a power of two: the port tree's leaf picks between kSrcArrival
// (0) and kSrcNone by a shift, and another value there costs the switch's loop registers. A host's timeout
// then ties last, after its other events; switches, whose samples it would have tied with, have none.
enum EventSource : uint8_t { kSrcArrival, kSrcTxDone, kSrcAlpha, kSrcDecrease, kSrcRateIncrease, kSrcFlowStart, kSrcRetry, kSrcSample, kSrcNone, kSrcTimeout };

// A port's next event, and an entry of a node's tournament tree over its ports (port_events.h).
struct PortEvent {
    int64_t time;       // ps, kNever when none
    int64_t scheduled;  // ps: when it was scheduled (tie order)
    uint32_t row;       // port row (a flow row for a flow's timers and start, as node.h's next_event returns them)
    uint8_t source;     // in the ports' tree: kSrcArrival or kSrcTxDone (kSrcNone when none)
};

// A port's own event times, read together whenever its leaf of the node's event tree is recomputed.
struct PortTimes {
    int64_t next_arrival = kNever;     // ps: arrival of the next visible packet in its ring, kNever when none
    int64_t arrival_scheduled = kNever;  // ps: when that arrival was scheduled (its sender began transmitting)
    int64_t tx_done = kNever;          // ps: its completion event, kNever when idle or when the completion has none
    int64_t busy_since = 0;            // ps: when that transmission started
};

// ---- the view systems take ------------------------------------------------------------------------------
// Each column of net/columns.h as a raw pointer: `in` columns read-only, `out` columns written by the step.
namespace column_access {
template <class T>
using in = const T*;
template <class T>
using out = T*;
}  // namespace column_access

struct NetView {
#define ORRERY_COLUMN(T, name, access, ...) column_access::access<T> name;
    ORRERY_ALL_COLUMNS
#undef ORRERY_COLUMN
    uint32_t* const* qlen_hist;        // queue monitor, per experiment: counts per KB bucket (allocated when it starts)
    // packet storage (net/blocks.h): the batch's arena of blocks and their links; the worker's stock and log
    BlockStore store;
    PfcLog* pfc_log;
    // how the step writes packets into rings (link.h: write_ring_slot); set per step by the CPU backend
    bool stream_packets = false;
};

// The parameters of the experiment a node, or a flow's source, belongs to.
ORRERY_HD inline const ExperimentParams& node_params(const NetView& v, uint32_t node) { return v.params[v.node_experiment[node]]; }
ORRERY_HD inline const ExperimentParams& flow_params(const NetView& v, uint32_t flow) { return node_params(v, v.flow[flow].src); }

}  // namespace orrery::net
