#include "wormhole/drain.h"

#include "net/cc_dcqcn.h"
#include "net/switch.h"

namespace orrery::wormhole {

using namespace net;

namespace {

void empty_switch_queues(Batch& b, uint32_t row, const BlockStore& store) {
    const uint32_t node = b.port[row].node;
    SwitchMmu& sw = b.sw[node];
    PortTx& tx = b.tx[row];
    for (int q = 1; q < kPriorities; ++q) {
        BlockFifo& fifo = b.queues[row].fifo[q];
        if (fifo_empty(fifo)) continue;
        fifo_for_each(store, fifo, [&](const Packet& p) {
            ingress_remove(sw, b.mmu[b.node_port_begin[node] + p.in_port], q, p.wire);
            class_buffer(b.mmu[row], q).egress_bytes -= p.wire;
            tx.queued_bytes -= p.wire;
        });
        fifo_release(store, b.out[node].blocks_held, fifo);
        tx.queued &= uint8_t(~(1u << q));
    }
}

}  // namespace

void drop_partition_packets(Batch& b, const std::vector<uint32_t>& ports, BlockCache& cache) {
    const BlockStore store = b.arena->store(&cache);
    for (uint32_t row : ports) {
        const uint32_t node = b.port[row].node;
        mark_host_wrote(b, node);
        mark_host_wrote(b, b.port[b.port[row].peer_port].node);
        if (b.node_role[node] == kRoleSwitch) empty_switch_queues(b, row, store);
        else fifo_release(store, b.out[node].blocks_held, b.nic[node].acks);
        empty_ring(b, b.port[row].peer_port, store);
        PortTx& tx = b.tx[row];
        tx.busy = 0;
        b.times[row].tx_done = kNever;
    }
}

void finish_flow(Batch& b, uint32_t f, int64_t finish) {
    QpState& q = b.qp[f];
    const uint32_t sender = b.flow[f].src;
    mark_host_wrote(b, sender);
    q.snd_nxt = q.snd_una = b.flow[f].size;
    q.phase = kDone;
    q.finish = finish;
    q.completion_order = b.nic[sender].completions++;
    ++b.out[sender].completions;
    if (b.params[b.node_experiment[sender]].cc_mode == kDcqcn) dcqcn_cancel(b.dcqcn[f]);  // other CCs have no DCQCN row (CcTable)
}

}  // namespace orrery::wormhole
