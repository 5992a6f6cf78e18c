// Several jobs on one fabric (workload.kind "jobs"): placement policies, the errors a placement gets, one job
// that runs with the others exactly as alone where no link is shared, interference where links are, slowdowns
// measured against each job alone, stragglers, start offsets, and the same results at every network mode's
// level of detail that applies.
#include <QtTest>

#include <sqlite3.h>

#include <array>
#include <atomic>
#include <memory>

#include "common/diagnostics.h"
#include "report/report.h"
#include "scenario/build.h"
#include "scenario/load.h"
#include "scenario/presets.h"
#include "session/llm_session.h"
#include "telemetry/chrome_trace.h"
#include "telemetry/store_reader.h"
#include "workload/placement.h"

using namespace orrery;

namespace {

const PresetLibrary kPresets({std::filesystem::path(ORRERY_SOURCE_DIR) / "presets"});

// A small GPT-like model: enough layers and gradient bytes that data-parallel all-reduces cross the fabric.
nlohmann::json small_job(const std::string& name, const nlohmann::json& placement, int tp = 8, int dp = 4) {
    return {{"name", name},
            {"placement", placement},
            {"model", {{"layers", 4}, {"hidden", 2048}, {"heads", 16}, {"ffn", 8192}, {"seq", 1024}, {"vocab", 1000}}},
            {"parallel", {{"tp", tp}, {"dp", dp}, {"micro_batches", 2}}}};
}

// 64 GPUs under 4 leaves of 16 (two 8-GPU servers each), 4 spines, 4:1 oversubscribed.
nlohmann::json two_jobs(const std::string& policy, const std::string& mode) {
    return {{"format", "orrery-scenario"},
            {"version", 1},
            {"name", "two jobs"},
            {"topology", {{"generator", "leaf-spine"}, {"leaves", 4}, {"spines", 4}, {"hosts_per_leaf", 16}, {"oversubscription", 4}, {"servers", {{"gpus_per_server", 8}}}}},
            {"workload",
             {{"kind", "jobs"},
              {"network_mode", mode},
              {"jobs", {small_job("a", {{"policy", policy}}), small_job("b", {{"policy", policy}})}}}}};
}

struct Setup {
    LoadedScenario loaded;
    std::vector<Fabric> fabrics;
    std::vector<const Fabric*> pointers;
    explicit Setup(const nlohmann::json& doc) : loaded(load_scenario_document(doc, "jobs.json", ".", kPresets, LoadOptions{false})) {
        fabrics.reserve(loaded.scenarios.size());
        for (const Scenario& s : loaded.scenarios) fabrics.push_back(build_fabric(s.topology));
        for (const Fabric& f : fabrics) pointers.push_back(&f);
    }
};

struct Ran {
    LlmSessionResult result;
    std::vector<std::vector<JobRow>> jobs;
    std::vector<std::vector<TimelineRow>> timelines;
    std::shared_ptr<QTemporaryDir> dir;  // the store stays while the Ran does
    std::string store;
};

Ran run(const nlohmann::json& doc, int threads = 1) {
    Ran out;
    out.dir = std::make_shared<QTemporaryDir>();
    const Setup setup(doc);
    const std::string file = out.dir->filePath("r.sqlite").toStdString();
    out.store = file;
    {
        ResultsStore store(file);
        std::vector<ExperimentRecord> records;
        for (const Experiment& x : setup.loaded.experiments) records.push_back({x.id, x.index, x.seed, x.sha256, x.parameters});
        store.begin_run(RunRecord{}, records);
        std::atomic<bool> cancel{false};
        SessionBackend backend;
        backend.threads = threads;
        out.result = run_llm_session(setup.loaded, setup.pointers, kPresets, store, backend, {}, cancel);
        store.flush();
        const StoreReader reader(file);
        for (const Experiment& x : setup.loaded.experiments) {
            out.jobs.push_back(reader.jobs(store.run_id(), x.id));
            out.timelines.push_back(reader.timeline(store.run_id(), x.id));
        }
    }
    return out;
}

double slowdown(const nlohmann::json& summary, size_t job) { return summary["jobs"][job]["slowdown"].get<double>(); }

std::string refusal(const nlohmann::json& doc) {
    try {
        Setup setup(doc);
        QTemporaryDir tmp;
        ResultsStore store(tmp.filePath("r.sqlite").toStdString());
        store.begin_run(RunRecord{}, {{setup.loaded.experiments[0].id, 0, 1, "", {}}});
        std::atomic<bool> cancel{false};
        run_llm_session(setup.loaded, setup.pointers, kPresets, store, SessionBackend{}, {}, cancel);
    } catch (const InputError& e) {
        return e.diagnostics().items().front().where + ": " + e.diagnostics().items().front().message;
    }
    return "";
}

}  // namespace

