#include "runtime/fabric_changes.h"

#include "net/switch.h"
#include "runtime/batch.h"

namespace orrery {
namespace {

using namespace net;

// Drops every packet leaving port `row`: its queues (a switch's, with their buffer accounting) or its NIC's ACK
// queue, and its wire (the peer's receive ring). Returns how many were data, ACKs or NACKs (PFC frames are not
// counted as lost traffic).
uint64_t drop_leaving(Batch& b, uint32_t row, const BlockStore& store) {
    uint64_t lost = 0;
    const uint32_t node = b.port[row].node;
    int64_t& held = b.out[node].blocks_held;
    PortTx& tx = b.tx[row];
    auto count = [&](const Packet& p) { lost += p.kind != kPfc; };
    if (b.node_role[node] == kRoleSwitch) {
        SwitchMmu& sw = b.sw[node];
        for (int q = 0; q < kPriorities; ++q) {
            BlockFifo& fifo = b.queues[row].fifo[q];
            if (fifo_empty(fifo)) continue;
            fifo_for_each(store, fifo, [&](const Packet& p) {
                count(p);
                if (q != 0) {
                    ingress_remove(sw, b.mmu[b.node_port_begin[node] + p.in_port], q, p.wire);
                    class_buffer(b.mmu[row], q).egress_bytes -= p.wire;
                }
                tx.queued_bytes -= p.wire;
            });
            fifo_release(store, held, fifo);
        }
        tx.queued = 0;
    } else {
        fifo_for_each(store, b.nic[node].acks, count);
        fifo_release(store, held, b.nic[node].acks);
    }
    // The wire: the peer's receive ring.
    const uint32_t to = b.port[row].peer_port;
    for_each_ring_packet(b, to, count);
    empty_ring(b, to, store);
    b.times[to].next_arrival = kNever;
    tx.busy = 0;
    b.times[row].tx_done = kNever;
    return lost;
}

}  // namespace

void set_port_down(Batch& b, uint32_t row, bool down, int64_t now) {
    PortInfo& port = b.port[row];
    port.flags = uint16_t(down ? port.flags | kPortDown : port.flags & ~kPortDown);
    // A switch forgets the pauses it sent and received on it; a NIC holds everything while its link is down,
    // and looks at its queue pairs again when it comes back.
    const bool host = b.node_role[port.node] != kRoleSwitch;
    b.tx[row].paused = down && host ? 0xff : 0;
    if (!host) b.mmu[row].ingress_paused = 0;
    if (host && !down) {
        b.nic[port.node].next_send = now;
        b.nic[port.node].next_send_scheduled = now;
    }
    mark_host_wrote(b, port.node);
}

void set_port_rate(Batch& b, uint32_t row, uint64_t rate_bps) {
    b.port[row].rate_bps = rate_bps;
    b.tx[row].ser = SerializationCache{};
    b.ring_head[b.port[row].peer_port].lead = SerializationCache{};
    mark_host_wrote(b, b.port[row].node);
}

uint64_t apply_fabric_changes(Batch& b, uint32_t e, int64_t now, BlockCache& cache) {
    ExperimentSlice& x = b.experiments[e];
    const BlockStore store = b.arena->store(&cache);
    uint64_t lost = 0;
    for (; x.next_change < x.changes.size() && x.changes[x.next_change].at <= now; ++x.next_change) {
        const FabricChange& c = x.changes[x.next_change];
        switch (c.kind) {
            case FabricChange::link_down:
                for (uint32_t row : c.rows) lost += drop_leaving(b, row, store);
                for (uint32_t row : c.rows) set_port_down(b, row, true, now);
                break;
            case FabricChange::link_up:
                for (uint32_t row : c.rows) set_port_down(b, row, false, now);
                break;
            case FabricChange::link_rate:
                for (uint32_t row : c.rows) set_port_rate(b, row, c.rate_bps);
                break;
            case FabricChange::routing:
                b.params[e].spray_table = c.table;
                break;
        }
    }
    return lost;
}

}  // namespace orrery
