#pragma once
// Every congestion control the packet engine runs, declared once. Each row generates its engine id
// (`CcMode`, net/state.h), its scenario value (`CcAlgorithm`, scenario/scenario.h), its name in scenarios,
// results and memo files, its flow-state column (net/columns.h: NetView, Batch, the device backend and the
// partition exchange), what its packets carry, and the dispatch of its hooks (net/cc.h). The CC's behaviour
// lives in its own `cc_<name>.h`, which defines its state struct (a column of plain data, a row per flow) and
// these hooks, all ORRERY_HD:
//
//   <name>_start(NetView&, flow, const ExperimentParams&, line_bps)   a queue pair starts at its line rate
//   <name>_ack(NetView&, node, flow, const Packet& ack, bool cnp, now) an ACK or NACK reaches the sender
//   <name>_finish(NetView&, flow)                                      its last byte is acknowledged
//
// Columns: X(Name, name, id, reference_cc_mode, State, extra data header bytes, ACK wire bytes, INT hops an ACK
// carries back, data packets carry their send time, windowed by default)
//   id                 the engine's and the results' value; the reference's CC_MODE where it has one
//   reference_cc_mode  the HPCC/SimAI config.txt's CC_MODE, 0 where the reference has no such CC (export refused)
//   header bytes       beyond kDataHeaderBytes on every data packet (HPCC's INT stack, TIMELY's timestamp)
//   INT hops           how many of a data packet's INT records its ACK echoes (1: the first hop's place only)
//   INT hops > 1       also means switches stamp INT records on its data packets
//   send time          data packets are stamped with their send time in ns (TIMELY's RTT samples)
//   windowed           the reference's run.py default: a window (HAS_WIN, VAR_WIN) and ACKs at normal priority;
//                      else no window and high-priority ACKs
//
// and, host-side, what a skip carries of its state (net/cc_snapshot.h: <name>_snapshot, _restore, _shift,
// _snapshot_fields), which wormhole/cc_snapshot.cpp and wormhole/shift.cpp dispatch the same way.
//
// Its parameters (a struct in scenario/scenario.h, read by scenario/read.cpp, compiled into ExperimentParams by
// runtime/batch_compile.cpp's make_params) are the CC's own code there. A CC with timers: node.h schedules DCQCN's
// (earliest_dcqcn_timer); a second such CC adds its timers beside them.
#define ORRERY_CC_LIST(X)                                                                   \
    X(Dcqcn, dcqcn, 1, 1, DcqcnState, 0, kAckBytes, 1, false, false)                        \
    X(Hpcc, hpcc, 3, 3, HpccState, kIntBytes, kHpccAckBytes, kMaxIntHops, false, true)      \
    X(Timely, timely, 7, 7, TimelyState, kTimelyTsBytes, kAckBytes, 1, true, false)         \
    X(Dctcp, dctcp, 8, 8, DctcpState, 0, kAckBytes, 1, false, true)                         \
    X(Fixed, fixed, 64, 0, FixedState, 0, kAckBytes, 1, false, false)
