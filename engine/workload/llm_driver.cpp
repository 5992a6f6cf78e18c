#include "workload/llm_driver.h"

#include <algorithm>

namespace orrery {

LlmDriver::LlmDriver(const LlmJob& job, Batch& batch, uint32_t experiment, const Fabric& fabric, const WorkloadTables& tables)
    : job_(job), batch_(batch), experiment_(experiment), exec_(job.graph, job.workload->compute.overlap_slowdown, [this](uint32_t op, int64_t t) {
          // A flow cannot start before the engine's present: a completion inside a step releases its
          // dependants at the step's end at the earliest (at most one lookahead, the smallest link delay, late).
          const int64_t start = std::max(t, now_);
          const uint32_t row = batch_.experiments[experiment_].flow_begin + job_.flow_of_op[op];
          release_flow(batch_, row, start);
          in_flight_.push_back(row);
          min_release_ = std::min(min_release_, start);
          return start;
      }),
      nvlink_(job, fabric, nullptr, WireFormat{}, tables, false) {
    exec_.set_start_local([this](uint32_t op, int64_t t) { nvlink_.start_local(op, t); });
}

DriverStatus LlmDriver::drive(int64_t now, uint32_t flows_done) {
    now_ = now;
    min_release_ = INT64_MAX;
    if (!begun_) {
        begun_ = true;
        exec_.begin(now);
        nvlink_.settle(now);
    }
    if (flows_done != seen_done_) {
        seen_done_ = flows_done;
        std::vector<std::pair<int64_t, uint32_t>> finished;
        size_t keep = 0;
        for (uint32_t row : in_flight_) {
            if (batch_.qp[row].phase == net::kDone) finished.push_back({batch_.qp[row].finish, row});
            else in_flight_[keep++] = row;
        }
        in_flight_.resize(keep);
        std::sort(finished.begin(), finished.end());
        const uint32_t base = batch_.experiments[experiment_].flow_begin;
        for (auto [t, row] : finished) exec_.transfer_done(job_.transfers[row - base], t);
    }
    nvlink_.run(exec_, now);  // executor and NVLink events in time order up to now
    DriverStatus st;
    const int64_t next = std::min(exec_.next_time(), nvlink_.next_time());
    st.next_own = next == kNoTime ? INT64_MAX : next;
    // Released flows start at their start time: the engine sees them through the NIC's start order.
    st.next_release = min_release_;
    st.finished = exec_.finished();
    return st;
}

}  // namespace orrery
