// Packet storage (net/blocks.h, runtime/block_arena.h): FIFOs of blocks from one arena, and what a run
// leaves of it.
#include <QtTest>

#include <atomic>
#include <cstring>

#include <nlohmann/json.hpp>

#include "net/blocks.h"
#include "net/link.h"
#include "runtime/batch.h"
#include "runtime/block_arena.h"
#include "runtime/cpu_runner.h"
#include "scenario/build.h"
#include "scenario/load.h"

using namespace orrery;

namespace {

// A k-ary fat-tree with a permutation of 1 MB flows under DCQCN (as bench_scale runs it), or another CC.
LoadedScenario permutation(int k, uint64_t seed_shift, const char* cc = "dcqcn") {
    const int hosts = k * k * k / 4;
    nlohmann::json flows = nlohmann::json::array();
    for (int i = 0; i < hosts; ++i) flows.push_back({{"src", i}, {"dst", (i + int(seed_shift)) % hosts}, {"size", "1MB"}});
    const nlohmann::json doc = {{"format", "orrery-scenario"}, {"version", 1}, {"topology", {{"generator", "fat-tree"}, {"k", k}}},
                                {"cc", {{"algorithm", cc}}}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
    return load_scenario_document(doc, "perm.json", ".", PresetLibrary());
}

int64_t blocks_held(const Batch& b, uint32_t e) {
    int64_t held = 0;
    for (uint32_t n = b.experiments[e].node_begin; n < b.experiments[e].node_end; ++n) held += b.out[n].blocks_held;
    return held;
}

}  // namespace

class TestBlocks : public QObject {
    Q_OBJECT
private slots:
    void a_fifo_keeps_order_across_blocks_and_holds_blocks_only_while_it_holds_packets_data() {
        QTest::addColumn<uint32_t>("packet_shift");
        QTest::newRow("64-byte packets") << net::kFullPacketShift;
        QTest::newRow("32-byte packets") << net::kCompactPacketShift;
    }
    void a_fifo_keeps_order_across_blocks_and_holds_blocks_only_while_it_holds_packets() {
        QFETCH(uint32_t, packet_shift);
        BlockArena arena(1 << 16, packet_shift);
        WorkerStorage worker(arena);
        const net::BlockStore store = arena.store(&worker.cache);
        net::BlockFifo fifo;
        int64_t held = 0;
        uint32_t written = 0, read = 0;
        // Bursts of pushes and fewer pops, then drain: 37 blocks at most, order kept throughout.
        for (int round = 0; round < 40; ++round) {
            for (int i = 0; i < 23; ++i) {
                net::Packet p{};
                p.seq = written++;
                p.sent_ns = uint64_t(p.seq) * 3;  // TIMELY's timestamp: stored by either size
                QVERIFY(net::fifo_push(store, held, fifo, p));
            }
            for (int i = 0; i < 8; ++i) {
                const net::Packet p = net::fifo_pop(store, held, fifo);
                QCOMPARE(p.seq, read);
                QCOMPARE(p.sent_ns, uint64_t(read++) * 3);
            }
            QCOMPARE(held, int64_t((fifo.tail - 1) / net::kBlockPackets - fifo.head / net::kBlockPackets + 1));
        }
        uint32_t visited = read;
        net::fifo_for_each(store, fifo, [&](const net::Packet& p) { QCOMPARE(p.seq, visited++); });
        QCOMPARE(visited, written);
        while (!net::fifo_empty(fifo)) QCOMPARE(net::fifo_pop(store, held, fifo).seq, read++);
        QCOMPARE(read, written);
        QCOMPARE(held, int64_t(0));
        QCOMPARE(fifo.head_block, net::kNoBlock);
    }

