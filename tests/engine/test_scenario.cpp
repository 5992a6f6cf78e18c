// engine/scenario: presets with overrides, sweep expansion, stable ids and hashes, validation messages.
#include <QtTest>

#include <set>

#include "scenario/build.h"
#include "scenario/load.h"

using namespace orrery;

namespace {
PresetLibrary presets() { return PresetLibrary({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"}); }

nlohmann::json base_document() {
    return {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"preset", "fat-tree-k4"}}},
            {"workload", {{"kind", "flows"}, {"flows", {{{"src", 1}, {"dst", 0}, {"size", "1MB"}}, {{"src", 2}, {"dst", 0}, {"size", "1MB"}}}}}}};
}

std::string first_error(const nlohmann::json& doc) {
    try {
        load_scenario_document(doc, "s.json", ".", presets());
    } catch (const InputError& e) {
        return e.diagnostics().items().front().line();
    }
    return "";
}
}  // namespace

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    void preset_with_field_override() {
        nlohmann::json doc = base_document();
        doc["topology"]["k"] = 8;
        LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets());
        Fabric f = build_fabric(s.base.topology);
        QCOMPARE(int(f.count(NodeKind::host)), 128);
        QCOMPARE(f.link_rate[0].count, 100'000'000'000LL);  // from the preset, not overridden
        QCOMPARE(s.base.document["topology"]["generator"].get<std::string>(), std::string("fat-tree"));
    }
    void rail_optimized_default_leaf_divides_the_servers() {
        // 48 servers per rail: the default leaf takes 24 of them (the largest divisor ≤ 32), not a refusal.
        nlohmann::json doc = base_document();
        doc["topology"] = {{"generator", "rail-optimized"}, {"gpus", 384}, {"gpus_per_server", 8}};
        const LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets());
        const Fabric f = build_fabric(s.base.topology);
        int leaves = 0;
        for (NodeId n = 0; n < f.node_count(); ++n) leaves += f.node_kind[n] == NodeKind::network_switch && f.node_tier[n] == 1;
        QCOMPARE(leaves, 8 * 2);  // 8 rails × 48 / 24 leaves
    }

    void fabric_checks_are_not_shared_across_different_flows() {
        // Two experiments on one fabric whose flows differ: the second's flow to a node that does not exist is
        // found, naming the experiment (the check's results were once shared by topology alone).
        nlohmann::json doc = base_document();
        doc["workload"] = {{"kind", "flows"}, {"flows", {{{"src", 1}, {"dst", 0}, {"size", "1MB"}, {"start", "0s"}}}}};
        doc["sweep"] = {{"parameters", {{{"path", "workload.flows[0].dst"}, {"values", {0, 999}}}}}};
        try {
            load_scenario_document(doc, "s.json", ".", presets());
            QFAIL("a flow to node 999 was accepted");
        } catch (const InputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("e0001") != std::string::npos && what.find("node 999 does not exist") != std::string::npos, e.what());
            QVERIFY2(what.find("e0000") == std::string::npos, e.what());
        }
    }

    void cc_preset_defaults_follow_the_reference() {
        nlohmann::json doc = base_document();
        doc["cc"] = {{"preset", "hpcc-100g"}};
        LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets());
        QCOMPARE(s.base.cc.algorithm, CcAlgorithm::hpcc);
        QCOMPARE(s.base.cc.hpcc.int_multi, 4);
        QCOMPARE(s.base.cc.hpcc.rate_ai.count, 40'000'000LL);
        QVERIFY(s.base.cc.window);
        QCOMPARE(ecn_for_rate(s.base, gbps(100)).kmax.count, 1'600'000LL);
        QCOMPARE(ecn_for_rate(s.base, gbps(400)).kmin.count, 1'600'000LL);
        // 200 Gb/s is not in the preset: the nearest entry's thresholds scaled to the rate (run.py's rule), and said.
        std::optional<EcnThreshold> from;
        const EcnThreshold t200 = ecn_for_rate(s.base, gbps(200), &from);
        QVERIFY(from.has_value());
        QCOMPARE(t200.kmin.count, ecn_for_rate(s.base, gbps(100)).kmin.count * 2);
        QCOMPARE(t200.kmax.count, 3'200'000LL);
        QVERIFY(!(ecn_for_rate(s.base, gbps(100), &from), from.has_value()));
    }
    void every_cc_parameter_of_the_table_is_read_into_its_field() {
        // net/cc_params.h drives the reader: a value other than the default for each row lands in the
        // row's field of the CC's params.
        int rows = 0;
        // The value a row is given, and what its field must then hold (picoseconds, bits per second).
        auto given = [](const std::string& kind, double min, double max, bool flag) -> std::pair<nlohmann::json, nlohmann::json> {
            if (kind == "rate") return {"123Mbps", 123'000'000};
            if (kind == "time") return {"55us", 55'000'000};  // between TIMELY's default t_low and t_high, so either may take it
            if (kind == "number") return {(min + max) / 3, (min + max) / 3};
            if (kind == "integer") return {int64_t(max), int64_t(max)};
            return {!flag, !flag};
        };
        auto as_json = [](const auto& v) -> nlohmann::json {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, BitsPerSecond> || std::is_same_v<T, Picoseconds>) return v.count;
            else return v;
        };
