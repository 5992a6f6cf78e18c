#include "workload/collectives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "common/diagnostics.h"

namespace orrery {

AlphaBeta gpu_nvlink_fit(const WorkloadTables& tables, const std::string& gpu, const Placement& place, CollectiveKind kind, int group) {
    if (place.nvlink_rate_is_bus_bandwidth) {
        const auto spec_of = tables.gpus.find(gpu);
        if (spec_of != tables.gpus.end() && spec_of->second.nvlink_bytes_per_s > 0) return {0, spec_of->second.nvlink_bytes_per_s};
    }
    return tables.intra_fit(gpu, kind, group);
}

AlphaBeta CollectiveContext::intra_fit(CollectiveKind kind, int group) const {
    AlphaBeta fit = gpu_nvlink_fit(tables, gpu, place, kind, group);
    if (place.nvlink_bytes_per_s > 0) {
        const auto spec_of = tables.gpus.find(gpu);
        if (spec_of != tables.gpus.end() && spec_of->second.nvlink_bytes_per_s > 0)
            fit.bus_bytes_per_s *= place.nvlink_bytes_per_s / spec_of->second.nvlink_bytes_per_s;
    }
    return fit;
}

int64_t CollectiveContext::intra_ps(CollectiveKind kind, int group, int64_t bytes) const {
    return group <= 1 || bytes <= 0 ? 0 : alpha_beta_ps(intra_fit(kind, group), kind, group, bytes);
}

uint32_t Placement::rank_on(int32_t s, int32_t l) const {
    const size_t cell = size_t(s) * size_t(gpus_per_server) + size_t(l);
    return s < 0 || l < 0 || l >= gpus_per_server || cell >= rank_at.size() ? UINT32_MAX : rank_at[cell];
}

namespace {

constexpr uint32_t kNoOp = UINT32_MAX;

struct Emitter {
    TaskGraph& g;
    const CollectiveContext& c;
    Group group;
    uint32_t coll;
    uint32_t name;

    // Lockstep graphs: the collective runs over every group of `family` at once; the algorithms below name
    // the members by group 0's ranks, and `at` finds a member's position, which picks it out of every group.
    const std::vector<std::vector<uint32_t>>* family = nullptr;
    std::unordered_map<uint32_t, uint32_t> at;
    uint32_t channel = 0;  // lockstep: the channel being emitted (labels its pair sets)

    bool lockstep() const { return g.lockstep(); }

    // An op of this collective (on lockstep graphs, on the lanes of `rank` and `peer`).
    Op make(OpKind kind, uint32_t rank, uint32_t peer, int64_t bytes) const {
        Op op;
        op.kind = kind;
        op.group = group;
        op.rank = g.lane(rank);
        op.peer = g.lane(peer);
        op.bytes = bytes;
        op.name = name;
        op.collective = coll;
        return op;
    }

    uint32_t join(const std::vector<uint32_t>& after, uint32_t rank) { return g.add(make(OpKind::join, rank, rank, 0), after); }

    // An intra-server collective among `members` (their first is the op's rank), or a copy between two GPUs.
    uint32_t local(CollectiveKind kind, const std::vector<uint32_t>& members, int64_t bytes, const std::vector<uint32_t>& after) {
        Op op = make(OpKind::local, members[0], kind == CollectiveKind::send_recv ? members.back() : members[0], bytes);
        op.duration = c.intra_ps(kind, int(members.size()), bytes);
        op.local_kind = kind;
        if (lockstep()) {  // the same members of every group, one group after another
            std::vector<uint32_t> all;
            all.reserve(members.size() * family->size());
            for (const std::vector<uint32_t>& grp : *family)
                for (uint32_t m : members) all.push_back(grp[at.at(m)]);
            op.members = g.intern_members(all);
            op.group_size = uint32_t(members.size());
        } else {
            op.members = g.intern_members(members);
        }
        return g.add(op, after);
    }

