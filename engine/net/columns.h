#pragma once
// Every column of the packet engine's tables, declared once: one row per entity across all experiments of a
// batch. The list generates the systems' view (NetView, net/state.h), the batch's storage and its view()
// (runtime/batch.h), the batch's memory figures and reserves, the device backend's column list
// (runtime/device/device_runner.cpp) and the rows a partitioned run gathers for the host's hooks
// (runtime/partition.cpp). A new column is one line here (or, for a congestion control's flow state, one row
// of net/cc_list.h), and the compile code that fills it.
//
// X(T, name, access, dim, hooks, share, gather)
//   access  in: written by compile, read by the step (a const pointer in NetView) | out: the step writes it
//   dim     which rows it has: Experiment, Node, NodeEdge (nodes + 1 offsets), Port, Tree (each node's
//           tournament tree), Flow, NicQps / NicStarts (each NIC's queue-pair and start lists, by flow), Whole
//           (one table the experiments index into)
//   hooks   host hooks between steps read or write an experiment's rows (the device backend copies them back)
//   share   how an experiment's memory figure counts it: None, Nodes, NodeOffsets (an offsets column of node
//           items), Ports, Flows
//   gather  which rank's rows a partitioned run gathers before a host hook reads them: None, Node (the node's
//           owner), Port (the port's node's owner), Sender (the flow's source's owner), Receiver (its destination's)
#include <cstdint>

#include "net/cc_list.h"

namespace orrery::net {

enum class ColumnDim { Experiment, Node, NodeEdge, Port, Tree, Flow, NicQps, NicStarts, Whole };
enum class ColumnShare { None, Nodes, NodeOffsets, Ports, Flows, Cc };
enum class ColumnGather { None, Node, Port, Sender, Receiver };
// So that a column's type names the same thing as net::T wherever a site qualifies it.
using std::uint16_t;
using std::uint32_t;
using std::uint8_t;
using LossProbability = double;  // a column type is a name (net::T): not the keyword

}  // namespace orrery::net

#define ORRERY_NET_COLUMNS(X)                                                                                   \
    /* experiments */                                                                                          \
    X(ExperimentParams, params, in, Experiment, true, None, None)                                              \
    /* nodes */                                                                                                \
    X(uint32_t, node_experiment, in, Node, false, Nodes, None)                                                 \
    X(uint8_t, node_role, in, Node, false, Nodes, None)                                                        \
    /* global port rows of node n: [node_port_begin[n], node_port_begin[n+1]) */                               \
    X(uint32_t, node_port_begin, in, NodeEdge, false, Nodes, None)                                             \
    X(NicState, nic, out, Node, true, Nodes, None)      /* by node (hosts) */                                  \
    X(SwitchMmu, sw, out, Node, true, Nodes, Node)      /* by node (switches) */                               \
    X(NodeOutput, out, out, Node, true, Nodes, Node)                                                           \
    /* ports */                                                                                                \
    X(PortInfo, port, in, Port, false, Ports, None)                                                            \
    /* by port: probability that a packet arriving at it is lost (link error rate) */                          \
    X(LossProbability, port_loss, in, Port, false, Ports, None)                                                         \
    X(RingTail, ring_tail, out, Port, true, Ports, None)  /* receive ring of each port: the writer's side */   \
    X(RingHead, ring_head, out, Port, true, Ports, None)  /* and the reader's */                               \
    X(PortTx, tx, out, Port, true, Ports, Port)                                                                \
    /* by port: its next arrival and transmission end (port_events.h) */                                       \
    X(PortTimes, times, out, Port, true, Ports, None)                                                          \
    /* per node, a tournament tree over its ports' next events (port_events.h) */                              \
    X(PortEvent, port_tree, out, Tree, true, Nodes, None)                                                      \
    /* node n's tree: port_tree[node_tree_begin[n] .. node_tree_begin[n+1]), 2 × leaves */                     \
    X(uint32_t, node_tree_begin, in, NodeEdge, false, Nodes, None)                                             \
    X(PortQueues, queues, out, Port, true, Ports, None)  /* by port (switch ports) */                          \
    X(PortMmu, mmu, out, Port, true, Ports, Port)        /* by port (switch ports) */                          \
    /* queue monitor: each port's place in its experiment's histogram array, and its buckets */                \
    X(uint32_t, qlen_offset, in, Port, true, Ports, None)                                                      \
    X(uint32_t, qlen_buckets, in, Port, true, Ports, None)                                                     \
    /* load balancing other than ECMP: routing tables (topology/routing.h) of experiments that use it */          \
    X(uint32_t, node_forwarder, in, Node, false, Nodes, None)   /* row in its experiment's table; kNoRow: host */ \
    X(uint32_t, node_dest_group, in, Node, false, Nodes, None)  /* destination group of a host */              \
    /* [spray_table + row·groups + group]: set id, kNoRow to deliver */                                        \
    X(uint32_t, spray_set, in, Whole, false, Nodes, None)                                                      \
    X(uint32_t, set_begin, in, Whole, false, NodeOffsets, None)  /* set s = set_ports[set_begin[s] .. [s+1]) */ \
    X(uint16_t, set_ports, in, Whole, false, Nodes, None)                                                      \
    X(uint32_t, set_weights, in, Whole, false, Nodes, None)  /* beside set_ports: weights (1 when equal) */   \
    /* flowlet switching: kFlowletSlots entries per switch of each experiment that uses it */                    \
    X(FlowletEntry, flowlet, out, Whole, false, Nodes, None)                                                   \
    /* flows */                                                                                                \
    X(FlowInfo, flow, in, Flow, true, Flows, None)                                                             \
    X(FlowPaths, flow_paths, in, Flow, false, Flows, None)                                                     \
    X(uint16_t, path_ports, in, Whole, false, Flows, None)                                                     \
    X(QpState, qp, out, Flow, true, Flows, Sender)                                                             \
    X(RxState, rx, out, Flow, true, Flows, Receiver)                                                           \
    X(RetxRange, retx, out, Flow, false, Flows, None)  /* out-of-order delivery: holes to resend */            \
    X(QpRecovery, recovery, out, Flow, true, Flows, Sender)  /* retransmission timer and counts */          \
    X(uint32_t, nic_qps, out, NicQps, true, Flows, None)                                                       \
    X(uint32_t, nic_starts, in, NicStarts, true, Flows, None)

// A congestion control's flow state as a column (share Cc: a row per flow, written only for flows of that CC,
// runtime/huge_page_table.h: CcTable), one per row of net/cc_list.h.
#define ORRERY_CC_AS_COLUMN(Name, name, id, ref, State, ...) ORRERY_COLUMN(State, name, out, Flow, true, Cc, Sender)

// Every column, the CCs' last: a site defines ORRERY_COLUMN(T, name, access, dim, hooks, share, gather), expands
// ORRERY_ALL_COLUMNS and undefines it.
#define ORRERY_ALL_COLUMNS ORRERY_NET_COLUMNS(ORRERY_COLUMN) ORRERY_CC_LIST(ORRERY_CC_AS_COLUMN)
