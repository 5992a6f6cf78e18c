// engine/topology: generator counts and tiers, routing (reachability, ECMP set sizes), flow paths.
#include <QtTest>

#include <set>

#include "io/astra_yaml.h"
#include "topology/generators.h"
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