    // Lockstep: one transfer of `bytes` per pair (in `steps` steps), every pair at once.
    uint32_t transfer_all(std::vector<RankPair> pairs, int64_t bytes, int steps, const std::vector<uint32_t>& after, uint32_t cycle = 0) {
        if (pairs.empty() || bytes <= 0 || steps <= 0) return join(after, family->front().front());
        Op op = make(OpKind::transfer, pairs.front().first, pairs.front().second, bytes);
        op.pairs = g.intern_pairs(pairs, channel, cycle);
        op.steps = uint32_t(steps);
        // A step of its pairs inside one server, alone: NVLink propagation and the bytes at the calibrated copy busbw.
        const AlphaBeta fit = c.intra_fit(CollectiveKind::send_recv, 2);
        op.duration = c.place.nvlink_hop_ps + int64_t(std::llround(double(bytes) / steps / fit.bus_bytes_per_s * 1e12));
        return g.add(op, after);
    }

    // Lockstep: member src → member dst (group 0's ranks) in every group.
    std::vector<RankPair> pairs_of(const std::vector<std::pair<uint32_t, uint32_t>>& moves) const {
        std::vector<RankPair> pairs;
        pairs.reserve(moves.size() * family->size());
        for (const std::vector<uint32_t>& grp : *family)
            for (const auto& [src, dst] : moves) pairs.emplace_back(grp[at.at(src)], grp[at.at(dst)]);
        return pairs;
    }

    static std::vector<uint32_t> distinct(std::vector<uint32_t> ops) {
        std::sort(ops.begin(), ops.end());
        ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
        return ops;
    }

    // A move between two GPUs of one server inside a collective that spans servers: the collective was
    // launched once, so the move costs NVLink's propagation and its bytes at the calibrated send/recv
    // bandwidth, not the table's per-call α (7 µs on H100, which a 128-GPU ring would pay 254 times).
    uint32_t step(uint32_t src, uint32_t dst, int64_t bytes, const std::vector<uint32_t>& after) {
        Op op = make(OpKind::local, src, dst, bytes);
        const AlphaBeta fit = c.intra_fit(CollectiveKind::send_recv, 2);
        op.duration = c.place.nvlink_hop_ps + int64_t(std::llround(double(bytes) / fit.bus_bytes_per_s * 1e12));
        op.local_kind = CollectiveKind::send_recv;
        op.members = g.intern_members({src, dst});
        op.step = true;
        return g.add(op, after);
    }

    // One point-to-point move of `bytes` from src to dst after `after`.
    uint32_t move(uint32_t src, uint32_t dst, int64_t bytes, const std::vector<uint32_t>& after) {
        const Placement& p = c.place;
        if (bytes <= 0) return join(after, src);
        if (lockstep()) return transfer_all(pairs_of({{src, dst}}), bytes, 1, after);  // every group's pair at once (no PXN: refused)
        if (p.server[src] == p.server[dst]) return step(src, dst, bytes, after);
        uint32_t from = src;
        std::vector<uint32_t> before = after;
        if (c.spec.pxn && p.local[src] != p.local[dst]) {
            const uint32_t mid = p.rank_on(p.server[src], p.local[dst]);
            if (mid != UINT32_MAX && mid != src) {
                before = {step(src, mid, bytes, after)};
                from = mid;
            }
        }
        return g.add(make(OpKind::transfer, from, dst, bytes), before);
    }

    // A custom algorithm: member i plays GPU i. Every op gets an entry join first, so dependencies may point
    // forward; a sending op is a move of its chunks, a waiting op is its entry join.
    std::vector<uint32_t> custom(const CustomAlgorithm& a, const std::vector<uint32_t>& ranks, int64_t bytes, uint32_t start) {
        const double chunk = double(bytes) / a.chunks_per_loop;
        std::vector<uint32_t> entry(a.ops.size()), exit(a.ops.size());
        for (size_t i = 0; i < a.ops.size(); ++i) entry[i] = join({start}, ranks[size_t(a.ops[i].gpu)]);
        for (size_t i = 0; i < a.ops.size(); ++i) {
            const CustomOp& op = a.ops[i];
            exit[i] = op.send_to < 0 ? entry[i]
                                     : move(ranks[size_t(op.gpu)], ranks[size_t(op.send_to)], std::max<int64_t>(1, std::llround(op.chunks * chunk)), {entry[i]});
        }
        for (size_t i = 0; i < a.ops.size(); ++i)
            for (uint32_t d : a.ops[i].after) g.add_dep(entry[i], exit[d]);
        return exit;
    }

