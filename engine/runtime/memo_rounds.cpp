#include "runtime/memo_rounds.h"

#include <map>
#include <string>

#include "wormhole/skipper.h"

namespace orrery {

MemoRounds plan_memo_rounds(const Batch& b) {
    const uint32_t count = uint32_t(b.experiments.size());
    MemoRounds plan;
    plan.chain.assign(count, MemoRounds::kOwnMemo);
    std::map<std::string, uint32_t> chain_of_domain;
    std::vector<uint32_t> length;  // by chain: members so far
    std::vector<uint32_t> round(count, 0);
    for (uint32_t e = 0; e < count; ++e) {
        const SkippingSpec& k = b.experiments[e].skipping;
        if (!k.enabled || !k.memo || !k.share_memo) continue;
        const auto [at, added] = chain_of_domain.emplace(wormhole::memo_domain(b, e), plan.chains);
        if (added) ++plan.chains, length.push_back(0);
        plan.chain[e] = at->second;
        round[e] = length[at->second]++;
    }
    uint32_t rounds = 1;
    for (uint32_t n : length) rounds = std::max(rounds, n);
    plan.rounds.resize(rounds);
    for (uint32_t e = 0; e < count; ++e) plan.rounds[round[e]].push_back(e);
    return plan;
}

}  // namespace orrery