    void a_run_gives_back_every_block_and_a_sweep_reuses_them() {
        const LoadedScenario s = permutation(4, 1);
        const Fabric f = build_fabric(s.scenarios[0].topology);
        std::vector<ExperimentInput> inputs;
        for (int e = 0; e < 4; ++e) inputs.push_back({std::string("e000") + char('0' + e), &s.scenarios[0], &f, workload_flows(s.scenarios[0])});
        Batch one = compile_batch({inputs[0]});
        run_cpu(one, RunOptions{});
        Batch four = compile_batch(inputs);
        const auto results = run_cpu(four, RunOptions{});  // one thread: the experiments one after another
        for (uint32_t e = 0; e < 4; ++e) {
            QCOMPARE(results[e].flows.size(), size_t(16));
            QCOMPARE(blocks_held(four, e), int64_t(0));  // everything given back when it ended
            QCOMPARE(four.experiments[e].peak_blocks, one.experiments[0].peak_blocks);
            QVERIFY(four.experiments[e].peak_blocks > 0);
        }
        // Run one after another, the four experiments use the same blocks: no more storage than one alone.
        QCOMPARE(four.arena->committed_blocks(), one.arena->committed_blocks());
    }

    // Non-temporal packet writes (net/link.h: write_ring_slot) leave the line a plain copy leaves.
    void a_streamed_packet_write_leaves_the_line_a_copy_leaves() {
        net::Packet p{};
        p.arrival = 7;
        p.flow = 123456;
        p.seq = 0xdeadbeef;
        p.wire = 1048;
        p.in_port = 9;
        p.hop = 3;
        p.nhop = 2;
        p.kind = net::kAck;
        p.flags = net::kFlagCnp;
        p.pg = 3;
        for (int i = 0; i < net::kMaxIntHops; ++i) p.hops[i].bits = 0x0123456789abcdefull * uint64_t(i + 1);
        net::Packet copied, streamed;
        std::memset(&copied, 0x5a, sizeof copied);
        std::memset(&streamed, 0xa5, sizeof streamed);
        const int64_t arrival = 2000000123456;
        const net::BlockStore full{};  // 64-byte slots
        net::write_ring_slot(full, copied, p, arrival, false);
        net::write_ring_slot(full, streamed, p, arrival, true);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        QCOMPARE(streamed.arrival, arrival);
        QCOMPARE(streamed.flow, p.flow);
        QCOMPARE(std::memcmp(&copied, &streamed, sizeof(net::Packet)), 0);
        // Into 32-byte slots: the first half of the line as above, the next slot (the second half) untouched.
        alignas(64) unsigned char lines[2][64];
        std::memset(lines[0], 0x5a, 64);
        std::memset(lines[1], 0x5a, 64);
        net::BlockStore compact{};
        compact.packet_shift = net::kCompactPacketShift;
        for (int stream = 0; stream < 2; ++stream)
            net::write_ring_slot(compact, *reinterpret_cast<net::Packet*>(lines[stream]), p, arrival, stream != 0);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (const auto& line : lines) {
            QCOMPARE(std::memcmp(line, &copied, 32), 0);
            for (int i = 32; i < 64; ++i) QCOMPARE(int(line[i]), 0x5a);
        }
    }