    int64_t pieces_of(int64_t bytes) const {
        const int64_t chunk = std::max<int64_t>(1, c.spec.chunk.count);
        return std::max<int64_t>(1, (bytes + chunk - 1) / chunk);
    }

    // `steps` ring steps: at each, member i sends `seg` bytes to member i+1, pipelined in pieces. Returns per
    // member the last op that delivered to it (its entry when there are no steps).
    std::vector<uint32_t> ring(const std::vector<uint32_t>& ranks, int64_t seg, int steps, const std::vector<uint32_t>& entry) {
        const size_t n = ranks.size();
        if (lockstep()) {
            // The ring as one task: every member sends to the next, `steps` times. Its pieces pipeline, so
            // each link carries steps × seg bytes back to back (one fluid flow) and pays a step's latency per step.
            if (steps <= 0) return entry;
            std::vector<std::pair<uint32_t, uint32_t>> moves;
            for (size_t i = 0; i < n; ++i) moves.emplace_back(ranks[i], ranks[(i + 1) % n]);
            return std::vector<uint32_t>(n, transfer_all(pairs_of(moves), seg * steps, steps, distinct(entry), uint32_t(n)));
        }
        const int64_t q = pieces_of(seg);
        std::vector<uint32_t> last(entry);
        // prev_step[j][i]: the op that delivered piece j of the previous step to member i.
        std::vector<std::vector<uint32_t>> prev(size_t(q), std::vector<uint32_t>(n, kNoOp)), cur = prev;
        for (int k = 0; k < steps; ++k) {
            for (int64_t j = 0; j < q; ++j) {
                const int64_t piece = seg / q + (j < seg % q ? 1 : 0);
                for (size_t i = 0; i < n; ++i) {
                    const size_t to = (i + 1) % n;
                    std::vector<uint32_t> after{k == 0 ? entry[i] : prev[size_t(j)][i]};
                    if (j > 0) after.push_back(cur[size_t(j - 1)][to]);  // the previous piece on this link
                    cur[size_t(j)][to] = move(ranks[i], ranks[to], piece, after);
                }
            }
            std::swap(prev, cur);
        }
        if (steps > 0)
            for (size_t i = 0; i < n; ++i) last[i] = prev[size_t(q - 1)][i];
        return last;
    }

    // A chain from ranks[0] through every member (broadcast), pipelined.
    std::vector<uint32_t> chain(const std::vector<uint32_t>& ranks, int64_t bytes, const std::vector<uint32_t>& entry) {
        const size_t n = ranks.size();
        const int64_t q = pieces_of(bytes);
        std::vector<uint32_t> last(entry);
        std::vector<uint32_t> prev_piece(n, kNoOp);
        for (int64_t j = 0; j < q; ++j) {
            const int64_t piece = bytes / q + (j < bytes % q ? 1 : 0);
            uint32_t carried = entry[0];
            for (size_t k = 0; k + 1 < n; ++k) {
                std::vector<uint32_t> after{carried, entry[k]};
                if (j > 0) after.push_back(prev_piece[k + 1]);
                carried = prev_piece[k + 1] = move(ranks[k], ranks[k + 1], piece, after);
                last[k + 1] = carried;
            }
        }
        return last;
    }

