// engine/io: reading the field's formats exactly, and round trips through every writer.
#include <QtTest>

#include <map>
#include <tuple>

#include "io/astra_yaml.h"
#include "io/fabric_json.h"
#include "io/graph_formats.h"
#include "io/hpcc_config.h"
#include "io/hpcc_flows.h"
#include "io/hpcc_topology.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/read.h"
#include "topology/generators.h"

using namespace orrery;

namespace {
const std::filesystem::path kRef = std::filesystem::path(ORRERY_TEST_DIR) / "reference";

void compare_fabrics(const Fabric& a, const Fabric& b) {
    QCOMPARE(a.node_kind, b.node_kind);
    QCOMPARE(a.node_tier, b.node_tier);
    QCOMPARE(a.link_a, b.link_a);
    QCOMPARE(a.link_b, b.link_b);
    QCOMPARE(a.link_rate, b.link_rate);
    QCOMPARE(a.link_delay, b.link_delay);
    QCOMPARE(a.link_error_rate, b.link_error_rate);
    QCOMPARE(a.port_peer, b.port_peer);
    QCOMPARE(a.gpus_per_server, b.gpus_per_server);
    QCOMPARE(a.hosts_forward, b.hosts_forward);
}

Fabric sample(const QString& name) {
    const LinkClass l{gbps(100), microseconds(1)};
    if (name == "fat-tree") return generate(fat_tree(4, l, l, l));
    if (name == "astra") return read_astra_yaml_file(kRef / "formats/astra-network-yaml/Ring_FullyConnected_Switch.yml");
    if (name == "simai") return read_hpcc_topology_file(kRef / "formats/simai-topology/Rail_Opti_SingleToR_16g_8gps_200Gbps_H20");
    RailOptimizedParams p;
    p.gpus = 64, p.gpus_per_server = 8, p.hosts_per_leaf = 8, p.spines_per_pod = 8;
    p.host = p.tier1 = p.tier2 = l;
    p.nvlink = {8, {BitsPerSecond(7'200'000'000'000), Picoseconds(25'000)}};
    return generate(p);
}
}  // namespace

namespace QTest {
template <>
char* toString(const orrery::BitsPerSecond& v) { return qstrdup(std::to_string(v.count).c_str()); }
template <>
char* toString(const orrery::Picoseconds& v) { return qstrdup(std::to_string(v.count).c_str()); }
}  // namespace QTest

class TestIo : public QObject {
    Q_OBJECT
private slots:
    void reference_topology_round_trips_byte_for_byte() {
        const std::string text = read_text_file(kRef / "ns3-hpcc/topology.txt");
        Fabric f = read_hpcc_topology(text, "topology.txt");
        QCOMPARE(int(f.count(NodeKind::host)), 16);
        QCOMPARE(int(f.link_count()), 48);
        QCOMPARE(f.link_delay[0].count, 1'000'000LL);
        QCOMPARE(write_hpcc_topology(f), text);
        // And it is the generator's k = 4 fat-tree, node for node and port for port.
        QCOMPARE(write_hpcc_topology(sample("fat-tree")), text);
    }
    void simai_topologies() {
        Fabric f = sample("simai");
        QCOMPARE(int(f.node_count()), 34);
        QCOMPARE(int(f.count(NodeKind::nvswitch)), 2);
        QCOMPARE(int(f.count(NodeKind::network_switch)), 16);
        QCOMPARE(f.gpus_per_server, 8);
        QCOMPARE(f.gpu_type, std::string("H20"));
        QCOMPARE(f.link_rate[0].count, 900'000'000'000LL);
        QCOMPARE(f.link_delay[0].count, 25'000LL);  // 0.000025ms
        QCOMPARE(f.node_server[9], 1);
        compare_fabrics(read_hpcc_topology(write_hpcc_topology(f), "again"), f);
        // The "64gpu" file holds 8 GPUs, as its header says (reference/formats/simai-topology README).
        Fabric g = read_hpcc_topology_file(kRef / "formats/simai-topology/Rail_Opti_SingleToR_64gpu_8gps_200Gbps_H20");
        QCOMPARE(int(g.count(NodeKind::host)), 8);
        QCOMPARE(int(g.link_count()), 528);
    }
    void graph_formats_round_trip_data() {
        QTest::addColumn<QString>("fabric");
        for (const char* name : {"fat-tree", "rail-optimized", "astra", "simai"}) QTest::newRow(name) << name;
    }
    void graph_formats_round_trip() {
        QFETCH(QString, fabric);
        const Fabric f = sample(fabric);
        compare_fabrics(read_graphml(write_graphml(f), "x.graphml"), f);
        compare_fabrics(read_dot(write_dot(f), "x.dot"), f);
        Diagnostics d;
        nlohmann::json topology = fabric_to_topology_json(f);
        JsonReader r(topology, "x.json", "topology", d);
        std::optional<TopologySpec> spec = read_topology(r, ".");
        QVERIFY2(spec.has_value(), d.format().c_str());
        compare_fabrics(build_fabric(*spec), f);
    }
    void reference_flows() {
        std::vector<FlowSpec> flows = read_hpcc_flow_file(kRef / "ns3-hpcc/flow_incast.txt");
        QCOMPARE(flows.size(), size_t(15));
        QCOMPARE(flows[0].src, NodeId(1));
        QCOMPARE(flows[0].dst, NodeId(0));
        QCOMPARE(flows[0].priority, 3);
        QCOMPARE(flows[0].size.count, 1'000'000LL);
        QCOMPARE(flows[0].start.count, 2'000'000'000'000LL);
        QCOMPARE(flows[0].sport, uint16_t(10000));
        std::vector<FlowSpec> again = read_hpcc_flows(write_hpcc_flows(flows), "again");
        for (size_t i = 0; i < flows.size(); ++i) QCOMPARE(again[i].start, flows[i].start);
    }
    void flow_start_times_survive_the_seconds_format() {
        std::vector<FlowSpec> flows(3);
        const int64_t ns[] = {1, 2'000'000'001, 3'999'999'999};
        for (int i = 0; i < 3; ++i) {
            flows[i].src = 1, flows[i].dst = 0, flows[i].size = Bytes(1), flows[i].start = nanoseconds(ns[i]);
        }
        std::vector<FlowSpec> back = read_hpcc_flows(write_hpcc_flows(flows), "t");
        for (int i = 0; i < 3; ++i) QCOMPARE(back[i].start.count, ns[i] * 1000);
        flows[0].start = Picoseconds(1500);
        QVERIFY_THROWS_EXCEPTION(InputError, write_hpcc_flows(flows));
    }
    void flow_start_times_truncate_as_ns3_does() {
        // The reference converts the double 2.000000026 (binary 2.0000000259999…) in 64.64 fixed point and
        // truncates: its FCT file starts that flow at 2000000025 ns (measured with the reference simulator).
        const std::vector<FlowSpec> flows = read_hpcc_flows("2\n1 0 3 100 1000 2.000000026\n2 0 3 100 1000 2.000000039\n", "t");
        QCOMPARE(flows[0].start.count, 2'000'000'025'000LL);
        QCOMPARE(flows[1].start.count, 2'000'000'039'000LL);
        // Written back, 2000000026 ns needs more digits than 2.000000026 to survive the reference's reading.
        std::vector<FlowSpec> exact(1);
        exact[0].src = 1, exact[0].dst = 0, exact[0].size = Bytes(1), exact[0].start = nanoseconds(2'000'000'026);
        QCOMPARE(read_hpcc_flows(write_hpcc_flows(exact), "t")[0].start.count, 2'000'000'026'000LL);
    }
    void reference_configs_map_every_key_data() {
        QTest::addColumn<QString>("cc");
        for (const char* cc : {"dcqcn", "hpcc", "timely", "dctcp"}) QTest::newRow(cc) << cc;
    }
    void reference_configs_map_every_key() {
        QFETCH(QString, cc);
        const std::filesystem::path file = kRef / ("ns3-hpcc/config_incast_" + cc.toStdString() + ".txt");
        Diagnostics diags;
        HpccConfig config = read_hpcc_config(read_text_file(file), file.filename().string(), file.parent_path(), diags);
        nlohmann::json doc = scenario_from_hpcc_config(config, file.parent_path(), file.parent_path(), diags);
        QVERIFY2(!diags.has_errors(), diags.format().c_str());
        // Reported, not dropped: the trace keys and PINT's; and every key of another CC, which the reference's
        // RdmaHw reads only under its own CC_MODE (DCQCN's timers and EWMA, HPCC's six, DCTCP's rate).
        size_t warnings = 0, other_cc = 0;
        for (const Diagnostic& d : diags.items()) {
            if (d.severity != Diagnostic::Severity::warning) continue;
            if (d.message.find("no effect with CC_MODE") != std::string::npos) other_cc += size_t(std::count(d.message.begin(), d.message.end(), '('));
            else ++warnings;
        }
        QCOMPARE(warnings, size_t(5));
        const std::map<QString, size_t> keys_of_other_ccs = {{"dcqcn", 7}, {"hpcc", 8}, {"timely", 13}, {"dctcp", 13}};
        QCOMPARE(other_cc, keys_of_other_ccs.at(cc) + 1);  // "(line N)" per key, and the CC's name
        LoadedScenario s = load_scenario_document(doc, "config", file.parent_path(), PresetLibrary());
        const Scenario& sc = s.base;
        QCOMPARE(std::string(cc_algorithm_name(sc.cc.algorithm)), cc.toStdString());
        QCOMPARE(sc.network.buffer_per_switch.count, 32LL << 20);
        QCOMPARE(sc.network.packet_payload.count, 1000LL);
        QCOMPARE(ecn_for_rate(sc, gbps(100)).kmin.count, cc == "dctcp" ? 300'000LL : 400'000LL);
        QCOMPARE(sc.cc.min_rate.count, 1'000'000'000LL);
        QCOMPARE(sc.cc.ack_high_priority, cc == "dcqcn" || cc == "timely");
        QCOMPARE(sc.workload.stop_time->count, 4'000'000'000'000LL);
        QCOMPARE(*sc.output.queue_monitor_start, Picoseconds(2'000'000'000'000LL));
        if (cc == "hpcc") {
            QCOMPARE(sc.cc.hpcc.int_multi, 4);
            QCOMPARE(sc.cc.hpcc.eta, 0.95);
            QVERIFY(sc.cc.variable_window);
        }
        // Written back as a config and read again, it means the same scenario.
        Diagnostics d2;
        HpccConfig back = read_hpcc_config(write_hpcc_config(sc, "topology.txt", "flow_incast.txt"), "back", file.parent_path(), d2);
        nlohmann::json doc2 = scenario_from_hpcc_config(back, file.parent_path(), file.parent_path(), d2);
        doc2["output"] = doc["output"];
        doc2["name"] = doc["name"];
        doc2["description"] = doc["description"];
        QCOMPARE(QString::fromStdString(doc2.dump()), QString::fromStdString(doc.dump()));
    }
    void ack_interval_is_bytes_in_the_reference_and_packets_here() {
        // L2_ACK_INTERVAL counts bytes against the receiver's next expected byte: up to one payload acknowledges
        // every packet, 4000 every 4th 1000-byte packet; 1500 falls unevenly (every 1.5 on average), rounded up
        // to 2 with a warning naming the line. Written back, k packets are k payloads.
        const std::filesystem::path file = kRef / "ns3-hpcc/config_incast_dcqcn.txt";
        const std::string base = read_text_file(file);
        for (const auto& [bytes, packets, warned] : std::vector<std::tuple<int, int, bool>>{{1, 1, false}, {1000, 1, false}, {4000, 4, false}, {1500, 2, true}}) {
            std::string text = base;
            const size_t at = text.find("L2_ACK_INTERVAL");
            QVERIFY(at != std::string::npos);
            text.replace(at, text.find('\n', at) - at, "L2_ACK_INTERVAL " + std::to_string(bytes));
            Diagnostics diags;
            HpccConfig config = read_hpcc_config(text, "c.txt", file.parent_path(), diags);
            nlohmann::json doc = scenario_from_hpcc_config(config, file.parent_path(), file.parent_path(), diags);
            QCOMPARE(doc["network"]["ack"]["interval_packets"].get<int>(), packets);
            bool warning = false;
            for (const Diagnostic& d : diags.items()) warning |= d.message.find("L2_ACK_INTERVAL " + std::to_string(bytes) + " is not a whole number") != std::string::npos;
            QCOMPARE(warning, warned);
            LoadedScenario s = load_scenario_document(doc, "config", file.parent_path(), PresetLibrary());
            const std::string back = write_hpcc_config(s.base, "topology.txt", "flow.txt");
            const std::string expected = "L2_ACK_INTERVAL " + std::to_string(packets == 1 ? 1 : packets * 1000) + "\n";
            QVERIFY2(back.find(expected) != std::string::npos, back.c_str());
        }
    }
    void config_reports_unknown_and_duplicate_keys() {
        Diagnostics d;
        HpccConfig c = read_hpcc_config("CC_MODE 3\nBUFER_SIZE 32\nCC_MODE 1\n", "c.txt", ".", d);
        QCOMPARE(d.items().size(), size_t(2));
        QCOMPARE(d.items()[0].line(), std::string("c.txt:2: warning: unknown key \"BUFER_SIZE\", skipped as the reference skips it (did you mean \"BUFFER_SIZE\"?)"));
        QCOMPARE(d.items()[1].line(), std::string("c.txt:3: warning: CC_MODE was already given on line 1; this later value wins, as in the reference"));
        QCOMPARE(c.find("CC_MODE")->values[0], std::string("1"));
    }
};

QTEST_GUILESS_MAIN(TestIo)
#include "test_io.moc"