    // A batch without HPCC stores 32-byte packets, one with HPCC 64-byte ones (HPCC's INT hops are the second
    // half of the line), and either size gives the same results to the event: DCQCN and TIMELY (whose timestamp
    // rides in the first half) in 32- and in 64-byte slots, on two threads with every step streamed.
    void half_line_packets_change_no_result() {
        for (const char* cc : {"dcqcn", "timely"}) {
            const LoadedScenario s = permutation(8, 64, cc);
            const Fabric f = build_fabric(s.scenarios[0].topology);
            std::vector<ExperimentResult> results;
            std::vector<double> committed_bytes;
            for (const bool full : {false, true}) {
                Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}}, nullptr,
                                        full ? PacketSlots::whole_line : PacketSlots::by_cc);
                QCOMPARE(b.arena->packet_shift(), full ? net::kFullPacketShift : net::kCompactPacketShift);
                RunOptions options;
                options.threads = 2;
                options.stream_packets_above = 1;
                results.push_back(run_cpu(b, options)[0]);
                committed_bytes.push_back(double(b.experiments[0].peak_blocks) * double(b.arena->block_bytes()));
            }
            const ExperimentResult& half = results[0];
            const ExperimentResult& whole = results[1];
            QCOMPARE(half.flows.size(), size_t(128));
            QCOMPARE(half.events, whole.events);
            QCOMPARE(half.packet_hops, whole.packet_hops);
            QCOMPARE(half.flows.size(), whole.flows.size());
            for (size_t i = 0; i < half.flows.size(); ++i) {
                QCOMPARE(half.flows[i].flow, whole.flows[i].flow);
                QCOMPARE(half.flows[i].finish, whole.flows[i].finish);
            }
            QCOMPARE(committed_bytes[0] * 2, committed_bytes[1]);  // the same blocks, half their bytes
        }
        // HPCC needs the whole line: a batch given a half-line arena gets a whole-line one instead, and a batch
        // without HPCC given a whole-line arena a half-line one.
        const LoadedScenario s = permutation(4, 3, "hpcc");
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}},
                                      std::make_unique<BlockArena>(1 << 16, net::kCompactPacketShift));
        QCOMPARE(b.arena->packet_shift(), net::kFullPacketShift);
        const LoadedScenario d = permutation(4, 3, "dcqcn");
        const Fabric g = build_fabric(d.scenarios[0].topology);
        const Batch c = compile_batch({{"e0000", &d.scenarios[0], &g, workload_flows(d.scenarios[0])}}, std::make_unique<BlockArena>(1 << 16));
        QCOMPARE(c.arena->packet_shift(), net::kCompactPacketShift);
    }

    // The same run with every step's packets streamed, on two threads (the fence before the barrier is what
    // makes them visible to the other thread's readers), and with none streamed: the same results to the event.
    void streamed_packet_writes_change_no_result() {
        const LoadedScenario s = permutation(8, 64);  // every flow to the other half of the pods
        const Fabric f = build_fabric(s.scenarios[0].topology);
        std::vector<ExperimentResult> results;
        for (uint64_t above : {uint64_t(1), UINT64_MAX}) {
            Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
            RunOptions options;
            options.threads = 2;
            options.stream_packets_above = above;
            results.push_back(run_cpu(b, options)[0]);
        }
        const ExperimentResult& streamed = results[0];
        const ExperimentResult& copied = results[1];
        QVERIFY2(streamed.streamed_steps > streamed.steps / 2, qPrintable(QString("%1 of %2 steps streamed").arg(streamed.streamed_steps).arg(streamed.steps)));
        QVERIFY(streamed.split_steps > 0);
        QCOMPARE(copied.streamed_steps, uint64_t(0));
        QCOMPARE(streamed.events, copied.events);
        QCOMPARE(streamed.packet_hops, copied.packet_hops);
        QCOMPARE(streamed.steps, copied.steps);
        QCOMPARE(streamed.flows.size(), size_t(128));
        QCOMPARE(streamed.flows.size(), copied.flows.size());
        for (size_t i = 0; i < streamed.flows.size(); ++i) {
            QCOMPARE(streamed.flows[i].flow, copied.flows[i].flow);
            QCOMPARE(streamed.flows[i].finish, copied.flows[i].finish);
        }
    }

    void an_exhausted_arena_stops_the_run_naming_the_node() {
        const LoadedScenario s = permutation(8, 64);  // every flow to the other half of the pods
        const Fabric f = build_fabric(s.scenarios[0].topology);
        Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
        b.arena = std::make_unique<BlockArena>(4096);  // the smallest arena: a k = 8 permutation needs more
        try {
            run_cpu(b, RunOptions{});
            QFAIL("the run went on without storage for its packets");
        } catch (const std::runtime_error& e) {
            const QString what = e.what();
            QVERIFY2(what.contains("packet storage exhausted at node") && what.contains("of experiment e0000") && what.contains("MiB"), qPrintable(what));
        }
    }

    // The batch's tables of 2 MiB or more start on a 2 MiB boundary, the precondition for the kernel to back
    // them with huge pages (runtime/huge_page_table.h); smaller ones come from the heap. Copies, growth and
    // the compiled batch keep every row.
    void large_tables_start_on_a_huge_page_boundary() {
        Table<net::PortQueues> big(kHugePageBytes / sizeof(net::PortQueues) + 1);
        QCOMPARE(reinterpret_cast<uintptr_t>(big.data()) % kHugePageBytes, uintptr_t(0));
        Table<uint32_t> small(100);
        for (uint32_t i = 0; i < small.size(); ++i) small[i] = i * 7;
        for (uint32_t i = 0; i < kHugePageBytes; ++i) small.push_back(i);  // grows past 2 MiB: moved into a huge-page table
        QCOMPARE(reinterpret_cast<uintptr_t>(small.data()) % kHugePageBytes, uintptr_t(0));
        QCOMPARE(small[99], uint32_t(693));
        QCOMPARE(small.back(), uint32_t(kHugePageBytes - 1));
        const Table<uint32_t> copy = small;
        QVERIFY(copy == small);
        const LoadedScenario s = permutation(24, 64);
        const Fabric f = build_fabric(s.scenarios[0].topology);
        const Batch b = compile_batch({{"e0000", &s.scenarios[0], &f, workload_flows(s.scenarios[0])}});
        QVERIFY(b.queues.size() * sizeof(net::PortQueues) >= kHugePageBytes);  // k = 24: 20,736 ports
        QCOMPARE(reinterpret_cast<uintptr_t>(b.queues.data()) % kHugePageBytes, uintptr_t(0));
    }

    // The arena's blocks start on a 2 MiB boundary; commits that reach past BlockArena::kHugePagesFromBytes are
    // marked for huge pages (the kernel's VM_HUGEPAGE, "hg" in /proc/self/smaps), the first GiB is not, and both
    // hold what is written into them.
    void only_a_large_arena_asks_for_huge_pages() {
        if (!QFile::exists("/sys/kernel/mm/transparent_hugepage/enabled")) QSKIP("this kernel has no transparent huge pages");
        BlockArena arena(2 * BlockArena::kHugePagesFromBytes / net::kMaxBlockBytes);
        const uint64_t block_bytes = arena.block_bytes();
        QCOMPARE(reinterpret_cast<uintptr_t>(arena.blocks()) % kHugePageBytes, uintptr_t(0));
        const uint64_t low = BlockArena::kHugePagesFromBytes / block_bytes / 4, high = 5 * low;  // 0.25 and 1.25 GiB in
        QVERIFY(arena.commit_at_least(high + 1));
        const net::BlockStore store = arena.store(nullptr);
        for (const uint64_t i : {low, high}) {
            net::packet_at(store, uint32_t(i), 3).seq = uint32_t(i);
            QCOMPARE(net::packet_at(store, uint32_t(i), 3).seq, uint32_t(i));
        }
        // The flags of the mapping that holds an address: smaps lists each mapping's range, then its fields,
        // VmFlags last.
        const auto huge_page_flag = [](const void* address) {
            QFile smaps("/proc/self/smaps");
            if (!smaps.open(QIODevice::ReadOnly | QIODevice::Text)) return QString("unreadable");
            const uintptr_t a = reinterpret_cast<uintptr_t>(address);
            bool inside = false;
            for (QByteArray line = smaps.readLine(); !line.isEmpty(); line = smaps.readLine()) {
                const int dash = line.indexOf('-'), space = line.indexOf(' ');
                bool ok_begin = false, ok_end = false;
                if (dash > 0 && space > dash) {
                    const uintptr_t begin = line.left(dash).toULongLong(&ok_begin, 16), end = line.mid(dash + 1, space - dash - 1).toULongLong(&ok_end, 16);
                    if (ok_begin && ok_end) inside = begin <= a && a < end;
                }
                if (inside && line.startsWith("VmFlags:")) return QString(line.split(' ').contains("hg") ? "hg" : "no hg");
            }
            return QString("not found");
        };
        QCOMPARE(huge_page_flag(&net::packet_at(store, uint32_t(high), 0)), QString("hg"));
        QCOMPARE(huge_page_flag(&net::packet_at(store, uint32_t(low), 0)), QString("no hg"));
    }
};

QTEST_GUILESS_MAIN(TestBlocks)
#include "test_blocks.moc"