    // Double binary tree all-reduce: half the data up and down each of two trees (the second over the
    // members in reverse order, so the leaves of one are inner nodes of the other).
    std::vector<uint32_t> trees(const std::vector<uint32_t>& ranks, int64_t bytes, const std::vector<uint32_t>& entry) {
        const size_t n = ranks.size();
        std::vector<uint32_t> finals;
        for (int tree = 0; tree < 2; ++tree) {
            const int64_t data = bytes / 2 + (tree == 0 ? bytes % 2 : 0);
            std::vector<size_t> order(n);
            for (size_t p = 0; p < n; ++p) order[p] = tree == 0 ? p : n - 1 - p;  // position → member
            const int64_t q = pieces_of(data);
            std::vector<uint32_t> up_prev(n, kNoOp), down_prev(n, kNoOp);
            for (int64_t j = 0; j < q; ++j) {
                const int64_t piece = data / q + (j < data % q ? 1 : 0);
                std::vector<uint32_t> up(n, kNoOp), down(n, kNoOp);
                std::vector<std::vector<uint32_t>> got(n);  // per position: what it received this piece
                for (size_t p = n; p-- > 1;) {  // children before parents
                    const size_t parent = (p - 1) / 2;
                    std::vector<uint32_t> after = got[p];
                    after.push_back(entry[order[p]]);
                    if (j > 0) after.push_back(up_prev[p]);
                    up[p] = move(ranks[order[p]], ranks[order[parent]], piece, after);
                    got[parent].push_back(up[p]);
                }
                std::vector<uint32_t> have(n, kNoOp);
                have[0] = join(got[0].empty() ? std::vector<uint32_t>{entry[order[0]]} : got[0], ranks[order[0]]);
                for (size_t p = 1; p < n; ++p) {
                    const size_t parent = (p - 1) / 2;
                    std::vector<uint32_t> after{have[parent]};
                    if (j > 0) after.push_back(down_prev[p]);
                    have[p] = down[p] = move(ranks[order[parent]], ranks[order[p]], piece, after);
                }
                up_prev = up;
                down_prev = down;
                if (j == q - 1)
                    for (size_t p = 0; p < n; ++p) finals.push_back(have[p]);
            }
        }
        return finals;
    }

    static bool power_of_two(size_t n) { return n > 0 && (n & (n - 1)) == 0; }

    std::vector<uint32_t> halving_doubling(const std::vector<uint32_t>& ranks, int64_t bytes, const std::vector<uint32_t>& entry,
                                           CollectiveKind kind) {
        const size_t n = ranks.size();
        std::vector<uint32_t> have(entry);
        if (lockstep()) {  // each distance one task of every pair at that distance
            auto exchange = [&](size_t d, int64_t share) {
                std::vector<std::pair<uint32_t, uint32_t>> moves;
                for (size_t i = 0; i < n; ++i) moves.emplace_back(ranks[i], ranks[i ^ d]);
                have.assign(n, transfer_all(pairs_of(moves), share, 1, distinct(have)));
            };
            int64_t share = bytes;
            if (kind != CollectiveKind::all_gather)
                for (size_t d = n / 2; d >= 1; d /= 2) exchange(d, share /= 2);
            share = bytes / int64_t(n);
            if (kind != CollectiveKind::reduce_scatter)
                for (size_t d = 1; d < n; d *= 2, share *= 2) exchange(d, share);
            return have;
        }
        if (kind != CollectiveKind::all_gather) {  // recursive halving: reduce-scatter
            int64_t share = bytes;
            for (size_t d = n / 2; d >= 1; d /= 2) {
                share /= 2;
                std::vector<uint32_t> next(n);
                for (size_t i = 0; i < n; ++i) next[i ^ d] = move(ranks[i], ranks[i ^ d], share, {have[i]});
                for (size_t i = 0; i < n; ++i) next[i] = join({next[i], have[i]}, ranks[i]);
                have = next;
                if (d == 1) break;
            }
        }
        if (kind != CollectiveKind::reduce_scatter) {  // recursive doubling: all-gather
            int64_t share = bytes / int64_t(n);
            for (size_t d = 1; d < n; d *= 2) {
                std::vector<uint32_t> next(n);
                for (size_t i = 0; i < n; ++i) next[i ^ d] = move(ranks[i], ranks[i ^ d], share, {have[i]});
                for (size_t i = 0; i < n; ++i) next[i] = join({next[i], have[i]}, ranks[i]);
                have = next;
                share *= 2;
            }
        }
        return have;
    }