class TestJobs : public QObject {
    Q_OBJECT
private slots:
    void policies_take_whole_servers_where_they_say() {
        const Setup setup(two_jobs("packed", "flow"));
        const Fabric& f = setup.fabrics[0];
        auto hosts_of = [&](std::vector<JobRequest> jobs) { return place_jobs(f, {}, jobs); };
        const ParallelSpec p{8, 1, 2};
        const PlacementSpec packed_spec{PlacementPolicy::packed, 1, {}, 0}, spread_spec{PlacementPolicy::spread, 1, {}, 0};
        // Packed: the lowest servers; the second job the next ones.
        auto packed = hosts_of({{"a", "workload.jobs[0]", packed_spec, 16, &p}, {"b", "workload.jobs[1]", packed_spec, 16, &p}});
        std::vector<NodeId> hosts;
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.is_host(n)) hosts.push_back(n);
        QCOMPARE(packed[0], std::vector<NodeId>(hosts.begin(), hosts.begin() + 16));
        QCOMPARE(packed[1], std::vector<NodeId>(hosts.begin() + 16, hosts.begin() + 32));
        // Spread: one server under each of two leaves (16 hosts a leaf): servers 0 and 2.
        auto spread = hosts_of({{"a", "workload.jobs[0]", spread_spec, 16, &p}});
        std::vector<NodeId> expect(hosts.begin(), hosts.begin() + 8);
        expect.insert(expect.end(), hosts.begin() + 16, hosts.begin() + 24);
        QCOMPARE(spread[0], expect);
        // Random: whole servers, the same for a seed, another set for another seed (of the 8 servers).
        PlacementSpec r1{PlacementPolicy::random, 1, {}, 0}, r2{PlacementPolicy::random, 7, {}, 0};
        auto a = hosts_of({{"a", "w", r1, 16, &p}}), b = hosts_of({{"a", "w", r1, 16, &p}}), c = hosts_of({{"a", "w", r2, 16, &p}});
        QCOMPARE(a, b);
        QVERIFY(a != c);
        for (size_t i = 0; i < 16; i += 8)
            for (size_t k = 1; k < 8; ++k) QCOMPARE(f.node_server[a[0][i + k]], f.node_server[a[0][i]]);
        // Listed hosts, in the order given, and a later packed job around them.
        PlacementSpec listed{PlacementPolicy::hosts, 1, {"8-15", "0-7"}, 0};
        auto around = hosts_of({{"b", "workload.jobs[0]", packed_spec, 16, &p}, {"a", "workload.jobs[1]", listed, 16, &p}});
        QCOMPARE(around[1][0], hosts[8]);
        QCOMPARE(around[1][8], hosts[0]);
        QCOMPARE(around[0][0], hosts[16]);
    }

    void a_placement_that_cannot_be_is_refused_by_name() {
        nlohmann::json overlap = two_jobs("packed", "flow");
        overlap["workload"]["jobs"][0]["placement"] = {{"policy", "hosts"}, {"hosts", {"0-31"}}};
        overlap["workload"]["jobs"][1]["placement"] = {{"policy", "hosts"}, {"hosts", {"24-55"}}};
        const std::string both = refusal(overlap);
        QVERIFY2(both.find("workload.jobs[1].placement.hosts") != std::string::npos && both.find("\"a\" and \"b\" both hold host 24") != std::string::npos,
                 both.c_str());
        nlohmann::json full = two_jobs("packed", "flow");
        full["workload"]["jobs"].push_back(small_job("c", {{"policy", "spread"}}));
        const std::string free = refusal(full);
        QVERIFY2(free.find("workload.jobs[2].placement") != std::string::npos && free.find("asks for 32 GPUs but 0 are free") != std::string::npos,
                 free.c_str());
        nlohmann::json crossing = two_jobs("packed", "flow");
        crossing["workload"]["jobs"][0]["placement"] = {{"policy", "hosts"}, {"hosts", {"4-35"}}};
        const std::string tp = refusal(crossing);
        QVERIFY2(tp.find("TP group") != std::string::npos && tp.find("cross servers") != std::string::npos, tp.c_str());
        nlohmann::json twice = two_jobs("packed", "flow");
        twice["workload"]["jobs"][1]["name"] = "a";
        QVERIFY(refusal(twice).find("names must be unique") != std::string::npos);
        // A job's key that its network mode ignores is warned of under the job, as one job's would be.
        nlohmann::json ignored = two_jobs("packed", "flow");
        ignored["workload"]["jobs"][1]["collectives"] = {{"priority", 5}};
        bool warned = false;
        const Setup with_priority(ignored);
        for (const Diagnostic& d : with_priority.loaded.warnings.items())
            warned |= d.where.find("workload.jobs[…].collectives.priority") != std::string::npos && d.message.find("has no effect") != std::string::npos;
        QVERIFY(warned);
        nlohmann::json own_mode = two_jobs("packed", "flow");
        own_mode["workload"]["jobs"][0]["network_mode"] = "packet";
        QVERIFY(refusal(own_mode).find("workload.network_mode") != std::string::npos);
    }

    void packed_jobs_share_nothing_and_spread_jobs_slow_each_other() {
        // Packed: each job under its own two leaves, its traffic on links of its own: exactly its time alone.
        // Spread: both under every leaf, sharing the 4:1 uplinks: both slower.
        for (const char* mode : {"flow", "analytic"}) {
            const Ran packed = run(two_jobs("packed", mode)), spread = run(two_jobs("spread", mode));
            for (size_t j = 0; j < 2; ++j) {
                const nlohmann::json& s = packed.result.summaries[0];
                QCOMPARE(s["jobs"][j]["name"].get<std::string>(), std::string(j == 0 ? "a" : "b"));
                QCOMPARE(s["jobs"][j]["iteration_time_s"].get<double>(), s["jobs"][j]["alone_iteration_time_s"].get<double>());
                QCOMPARE(slowdown(s, j), 1.0);
                qInfo("%s, job %zu: packed %.4f ms, spread %.4f ms (slowdown %.3f)", mode, j, s["jobs"][j]["iteration_time_s"].get<double>() * 1e3,
                      spread.result.summaries[0]["jobs"][j]["iteration_time_s"].get<double>() * 1e3, slowdown(spread.result.summaries[0], j));
                if (std::string(mode) == "flow") QVERIFY(slowdown(spread.result.summaries[0], j) > 1.05);
                else QCOMPARE(slowdown(spread.result.summaries[0], j), 1.0);  // the contention-free bound: no job meets another
            }
            // The store: a row per job with its ranks and hosts; the timeline's spans carry their job.
            QCOMPARE(packed.jobs[0].size(), size_t(2));
            QCOMPARE(packed.jobs[0][1].first_rank, 32u);
            QCOMPARE(packed.jobs[0][0].hosts, std::string("0-31"));
            QCOMPARE(packed.jobs[0][1].hosts, std::string("32-63"));
            QCOMPARE(spread.jobs[0][0].hosts, std::string("0-7,16-23,32-39,48-55"));
            // The placement map: packed, 16 GPUs under each of two leaves; spread, 8 under each of the four.
            auto count = [](const std::string& text, const std::string& what) {
                size_t n = 0;
                for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
                return n;
            };
            QCOMPARE(count(packed.jobs[0][0].leaves, "(16)"), size_t(2));
            QCOMPARE(count(spread.jobs[0][0].leaves, "(8)"), size_t(4));
            QCOMPARE(packed.result.summaries[0]["jobs"][1]["leaves"].get<std::string>(), packed.jobs[0][1].leaves);
            bool saw[2] = {false, false};
            for (const TimelineRow& r : packed.timelines[0]) {
                QCOMPARE(r.job, r.rank < 32 ? 0u : 1u);
                saw[r.job] = true;
            }
            QVERIFY(saw[0] && saw[1]);
            // Flows carry their job: the flows table's job column over each job's range of rows.
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open_v2(packed.store.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
            sqlite3_stmt* q = nullptr;
            sqlite3_prepare_v2(db, "SELECT job, count(*), min(flow), max(flow) FROM flows GROUP BY job ORDER BY job", -1, &q, nullptr);
            std::vector<std::array<int64_t, 4>> by_job;
            while (sqlite3_step(q) == SQLITE_ROW)
                by_job.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3)});
            sqlite3_finalize(q);
            sqlite3_close(db);
            QCOMPARE(by_job.size(), size_t(2));
            for (size_t j = 0; j < 2; ++j) {
                QCOMPARE(by_job[j][0], int64_t(j));
                QCOMPARE(by_job[j][1], int64_t(packed.jobs[0][j].flows));
                QCOMPARE(by_job[j][2], int64_t(packed.jobs[0][j].first_flow));
            }
            // Perfetto: each rank's process named for its job and its rank there, labelled with the job.
            const nlohmann::json trace = chrome_trace(packed.timelines[0], {}, TraceWindow{}, {}, packed.jobs[0]);
            bool named = false, labelled = false;
            for (const nlohmann::json& e : trace["traceEvents"]) {
                named |= e["name"] == "process_name" && e["pid"] == 32 && e["args"]["name"] == "job b · rank 0";
                labelled |= e["name"] == "process_labels" && e["pid"] == 32 && e["args"]["labels"] == "job b";
            }
            QVERIFY(named && labelled);
        }
        // The report: a sentence per experiment with each job's slowdown, the Jobs table, the job metrics as read.
        nlohmann::json sweep = two_jobs("packed", "flow");
        sweep["sweep"] = {{"parameters", {{{"path", "workload.jobs[0].placement.policy"}, {"values", {"packed", "spread"}}},
                                          {{"path", "workload.jobs[1].placement.policy"}, {"values", {"packed", "spread"}}}}},
                          {"mode", "zip"}};
        const Ran both = run(sweep);
        const report::Report rep = report::read_report(both.store, 0);
        QCOMPARE(rep.table.rows.size(), size_t(2));
        QCOMPARE(rep.table.rows[1].jobs.size(), size_t(2));
        bool said = false;
        for (const std::string& line : rep.summary) said |= line.find("job a 1×") != std::string::npos || line.find("job b ") != std::string::npos;
        QVERIFY2(said, rep.summary.front().c_str());
        QVERIFY2(rep.summary.front().find("its time alone") != std::string::npos, rep.summary.front().c_str());
        const std::string html = report::report_html(rep);
        QVERIFY(html.find("<h2>Jobs</h2>") != std::string::npos);
        QVERIFY(html.find("slowdown of job b (with the others / alone)") != std::string::npos);
    }

    void a_failed_link_is_charged_to_the_job_that_crosses_it() {
        // Packed: job a under leaves 0 and 1, job b under 2 and 3. Two of leaf 0's four uplinks down from the start
        // slow job a; job b, on links of its own, is the same; the report says so job by job.
        nlohmann::json doc = two_jobs("packed", "flow");
        doc["workload"]["isolation"] = false;
        const Fabric f = build_fabric(Setup(doc).loaded.scenarios[0].topology);
        NodeId leaf0 = kNone;
        for (uint32_t p = f.port_begin[0]; p < f.port_begin[1] && leaf0 == kNone; ++p)
            if (f.node_kind[f.port_peer[p]] == NodeKind::network_switch) leaf0 = f.port_peer[p];
        nlohmann::json down = nlohmann::json::array();
        for (LinkId l = 0; l < f.link_count() && down.size() < 2; ++l)
            if ((f.link_a[l] == leaf0 || f.link_b[l] == leaf0) && f.node_tier[f.link_a[l]] + f.node_tier[f.link_b[l]] == 3)
                down.push_back({{"at", "0us"}, {"link", l}, {"state", "down"}});
        QCOMPARE(down.size(), size_t(2));
        doc["sweep"] = {{"parameters", {{{"path", "topology.events"}, {"values", {nlohmann::json::array(), down}}}}}};
        const Ran r = run(doc);
        const double a0 = r.result.summaries[0]["jobs"][0]["iteration_time_s"].get<double>(), a1 = r.result.summaries[1]["jobs"][0]["iteration_time_s"].get<double>();
        const double b0 = r.result.summaries[0]["jobs"][1]["iteration_time_s"].get<double>(), b1 = r.result.summaries[1]["jobs"][1]["iteration_time_s"].get<double>();
        qInfo("two of leaf 0's uplinks down: job a %.3f → %.3f ms, job b %.3f → %.3f ms", a0 * 1e3, a1 * 1e3, b0 * 1e3, b1 * 1e3);
        QVERIFY(a1 > 1.05 * a0);
        QCOMPARE(b1, b0);
        const report::Report rep = report::read_report(r.store, 0);
        QVERIFY2(rep.summary.front().find("iteration time job a +") != std::string::npos &&
                     rep.summary.front().find("job b the same within") != std::string::npos,
                 rep.summary.front().c_str());
    }

    void background_flows_share_the_hosts_and_slow_the_job_they_cross() {
        // Packed jobs a (leaves 0–1) and b (leaves 2–3); background flows from leaf 0's GPUs to leaf 1's cross job
        // a's uplinks: a slows down, b does not, and the flows themselves take longer than alone.
        nlohmann::json doc = two_jobs("packed", "flow");
        const Fabric f = build_fabric(Setup(doc).loaded.scenarios[0].topology);
        std::vector<NodeId> hosts;
        for (NodeId n = 0; n < f.node_count(); ++n)
            if (f.is_host(n)) hosts.push_back(n);
        nlohmann::json flows = nlohmann::json::array();
        for (int i = 0; i < 8; ++i) flows.push_back({{"src", hosts[size_t(i)]}, {"dst", hosts[size_t(16 + i)]}, {"size", "256MB"}, {"start", "0us"}});
        doc["workload"]["jobs"].push_back({{"name", "bg"}, {"kind", "flows"}, {"flows", flows}});
        const Ran r = run(doc);
        const nlohmann::json& jobs = r.result.summaries[0]["jobs"];
        QCOMPARE(jobs.size(), size_t(3));
        qInfo("with background flows: job a %.3f (slowdown %.3f), job b %.3f, background mean FCT %.3f ms (slowdown %.3f)",
              jobs[0]["iteration_time_s"].get<double>() * 1e3, slowdown(r.result.summaries[0], 0), jobs[1]["iteration_time_s"].get<double>() * 1e3,
              jobs[2]["fct_mean_s"].get<double>() * 1e3, slowdown(r.result.summaries[0], 2));
        QVERIFY(slowdown(r.result.summaries[0], 0) > 1.01);
        QCOMPARE(slowdown(r.result.summaries[0], 1), 1.0);
        QVERIFY(slowdown(r.result.summaries[0], 2) > 1.0);
        QCOMPARE(jobs[2]["kind"].get<std::string>(), std::string("flows"));
        QCOMPARE(jobs[2]["flows"].get<size_t>(), size_t(8));
        QCOMPARE(r.jobs[0][2].kind, std::string("flows"));
        QCOMPARE(r.jobs[0][2].flows, 8u);
        // A flow whose end is not a host is refused by name.
        doc["workload"]["jobs"][2]["flows"][3]["dst"] = f.node_count() - 1;
        const std::string bad = refusal(doc);
        QVERIFY2(bad.find("workload.jobs[2].flows[3].dst") != std::string::npos && bad.find("is not a host") != std::string::npos, bad.c_str());
    }

    void the_packet_level_runs_a_mix_and_measures_each_job_alone() {
        // Two 16-GPU jobs (TP8 DP2) spread over four leaves: at packet level each also runs alone first.
        nlohmann::json doc = two_jobs("spread", "packet");
        for (auto& j : doc["workload"]["jobs"]) j["parallel"]["dp"] = 2;
        doc["workload"]["jobs"][0]["model"]["layers"] = 2;
        doc["workload"]["jobs"][1]["model"]["layers"] = 2;
        const Ran packet = run(doc, 2);
        doc["workload"]["network_mode"] = "flow";
        const Ran flow = run(doc);
        for (size_t j = 0; j < 2; ++j) {
            const nlohmann::json& p = packet.result.summaries[0]["jobs"][j];
            const nlohmann::json& f = flow.result.summaries[0]["jobs"][j];
            qInfo("job %zu: packet %.4f ms (alone %.4f), flow %.4f ms (alone %.4f)", j, p["iteration_time_s"].get<double>() * 1e3,
                  p["alone_iteration_time_s"].get<double>() * 1e3, f["iteration_time_s"].get<double>() * 1e3, f["alone_iteration_time_s"].get<double>() * 1e3);
            QVERIFY(p["alone_iteration_time_s"].get<double>() > 0);
            QVERIFY(p["slowdown"].get<double>() > 1.0);  // the two jobs share every leaf's uplinks
            QCOMPARE(p["slowdown"].get<double>(), p["iteration_time_s"].get<double>() / p["alone_iteration_time_s"].get<double>());
        }
        QCOMPARE(packet.result.summaries[0]["network_mode"].get<std::string>(), std::string("packet"));
        QCOMPARE(packet.jobs[0].size(), size_t(2));
    }

    void stragglers_and_late_starts_cost_what_they_should() {
        nlohmann::json base = two_jobs("packed", "flow");
        const Ran healthy = run(base);
        nlohmann::json slow = base;
        slow["workload"]["jobs"][0]["stragglers"] = {{{"rank", 5}, {"slowdown", 1.5}}};
        slow["workload"]["jobs"][1]["start"] = "2ms";
        const Ran r = run(slow);
        const nlohmann::json& h = healthy.result.summaries[0]["jobs"];
        const nlohmann::json& s = r.result.summaries[0]["jobs"];
        // One rank's compute 1.5× slower holds its whole job back (the others wait for it at every collective):
        // the iteration grows by at least a quarter of a rank's compute.
        const double compute = h[0]["breakdown_mean_per_rank"]["compute_s"].get<double>();
        qInfo("straggler: %.4f ms → %.4f ms (compute %.4f ms a rank)", h[0]["iteration_time_s"].get<double>() * 1e3, s[0]["iteration_time_s"].get<double>() * 1e3,
              compute * 1e3);
        QVERIFY(s[0]["iteration_time_s"].get<double>() - h[0]["iteration_time_s"].get<double>() > 0.25 * compute);
        QCOMPARE(s[0]["stragglers"][0]["rank"].get<int>(), 5);
        // A job starting 2 ms late on links of its own takes the same time from its start.
        QCOMPARE(s[1]["iteration_time_s"].get<double>(), h[1]["iteration_time_s"].get<double>());
        QCOMPARE(s[1]["start_s"].get<double>(), 2e-3);
        int64_t first = INT64_MAX;
        for (const TimelineRow& row : r.timelines[0])
            if (row.job == 1) first = std::min(first, row.start_ps);
        QVERIFY(first >= 2'000'000'000);
        // A drawn set of stragglers is the same for a seed.
        nlohmann::json drawn = base;
        drawn["workload"]["jobs"][0]["stragglers"] = {{"count", 2}, {"slowdown", 1.2}, {"seed", 3}};
        const Ran d1 = run(drawn), d2 = run(drawn);
        QCOMPARE(d1.result.summaries[0]["jobs"][0]["stragglers"], d2.result.summaries[0]["jobs"][0]["stragglers"]);
        QCOMPARE(d1.result.summaries[0]["jobs"][0]["stragglers"].size(), size_t(2));
    }
};

QTEST_GUILESS_MAIN(TestJobs)
#include "test_jobs.moc"