#define ORRERY_TEST_CC_PARAM(name, type, member, value, kind, min, max, ...)                                  \
    {                                                                                                       \
        ++rows;                                                                                             \
        const CcSpec defaults;                                                                              \
        const nlohmann::json was = as_json(defaults.name.member);                                           \
        const auto [text, held] = given(#kind, min, max, was.is_boolean() && was.get<bool>());              \
        nlohmann::json doc = base_document();                                                               \
        doc["cc"] = {{"algorithm", #name}, {#name, {{#member, text}}}};                                     \
        const CcSpec read = load_scenario_document(doc, "s.json", ".", presets()).base.cc;                  \
        QVERIFY2(held != was, #name "." #member);                                                           \
        QVERIFY2(as_json(read.name.member) == held, (#name "." #member ": " + as_json(read.name.member).dump()).c_str()); \
    }
        ORRERY_CC_PARAMS(ORRERY_TEST_CC_PARAM)
#undef ORRERY_TEST_CC_PARAM
        QCOMPARE(rows, 26);  // 8 DCQCN, 7 HPCC, 8 TIMELY, 2 DCTCP, 1 fixed
        // A key no row declares is refused with the CC's object in its path.
        nlohmann::json doc = base_document();
        doc["cc"] = {{"algorithm", "dcqcn"}, {"dcqcn", {{"rate_ia", "1Gbps"}}}};
        QVERIFY2(first_error(doc).find("cc.dcqcn.rate_ia") != std::string::npos, first_error(doc).c_str());
    }
    void flows_get_reference_source_ports() {
        nlohmann::json doc = base_document();
        doc["workload"]["flows"].push_back({{"src", 1}, {"dst", 0}, {"size", "2KB"}, {"start", "1us"}});
        LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets());
        const auto& flows = s.base.workload.flows;
        QCOMPARE(flows.size(), size_t(3));
        QCOMPARE(flows[0].sport, uint16_t(10000));  // 1→0 at 0 s
        QCOMPARE(flows[1].sport, uint16_t(10000));  // 2→0
        QCOMPARE(flows[2].sport, uint16_t(10001));  // 1→0 again, later
        QCOMPARE(flows[2].start.count, 1'000'000LL);
    }
    void product_sweep_with_replications() {
        nlohmann::json doc = base_document();
        doc["sweep"] = {{"parameters", {{{"path", "cc.algorithm"}, {"values", {"dcqcn", "hpcc", "timely"}}},
                                        {{"path", "topology.k"}, {"values", {4, 8}}}}},
                        {"replications", 2}};
        LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets(), LoadOptions{false});
        QCOMPARE(s.experiments.size(), size_t(12));
        QCOMPARE(s.experiments[0].id, std::string("e0000"));
        QCOMPARE(s.experiments[11].id, std::string("e0011"));
        // The last parameter varies fastest, then the seed.
        QCOMPARE(s.experiments[1].seed, uint64_t(2));
        QCOMPARE(s.experiments[2].parameters[1]["value"].get<int>(), 8);
        QCOMPARE(s.experiments[4].parameters[0]["value"].get<std::string>(), std::string("hpcc"));
        QCOMPARE(s.scenarios[4].cc.algorithm, CcAlgorithm::hpcc);
        std::set<std::string> hashes;
        for (const Experiment& e : s.experiments) hashes.insert(e.sha256);
        QCOMPARE(hashes.size(), size_t(12));
        // Expanding again gives the same ids and hashes.
        LoadedScenario again = load_scenario_document(doc, "s.json", ".", presets(), LoadOptions{false});
        for (size_t i = 0; i < 12; ++i) QCOMPARE(again.experiments[i].sha256, s.experiments[i].sha256);
    }
    void zip_sweep_and_explicit_seeds() {
        nlohmann::json doc = base_document();
        doc["sweep"] = {{"mode", "zip"},
                        {"parameters", {{{"path", "cc.algorithm"}, {"values", {"dcqcn", "hpcc"}}},
                                        {{"path", "network.buffer_per_switch"}, {"values", {"16MiB", "32MiB"}}}}},
                        {"seeds", {7, 9}}};
        LoadedScenario s = load_scenario_document(doc, "s.json", ".", presets(), LoadOptions{false});
        QCOMPARE(s.experiments.size(), size_t(4));
        QCOMPARE(s.experiments[3].seed, uint64_t(9));
        QCOMPARE(s.scenarios[2].network.buffer_per_switch.count, 32LL << 20);
        QCOMPARE(s.scenarios[2].cc.algorithm, CcAlgorithm::hpcc);
    }
    void hash_ignores_key_order_but_not_values() {
        nlohmann::json a = base_document(), b = nlohmann::json::parse(base_document().dump());
        LoadedScenario sa = load_scenario_document(a, "a.json", ".", presets(), LoadOptions{false});
        LoadedScenario sb = load_scenario_document(b, "b.json", ".", presets(), LoadOptions{false});
        QCOMPARE(sa.experiments[0].sha256, sb.experiments[0].sha256);
        b["network"] = {{"packet_payload", "9000B"}};
        LoadedScenario sc = load_scenario_document(b, "b.json", ".", presets(), LoadOptions{false});
        QVERIFY(sa.experiments[0].sha256 != sc.experiments[0].sha256);
    }
    void every_error_is_reported_at_once() {
        nlohmann::json doc = base_document();
        doc["topology"] = {{"generator", "fat-tree"}, {"k", 5}};
        doc["cc"] = {{"algorithm", "hpcc"}, {"hpcc", {{"eta", 2}}}};
        doc["colour"] = "blue";
        try {
            load_scenario_document(doc, "s.json", ".", presets());
            QFAIL("expected an InputError");
        } catch (const InputError& e) {
            QCOMPARE(e.diagnostics().error_count(), size_t(3));
        }
    }
    void messages_name_path_expected_and_found() {
        nlohmann::json doc = base_document();
        doc["network"] = {{"pfc", {{"alpha_shift", "3"}}}};
        QCOMPARE(first_error(doc), std::string("s.json: network.pfc.alpha_shift: error: expected an integer in [0, 16], found the string \"3\""));
        doc = base_document();
        doc["workload"]["flows"][1]["strat"] = "1us";
        QCOMPARE(first_error(doc), std::string("s.json: workload.flows[1].strat: error: unknown key \"strat\" (did you mean \"start\"?)"));
        doc = base_document();
        doc["cc"] = {{"algorithm", "timely"}, {"timely", {{"t_low", "600us"}}}};
        QCOMPARE(first_error(doc), std::string("s.json: cc.timely.t_high: error: expected t_high ≥ t_low = 600us, found 500us"));
    }
    void set_at_path_reports_bad_paths() {
        nlohmann::json doc = base_document();
        std::string why;
        QVERIFY(set_at_path(doc, "workload.flows[1].size", "5MB", &why));
        QCOMPARE(doc["workload"]["flows"][1]["size"].get<std::string>(), std::string("5MB"));
        QVERIFY(!set_at_path(doc, "workload.flows[9].size", "5MB", &why));
        QCOMPARE(why, std::string("\"workload.flows\" has no element 9"));
        QVERIFY(!set_at_path(doc, "version.minor", 1, &why));
    }
    void demo_scenario_is_valid() {
        LoadedScenario s = load_scenario_file(std::filesystem::path(ORRERY_SOURCE_DIR) / "presets/scenarios/demo.json", presets());
        QCOMPARE(s.experiments.size(), size_t(4));
        QCOMPARE(s.scenarios[3].cc.algorithm, CcAlgorithm::dctcp);
        QCOMPARE(s.scenarios[3].cc.dctcp.g, 0.0625);
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "test_scenario.moc"
