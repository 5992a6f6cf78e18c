#pragma once
// What a failure costs: in a run that sweeps topology.events, each failure against the same design on the
// healthy fabric, as the summary says it ("link 144 down: iteration time +2.0 % with ecmp, +0.4 % with
// adaptive, against the same designs on the healthy fabric").
#include <string>
#include <vector>

#include "report/results_table.h"

namespace orrery::report {

// One sentence per failure (a distinct topology.events value), in the order the run first has them; a mix of jobs
// names each job's change ("link 144 down: iteration time job a +12.0 %, job b the same within 0.5 %, …"); empty when
// the run does not sweep topology.events or no failed experiment has a healthy twin. A design is every other
// differing parameter but the seed: with replications, both sides are the means over their seeds. Differences
// under `tie` are said to be the same within it. Packets lost to failed links and retransmission timeouts are
// named where the failed experiments had any.
std::vector<std::string> failure_sentences(const ResultsTable& t, double tie);

}  // namespace orrery::report
