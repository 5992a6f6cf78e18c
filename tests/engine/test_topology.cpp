// engine/topology: generator counts and tiers, routing (reachability, ECMP set sizes), flow paths.
#include <QtTest>

#include <map>
#include <set>

#include "io/astra_yaml.h"
#include "topology/generators.h"
#include "topology/path_split.h"
#include "topology/routing.h"

using namespace orrery;

namespace {
const LinkClass k100{gbps(100), microseconds(1)};

size_t switches_in_tier(const Fabric& f, int tier) {
    size_t n = 0;
    for (NodeId i = 0; i < f.node_count(); ++i) n += f.node_kind[i] == NodeKind::network_switch && f.node_tier[i] == tier;
    return n;
}

// Counts of equal-cost next hops from `at` toward host `dst`.
size_t width(const Fabric& f, const Routes& r, NodeId at, NodeId dst) { return next_hops(f, r, at, dst).size(); }

// The fabrics the routing checks below run on: link classes mixed, oversubscribed tiers, NVLink, parallel links,
// and ASTRA-sim dimensions, whose hosts forward.
std::vector<std::pair<const char*, Fabric>> routing_fabrics() {
    const LinkClass l200{gbps(200), microseconds(2)}, l400{gbps(400), Picoseconds(2'500'000)};
    std::vector<std::pair<const char*, Fabric>> out;
    out.emplace_back("fat-tree k=4, mixed links", generate(fat_tree(4, k100, l200, l400)));
    ThreeTierParams three;
    three.pods = 3, three.tors_per_pod = 4, three.aggs_per_pod = 2, three.hosts_per_tor = 3, three.cores = 4;
    three.host = k100, three.tier1 = l200, three.tier2 = l400;
    out.emplace_back("3-tier, oversubscribed", generate(three));
    RailOptimizedParams rail;
    rail.gpus = 64, rail.gpus_per_server = 8, rail.hosts_per_leaf = 4, rail.spines_per_pod = 2;
    rail.host = rail.tier1 = rail.tier2 = l400;
    rail.nvlink = {8, {BitsPerSecond(7'200'000'000'000), Picoseconds(25'000)}};
    out.emplace_back("rail-optimized, NVLink", generate(rail));
    LeafSpineParams ls;
    ls.leaves = 4, ls.spines = 3, ls.hosts_per_leaf = 3, ls.links_per_spine = 2, ls.host = k100, ls.tier1 = l200;
    out.emplace_back("leaf-spine, two links per spine", generate(ls));
    out.emplace_back("ASTRA-sim 3d", astra_fabric({{"Ring", 2, 200, 50}, {"FullyConnected", 4, 100, 500}, {"Switch", 4, 50, 2000}}, "3d"));
    return out;
}

bool same_metrics(const PathMetrics& a, const PathMetrics& b) {
    return a.hops == b.hops && a.delay_ns == b.delay_ns && a.tx_delay_ns == b.tx_delay_ns && a.min_bw == b.min_bw;
}
}  // namespace

class TestTopology : public QObject {
    Q_OBJECT
private slots:
    void fat_tree_counts_data() {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("hosts");
        QTest::addColumn<int>("switches");
        QTest::addColumn<int>("links");
        QTest::newRow("k=4 (reference)") << 4 << 16 << 20 << 48;
        QTest::newRow("k=8") << 8 << 128 << 80 << 384;
        QTest::newRow("k=16") << 16 << 1024 << 320 << 3072;
    }
    void fat_tree_counts() {
        QFETCH(int, k);
        QFETCH(int, hosts);
        QFETCH(int, switches);
        QFETCH(int, links);
        Fabric f = generate(fat_tree(k, k100, k100, k100));
        QCOMPARE(int(f.count(NodeKind::host)), hosts);
        QCOMPARE(int(f.count(NodeKind::network_switch)), switches);
        QCOMPARE(int(f.link_count()), links);
        QCOMPARE(int(switches_in_tier(f, 1)), k * k / 2);
        QCOMPARE(int(switches_in_tier(f, 2)), k * k / 2);
        QCOMPARE(int(switches_in_tier(f, 3)), k * k / 4);
        for (NodeId n = 0; n < f.node_count(); ++n) QCOMPARE(int(f.port_count(n)), f.is_host(n) ? 1 : k);
    }
    void reference_numbering() {
        // reference/ns3-hpcc README §2: ToR 16+2p+e holds hosts 4p+2e, +1 then aggs 24+2p, 25+2p; agg 24+2p+a reaches cores 32+2a, 33+2a.
        Fabric f = generate(fat_tree(4, k100, k100, k100));
        const NodeId tor17[] = {2, 3, 24, 25};
        for (uint32_t p = 0; p < 4; ++p) QCOMPARE(f.port_peer[f.port_begin[17] + p], tor17[p]);
        const NodeId agg27[] = {18, 19, 34, 35};
        for (uint32_t p = 0; p < 4; ++p) QCOMPARE(f.port_peer[f.port_begin[27] + p], agg27[p]);
        const NodeId core33[] = {24, 26, 28, 30};
        for (uint32_t p = 0; p < 4; ++p) QCOMPARE(f.port_peer[f.port_begin[33] + p], core33[p]);
    }
    void fat_tree_ecmp_widths() {
        const int k = 8;
        Fabric f = generate(fat_tree(k, k100, k100, k100));
        Routes r = build_routes(f);
        const NodeId hosts = 128, tor0 = hosts, agg0 = hosts + 32, core0 = hosts + 64;
        // Host 0 sits under ToR 0 of pod 0; host 127 in pod 7; host 5 under ToR 1 of pod 0.
        QCOMPARE(width(f, r, tor0, 127), size_t(k / 2));   // up to any agg of the pod
        QCOMPARE(width(f, r, agg0, 127), size_t(k / 2));   // up to any core of the agg's group
        QCOMPARE(width(f, r, core0, 127), size_t(1));      // down to the one agg of pod 7
        QCOMPARE(width(f, r, tor0, 5), size_t(k / 2));     // same pod, other ToR: via any agg
        QCOMPARE(width(f, r, agg0, 5), size_t(1));         // down to ToR 1
        QCOMPARE(width(f, r, tor0, 1), size_t(1));         // same ToR: deliver
        QCOMPARE(r.group_count, 32u);                      // one group per ToR
    }
    void capacity_weights_follow_what_each_next_hop_can_carry() {
        // k = 4: ToR 0 reaches pod 3 through either aggregation switch of pod 0, each with two core uplinks.
        // Healthy, every weight is 1 (ECMP's choices). With one uplink of aggregation switch 0 failed, it can
        // carry on half of what its two ToRs could send it toward pod 3: ToR 0 weighs it 1 against 2, and
        // flows through it are the fewer.
        Fabric f = generate(fat_tree(4, k100, k100, k100));
        const NodeId hosts = 16, tor0 = hosts, agg0 = hosts + 8, far_host = 15, near_host = 2;
        auto weights = [&](const Routes& r, NodeId node, NodeId dst) {
            const uint32_t s = r.hop_set[size_t(r.forwarder_row[node]) * r.group_count + r.host_group[dst]];
            std::vector<std::pair<uint32_t, uint32_t>> out;  // (peer, weight)
            for (uint32_t i = r.set_begin[s]; i < r.set_begin[s + 1]; ++i)
                out.push_back({f.port_peer[f.port_begin[node] + r.set_ports[i]], r.set_weights[i]});
            return out;
        };
        Routes healthy = build_routes(f);
        weight_by_capacity(f, healthy);
        for (const auto& [peer, w] : weights(healthy, tor0, far_host)) QCOMPARE(w, 1u);
        std::vector<uint8_t> down(f.link_count(), 0);
        const LinkId uplink = f.port_link[f.port_begin[agg0] + 2];  // ports 0-1 lead down to the ToRs, 2-3 up to cores
        QCOMPARE(int(f.node_tier[f.port_peer[f.port_begin[agg0] + 2]]), 3);
        down[uplink] = 1;
        Routes failed = build_routes(f, 0, &down);
        weight_by_capacity(f, failed);
        const auto w = weights(failed, tor0, far_host);
        QCOMPARE(w.size(), size_t(2));
        for (const auto& [peer, weight] : w) QCOMPARE(weight, peer == agg0 ? 1u : 2u);
        // Within pod 0 both aggregation switches reach ToR 1, and the cores send them pod 0's traffic too: the one
        // with a core link fewer receives less from the cores, so it has more of its downlink left for ToR 0.
        const auto local = weights(failed, tor0, near_host);
        QCOMPARE(local.size(), size_t(2));
        QVERIFY((local[0].first == agg0) == (local[0].second > local[1].second));
        // ECMP's pick by weight: with weights 1 and 2 a third of the hash range goes to the first.
        const uint32_t one_two[] = {1, 2};
        int first = 0;
        for (uint32_t h = 0; h < 3000; ++h) first += weighted_index(one_two, 2, ecmp_hash(h, 7, 10000, 100, 5)) == 0;
        QVERIFY2(first > 900 && first < 1100, qPrintable(QString::number(first)));
        const uint32_t ones[] = {1, 1, 1, 1};
        for (uint64_t h = 0; h < 100; ++h) QCOMPARE(weighted_index(ones, 4, h), uint32_t(h % 4));
    }
    void a_split_flow_shares_every_equal_cost_path() {
        // Host 0 to host 15 on the k = 4 fat-tree: half over each ToR uplink, a quarter over each aggregation
        // uplink and core downlink, all of it into the last ToR and host; each hop's shares add up to the
        // whole flow. Weighted 1:2 (an aggregation switch that lost an uplink), a third and two thirds.
        Fabric f = generate(fat_tree(4, k100, k100, k100));
        const NodeId tor0 = 16, agg0 = 24;
        std::vector<std::pair<uint32_t, double>> split;
        path_split(f, build_routes(f), 0, 15, split);
        std::map<int, double> by_tier;  // the sending node's tier → shares
        for (const auto& [port, share] : split) {
            NodeId node = 0;
            while (f.port_begin[node + 1] <= port) ++node;
            by_tier[f.node_tier[node] * 10 + f.node_tier[f.port_peer[port]]] += share;
            if (node == tor0) QCOMPARE(share, 0.5);
            if (f.node_tier[node] == 2 && f.node_tier[f.port_peer[port]] == 3) QCOMPARE(share, 0.25);
        }
        for (int hop : {1, 12, 23, 32, 21, 10}) QVERIFY2(std::abs(by_tier[hop] - 1.0) < 1e-12, qPrintable(QString::number(hop)));
        std::vector<uint8_t> down(f.link_count(), 0);
        down[f.port_link[f.port_begin[agg0] + 2]] = 1;
        Routes failed = build_routes(f, 0, &down);
        weight_by_capacity(f, failed);
        path_split(f, failed, 0, 15, split);
        for (const auto& [port, share] : split)
            if (port >= f.port_begin[tor0] && port < f.port_begin[tor0 + 1])
                QVERIFY(std::abs(share - (f.port_peer[port] == agg0 ? 1.0 / 3 : 2.0 / 3)) < 1e-12);
    }
    void fat_tree_every_pair_reachable_by_shortest_path() {
        Fabric f = generate(fat_tree(8, k100, k100, k100));
        Routes r = build_routes(f);
        for (NodeId a = 0; a < 128; ++a)
            for (NodeId b = 0; b < 128; ++b) {
                const int expected = a == b ? 0 : a / 4 == b / 4 ? 2 : a / 16 == b / 16 ? 4 : 6;
                QCOMPARE(path_length(f, r, a, b), expected);
            }
    }
    void flow_paths_follow_the_hash() {
        Fabric f = generate(fat_tree(4, k100, k100, k100));
        Routes r = build_routes(f);
        std::vector<Hop> path = flow_path(f, r, 4, 5 + 8, 10000, 100);
        QCOMPARE(path.size(), size_t(6));
        QCOMPARE(path.front().node, NodeId(4));
        NodeId last = f.port_peer[f.port_begin[path.back().node] + path.back().port];
        QCOMPARE(last, NodeId(13));
        // Different source ports spread over different cores at least once among 16 flows.
        std::set<NodeId> cores;
        for (uint16_t sport = 10000; sport < 10016; ++sport) cores.insert(flow_path(f, r, 4, 13, sport, 100)[3].node);
        QVERIFY(cores.size() > 1);
        QCOMPARE(flow_path(f, r, 4, 13, 10003, 100)[3].node, flow_path(f, r, 4, 13, 10003, 100)[3].node);
    }
    void leaf_spine_oversubscription() {
        LeafSpineParams p;
        p.leaves = 2, p.spines = 2, p.hosts_per_leaf = 8, p.links_per_spine = 2;
        p.host = p.tier1 = k100;
        Fabric f = generate(p);
        QCOMPARE(int(f.count(NodeKind::host)), 16);
        QCOMPARE(int(f.count(NodeKind::network_switch)), 4);
        QCOMPARE(int(f.link_count()), 16 + 2 * 2 * 2);
        Routes r = build_routes(f);
        QCOMPARE(width(f, r, 16, 15), size_t(4));  // leaf 0 to a host of leaf 1: 2 spines × 2 parallel links
        QCOMPARE(width(f, r, 18, 15), size_t(2));  // spine 0 down to leaf 1 over 2 parallel links
    }
    void rail_optimized_two_tiers() {
        RailOptimizedParams p;
        p.gpus = 128, p.gpus_per_server = 8, p.hosts_per_leaf = 16, p.spines_per_pod = 16, p.tiers = 2;
        p.host = p.tier1 = p.tier2 = k100;
        p.nvlink = {8, {BitsPerSecond(7'200'000'000'000), Picoseconds(25'000)}};
        Fabric f = generate(p);
        QCOMPARE(int(f.count(NodeKind::host)), 128);
        QCOMPARE(int(f.count(NodeKind::nvswitch)), 16);
        QCOMPARE(int(switches_in_tier(f, 1)), 8);   // one leaf per rail
        QCOMPARE(int(switches_in_tier(f, 2)), 16);
        QCOMPARE(int(f.link_count()), 128 + 128 + 8 * 16);
        // GPU r of every server hangs off rail leaf r: its network port is port 1 (port 0 is NVLink).
        for (NodeId g = 0; g < 128; ++g) {
            NodeId leaf = f.port_peer[f.port_begin[g] + 1];
            QCOMPARE(leaf, NodeId(128 + 16 + g % 8));
            QCOMPARE(f.node_server[g], int32_t(g / 8));
        }
        Routes r = build_routes(f);
        QCOMPARE(path_length(f, r, 0, 8), 2);   // same rail: through the rail leaf
        QCOMPARE(path_length(f, r, 0, 9), 4);   // other rail: leaf, spine, leaf (NVLink is not network routing)
        QCOMPARE(width(f, r, 128 + 16, 9), size_t(16));
    }
    void rail_optimized_three_tiers() {
        RailOptimizedParams p;
        p.gpus = 256, p.gpus_per_server = 8, p.hosts_per_leaf = 4, p.spines_per_pod = 4, p.tiers = 3, p.servers_per_pod = 8;
        p.host = p.tier1 = p.tier2 = k100;
        Fabric f = generate(p);
        // 32 servers in 4 pods; per pod 8 rails × 2 leaves, 4 spines; cores = 4 spines × 16 leaves per pod.
        QCOMPARE(int(switches_in_tier(f, 1)), 4 * 16);
        QCOMPARE(int(switches_in_tier(f, 2)), 4 * 4);
        QCOMPARE(int(switches_in_tier(f, 3)), 64);
        Routes r = build_routes(f);
        QCOMPARE(path_length(f, r, 0, 255), 6);
    }
    void single_switch() {
        SingleSwitchParams p;
        p.hosts = 5;
        p.host = k100;
        Fabric f = generate(p);
        QCOMPARE(int(f.link_count()), 5);
        Routes r = build_routes(f);
        QCOMPARE(path_length(f, r, 0, 4), 2);
    }
    void astra_dimensions_make_a_forwarding_fabric() {
        std::vector<AstraDimension> dims = {{"Ring", 2, 200, 50}, {"FullyConnected", 8, 100, 500}, {"Switch", 4, 50, 2000}};
        Fabric f = astra_fabric(dims, "3d");
        QCOMPARE(int(f.count(NodeKind::host)), 64);
        QCOMPARE(int(f.count(NodeKind::network_switch)), 16);
        QCOMPARE(int(f.link_count()), 32 + 8 * 28 + 16 * 4);
        // 200 GB/s with GB = 2^30 B; 50 ns.
        QCOMPARE(f.link_rate[0].count, 200LL * 1073741824LL * 8);
        QCOMPARE(f.link_delay[0].count, 50'000LL);
        Routes r = build_routes(f);
        QCOMPARE(path_length(f, r, 0, 1), 1);    // ring neighbours
        QCOMPARE(path_length(f, r, 0, 2), 1);    // fully connected
        QCOMPARE(path_length(f, r, 0, 16), 2);   // through the dimension's switch
        QCOMPARE(path_length(f, r, 0, 63), 4);
    }
    void routes_hold_the_ports_one_hop_nearer() {
        // Every table cell against the definition: the node's ports toward forwarders one hop nearer the group, in
        // port order; each set stored once, numbered in the order its first cell comes (group by group, row by row).
        for (const auto& [name, f] : routing_fabrics()) {
            const Routes r = build_routes(f);
            std::vector<NodeId> forwarder(r.forwarder_count);
            for (NodeId n = 0; n < f.node_count(); ++n)
                if (r.forwarder_row[n] != kNone) forwarder[r.forwarder_row[n]] = n;
            std::map<std::vector<uint16_t>, uint32_t> id_of;
            uint32_t next_id = 0;
            for (uint32_t g = 0; g < r.group_count; ++g)
                for (uint32_t row = 0; row < r.forwarder_count; ++row) {
                    const size_t cell = size_t(row) * r.group_count + g;
                    const uint8_t d = r.hops[cell];
                    if (d == Routes::kUnreachable || (d == 0 && f.hosts_forward)) continue;
                    if (d == 0) {
                        QVERIFY2(r.hop_set[cell] == Routes::kDeliver, name);
                        continue;
                    }
                    std::vector<uint16_t> expected;
                    const NodeId u = forwarder[row];
                    for (uint32_t p = f.port_begin[u]; p < f.port_begin[u + 1]; ++p) {
                        const uint32_t peer = r.forwarder_row[f.port_peer[p]];
                        if (peer != kNone && r.hops[size_t(peer) * r.group_count + g] + 1 == d) expected.push_back(uint16_t(p - f.port_begin[u]));
                    }
                    const uint32_t id = r.hop_set[cell];
                    QVERIFY2(id < r.set_begin.size() - 1, name);
                    const std::vector<uint16_t> stored(r.set_ports.begin() + r.set_begin[id], r.set_ports.begin() + r.set_begin[id + 1]);
                    QVERIFY2(stored == expected, name);
                    auto [it, fresh] = id_of.emplace(stored, next_id);
                    if (fresh) ++next_id;
                    QVERIFY2(it->second == id, name);  // one id per set, in order of first use
                }
            QCOMPARE(size_t(next_id), r.set_begin.size() - 1);
        }
    }
    void routes_do_not_depend_on_the_worker_count() {
        std::vector<std::pair<const char*, Fabric>> fabrics = routing_fabrics();
        fabrics.emplace_back("fat-tree k=16", generate(fat_tree(16, k100, k100, k100)));
        for (const auto& [name, f] : fabrics) {
            const Routes one = build_routes(f, 1);
            for (unsigned workers : {2u, 3u, 7u, 1000u}) {
                const Routes many = build_routes(f, workers);
                QVERIFY2(many.hops == one.hops && many.hop_set == one.hop_set, name);
                QVERIFY2(many.set_begin == one.set_begin && many.set_ports == one.set_ports, name);
            }
        }
    }
    void path_metrics_memo_matches_the_walk() {
        // compile_batch's largest RTT walks destination by destination with one memo; any order must give the
        // walk's own figures, forwarders as sources too, and unreachable pairs (NVSwitches are no network) alike.
        for (const auto& [name, f] : routing_fabrics()) {
            const Routes r = build_routes(f);
            PathMemo by_destination, shuffled;
            const NodeId n = NodeId(f.node_count());
            int reachable = 0;
            for (NodeId dst = 0; dst < n; ++dst) {
                if (!f.is_host(dst)) continue;
                for (NodeId src = 0; src < n; ++src) {
                    const PathMetrics walk = path_metrics(f, r, src, dst, 1000);
                    QVERIFY2(same_metrics(path_metrics(f, r, src, dst, 1000, by_destination), walk), name);
                    reachable += walk.hops > 0;
                }
            }
            QVERIFY2(reachable > 0, name);
            uint64_t x = 12345;
            for (int i = 0; i < 4000; ++i) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                const NodeId src = NodeId((x >> 33) % n), dst = NodeId((x >> 13) % n);
                const uint32_t mtu = (x & 1) ? 1000 : 4096;
                if (!f.is_host(dst)) continue;
                QVERIFY2(same_metrics(path_metrics(f, r, src, dst, mtu, shuffled), path_metrics(f, r, src, dst, mtu)), name);
            }
        }
    }
    void fabric_checks_name_the_problem() {
        Fabric f;
        add_node(f, NodeKind::host, 0);
        add_node(f, NodeKind::host, 0);
        add_node(f, NodeKind::network_switch, 1);
        add_link(f, 0, 2, gbps(100), microseconds(1));
        finalize_ports(f);
        std::vector<std::string> problems = check_fabric(f);
        QCOMPARE(problems.size(), size_t(1));
        QCOMPARE(problems[0], std::string("node 1 is a host without any link"));
    }
};

QTEST_GUILESS_MAIN(TestTopology)
#include "test_topology.moc"
