#pragma once
// Completion skipping: a frozen partition whose flows all finish within a sampling interval of each other
// is not thawed for its last round trip (the bytes in flight and their ACKs, played packet by packet:
// 58 % of what GPT-3 13B still sent at the packet level under DCQCN, docs/history/wormhole-skipping.md). Its flows
// finish at the times their steady rates give, and what the partition still has on its ports leaves the
// fabric at once.
#include <cstdint>
#include <vector>

#include "runtime/batch.h"

namespace orrery::wormhole {

// Removes every packet queued at the partition's egress ports `ports` (global rows) or travelling from
// them: switch queues of priorities 1–7 (their bytes leave the switch's ingress and egress accounting),
// NIC ACK queues, the receive rings of the ports' peers; transmissions under way end. Their blocks go to
// `cache`. Call it only when touches_pfc(b, ports) is false: no PFC frame is among them or waiting.
void drop_partition_packets(Batch& b, const std::vector<uint32_t>& ports, net::BlockCache& cache);

// Finishes flow `f` at `finish` (ps) as its sender's NIC would on the ACK of its last byte: everything
// acknowledged, its completion counted at the sender (in the NIC's completion order) and its DCQCN timers
// stopped.
void finish_flow(Batch& b, uint32_t f, int64_t finish);

}  // namespace orrery::wormhole