    // Every member sends `each` bytes to every other; returns per member a join of what it received.
    std::vector<uint32_t> all_pairs(const std::vector<uint32_t>& ranks, int64_t each, const std::vector<uint32_t>& entry) {
        const size_t n = ranks.size();
        if (lockstep()) {  // every pair of every group at once
            std::vector<std::pair<uint32_t, uint32_t>> moves;
            for (size_t i = 0; i < n; ++i)
                for (size_t s = 1; s < n; ++s) moves.emplace_back(ranks[i], ranks[(i + s) % n]);
            return std::vector<uint32_t>(n, transfer_all(pairs_of(moves), each, 1, distinct(entry)));
        }
        std::vector<std::vector<uint32_t>> into(n);
        for (size_t i = 0; i < n; ++i)
            for (size_t s = 1; s < n; ++s) {  // staggered order: member i sends to i+1 first, as NCCL's all-to-all loop
                const size_t j = (i + s) % n;
                into[j].push_back(move(ranks[i], ranks[j], each, {entry[i]}));
            }
        std::vector<uint32_t> have(n);
        for (size_t j = 0; j < n; ++j) {
            into[j].push_back(entry[j]);
            have[j] = join(into[j], ranks[j]);
        }
        return have;
    }

    std::vector<uint32_t> direct(const std::vector<uint32_t>& ranks, int64_t bytes, const std::vector<uint32_t>& entry, CollectiveKind kind) {
        const size_t n = ranks.size();
        const int64_t seg = bytes / int64_t(n);
        switch (kind) {
            case CollectiveKind::all_reduce: return all_pairs(ranks, seg, all_pairs(ranks, seg, entry));
            case CollectiveKind::broadcast: {
                std::vector<uint32_t> have(entry);
                for (size_t j = 1; j < n; ++j) have[j] = move(ranks[0], ranks[j], bytes, {entry[0], entry[j]});
                return have;
            }
            default: return all_pairs(ranks, seg, entry);  // reduce-scatter, all-gather, all-to-all
        }
    }
};

// NCCL builds each channel's ring from the topology, not from the rank list: the members of a server are
// visited together, and each channel enters a server at another GPU, so the channels leave every server
// through different NICs (rails). Channel ch rotates every server's members by ch; groups whose servers
// hold different numbers of members keep their order.
std::vector<uint32_t> channel_ring(const Placement& p, const std::vector<uint32_t>& ranks, int channel) {
    std::vector<int32_t> servers;
    std::map<int32_t, std::vector<uint32_t>> by_server;
    for (uint32_t r : ranks) {
        auto& list = by_server[p.server[r]];
        if (list.empty()) servers.push_back(p.server[r]);
        list.push_back(r);
    }
    const size_t per = by_server.begin()->second.size();
    bool even = servers.size() > 1 && per > 1;
    for (const auto& [s, list] : by_server) even = even && list.size() == per;
    if (!even) return ranks;
    std::vector<uint32_t> order;
    order.reserve(ranks.size());
    const size_t shift = size_t(channel) % per;
    for (int32_t s : servers) {
        const auto& list = by_server[s];
        for (size_t i = 0; i < per; ++i) order.push_back(list[(i + shift) % per]);
    }
    return order;
}

}  // namespace

uint32_t emit_collective(TaskGraph& g, const CollectiveContext& c, CollectiveKind kind, Group group, const std::vector<uint32_t>& ranks,
                         int64_t bytes, const std::vector<uint32_t>& ready, const std::string& name) {
    return emit_collective(g, c, kind, group, std::vector<std::vector<uint32_t>>{ranks}, bytes, ready, name);
}

uint32_t emit_collective(TaskGraph& g, const CollectiveContext& c, CollectiveKind kind, Group group, const std::vector<std::vector<uint32_t>>& family,
                         int64_t bytes, const std::vector<uint32_t>& ready, const std::string& name) {
    if (family.empty() || (family.size() > 1 && !g.lockstep()))
        throw std::logic_error("emit_collective: " + std::to_string(family.size()) + " groups at once need a lockstep graph");
    const std::vector<uint32_t>& ranks = family.front();
    const uint32_t coll = uint32_t(g.collectives.size());
    g.collectives.push_back({g.name(name), group, kind, ranks, bytes, 0, 0, uint32_t(family.size())});
    Emitter e{g, c, group, coll, g.collectives.back().name, nullptr, {}, 0};
    if (g.lockstep()) {
        for (const std::vector<uint32_t>& grp : family)
            if (grp.size() != ranks.size()) throw std::logic_error("emit_collective: the groups of a lockstep collective differ in size");
        e.family = &family;
        for (uint32_t i = 0; i < ranks.size(); ++i) e.at[ranks[i]] = i;
    }
    const Placement& p = c.place;
    const size_t n = ranks.size();
    const uint32_t start = e.join(ready, ranks[0]);
    g.collectives[coll].start = start;
    std::vector<uint32_t> finals;
    bool one_server = true;
    for (uint32_t r : ranks) one_server = one_server && p.server[r] == p.server[ranks[0]];
    const CustomAlgorithm* custom = nullptr;
    for (const auto& a : c.spec.custom)
        if (a->kind == kind && size_t(a->gpus) == n) custom = a.get();
    if (n <= 1 || bytes <= 0) {
        finals = {start};
    } else if (custom) {
        finals = e.custom(*custom, ranks, bytes, start);
    } else if (one_server) {
        finals = {e.local(kind, ranks, bytes, {start})};
    } else {
        CollectiveAlgorithm algo = c.spec.algorithm;
        // NCCL runs trees for all-reduce only; all-to-all is always direct.
        if (kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv) algo = CollectiveAlgorithm::direct;
        if (algo == CollectiveAlgorithm::tree && kind != CollectiveKind::all_reduce && kind != CollectiveKind::broadcast)
            algo = CollectiveAlgorithm::ring;
        if (algo == CollectiveAlgorithm::halving_doubling && !Emitter::power_of_two(n))
            throw InputError("workload.collectives.algorithm",
                             "halving-doubling needs a power-of-two group; the " + std::string(group_name(group)) + " group of " + name + " has " +
                                 std::to_string(n) + " ranks");
        const int channels = std::max(1, c.spec.channels);
        const std::vector<uint32_t> entry(n, start);
        for (int ch = 0; ch < channels; ++ch) {
            const int64_t data = bytes / channels + (ch < bytes % channels ? 1 : 0);
            e.channel = uint32_t(ch);
            std::vector<uint32_t> out;
            if (algo == CollectiveAlgorithm::hierarchical) {
                // Members by server, in order; positions inside a server must line up across servers.
                std::map<int32_t, std::vector<uint32_t>> by_server;
                for (uint32_t r : ranks) by_server[p.server[r]].push_back(r);
                const size_t per = by_server.begin()->second.size();
                bool even = true;
                for (const auto& [s, list] : by_server) even = even && list.size() == per;
                if (!even || per == 1) {
                    out = e.ring(ranks, data / int64_t(n), kind == CollectiveKind::all_reduce ? 2 * int(n - 1) : int(n - 1), entry);
                } else {
                    const size_t servers = by_server.size();
                    std::vector<uint32_t> local_done;
                    for (const auto& [s, list] : by_server)
                        local_done.push_back(kind == CollectiveKind::all_gather ? start
                                                                                 : e.local(CollectiveKind::reduce_scatter, list, data, {start}));
                    std::vector<uint32_t> received(servers, kNoOp);
                    std::vector<std::vector<uint32_t>> into_server(servers);
                    for (size_t pos = 0; pos < per; ++pos) {
                        std::vector<uint32_t> across;
                        for (const auto& [s, list] : by_server) across.push_back(list[pos]);
                        const int64_t share = data / int64_t(per);
                        const int steps = kind == CollectiveKind::all_reduce ? 2 * int(servers - 1) : int(servers - 1);
                        const std::vector<uint32_t> got = e.ring(across, share / int64_t(servers), steps, local_done);
                        for (size_t s = 0; s < servers; ++s) into_server[s].push_back(got[s]);
                    }
                    size_t s = 0;
                    for (const auto& [server, list] : by_server) {
                        out.push_back(kind == CollectiveKind::reduce_scatter ? e.join(into_server[s], list[0])
                                                                             : e.local(CollectiveKind::all_gather, list, data, into_server[s]));
                        ++s;
                    }
                }
            } else if (algo == CollectiveAlgorithm::ring) {
                const std::vector<uint32_t> order = channel_ring(p, ranks, ch);  // a broadcast keeps its root first
                out = kind == CollectiveKind::broadcast ? e.chain(ranks, data, entry)
                                                        : e.ring(order, data / int64_t(n), kind == CollectiveKind::all_reduce ? 2 * int(n - 1) : int(n - 1), entry);
            } else if (algo == CollectiveAlgorithm::tree) {
                out = kind == CollectiveKind::broadcast ? e.chain(ranks, data, entry) : e.trees(ranks, data, entry);
            } else if (algo == CollectiveAlgorithm::halving_doubling) {
                out = kind == CollectiveKind::broadcast ? e.chain(ranks, data, entry) : e.halving_doubling(ranks, data, entry, kind);
            } else {
                out = e.direct(ranks, data, entry, kind);
            }
            finals.insert(finals.end(), out.begin(), out.end());
        }
    }
    g.collectives[coll].end = e.join(finals, ranks[0]);
    return coll;
}

uint32_t emit_sends(TaskGraph& g, const CollectiveContext& c, Group group, const std::vector<RankPair>& pairs, int64_t bytes, uint32_t after,
                    const std::string& name) {
    if (pairs.empty() || !g.lockstep()) throw std::logic_error("emit_sends: sends at once need a lockstep graph and at least one pair");
    const uint32_t from = pairs.front().first, to = pairs.front().second;
    const uint32_t coll = uint32_t(g.collectives.size());
    g.collectives.push_back({g.name(name), group, CollectiveKind::send_recv, {from, to}, bytes, 0, 0, uint32_t(pairs.size())});
    std::vector<std::vector<uint32_t>> family;
    for (const RankPair& pr : pairs) family.push_back({pr.first, pr.second});
    Emitter e{g, c, group, coll, g.collectives.back().name, nullptr, {}, 0};
    e.family = &family;
    e.at = {{from, 0}, {to, 1}};
    const uint32_t start = e.join({after}, from);
    g.collectives[coll].start = start;
    // Every pair's channels share its path's fair share alike, so one task per channel carries them.
    std::vector<uint32_t> parts;
    const int channels = std::max(1, c.spec.channels);
    for (int ch = 0; ch < channels; ++ch) {
        e.channel = uint32_t(ch);
        parts.push_back(e.move(from, to, bytes / channels + (ch < bytes % channels ? 1 : 0), {start}));
    }
    g.collectives[coll].end = e.join(parts, to);
    return g.collectives[coll].end;
}

uint32_t emit_send(TaskGraph& g, const CollectiveContext& c, Group group, uint32_t from, uint32_t to, int64_t bytes, uint32_t after,
                   const std::string& name) {
    const uint32_t coll = uint32_t(g.collectives.size());
    g.collectives.push_back({g.name(name), group, CollectiveKind::send_recv, {from, to}, bytes, 0, 0, 1});
    Emitter e{g, c, group, coll, g.collectives.back().name, nullptr, {}, 0};
    const uint32_t start = e.join({after}, from);
    g.collectives[coll].start = start;
    std::vector<uint32_t> parts;
    const int channels = c.place.server[from] == c.place.server[to] ? 1 : std::max(1, c.spec.channels);
    if (c.place.server[from] == c.place.server[to] && bytes > 0) parts.push_back(e.local(CollectiveKind::send_recv, {from, to}, bytes, {start}));  // a call of its own: α
    else
        for (int ch = 0; ch < channels; ++ch) parts.push_back(e.move(from, to, bytes / channels + (ch < bytes % channels ? 1 : 0), {start}));
    g.collectives[coll].end = e.join(parts, to);
    return g.collectives[coll].end;
}

}  // namespace orrery
