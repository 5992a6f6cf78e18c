// Fuzzing every input format through `orrery-cli validate`: sample files of each format (tests/reference,
// the bundled scenarios, fabrics the CLI writes) are mutated by a seeded mutator — bytes flipped, cut,
// repeated, numbers replaced by extremes, string values by numbers, nesting and invalid UTF-8 (surrogates and
// overlong forms too) inserted — and each mutant must end
// in a documented exit code (0 valid, 1 invalid input, 2 usage) within the time limit: never a signal, a
// hang, or 3 ("internal error"). CI runs a fixed corpus of ORRERY_FUZZ_CASES=240 cases (seed 1); the long
// mode for sanitizer builds is the same program with more cases (tests/README.md, "Fuzzing").
#include <QtTest>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

struct Sample {
    QString name;       // file name the mutant keeps (its extension picks the reader)
    QString from;       // --from format
    QByteArray bytes;
};

QByteArray read_all(const QString& file) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file));
    return f.readAll();
}

// One mutation of `b`, chosen and placed by `random`.
void mutate(QByteArray& b, std::mt19937_64& random) {
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(random() % n); };
    static const char* const kTokens[] = {"1e400", "-1", "0", "99999999999999999999", "NaN", "-0", "4294967296", "1e-400", "\"\"", "null",
                                          "true", "[]", "{}", "\xff\xfe", "\xc3\x28", "<a>", "</algo>", "\"}", "24xyz", "-9223372036854775808",
                                          // well-formed-looking but invalid UTF-8: a UTF-16 surrogate, an overlong NUL, beyond U+10FFFF
                                          "\xed\xa0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80"};
    const size_t at = pick(size_t(b.size()) + 1);
    switch (random() % 10) {
        case 0:  // flip a byte
            if (!b.isEmpty()) b[qsizetype(pick(size_t(b.size())))] = char(random());
            break;
        case 1:  // cut the file
            b.truncate(qsizetype(at));
            break;
        case 2: {  // repeat a chunk many times
            const qsizetype len = qsizetype(1 + pick(64));
            const QByteArray chunk = b.mid(qsizetype(at), len);
            b.insert(qsizetype(at), chunk.repeated(int(1 + pick(2000))));
            break;
        }
        case 3: {  // replace the next number by an extreme
            qsizetype i = qsizetype(at);
            while (i < b.size() && !(b[i] >= '0' && b[i] <= '9')) ++i;
            qsizetype j = i;
            while (j < b.size() && ((b[j] >= '0' && b[j] <= '9') || b[j] == '.' || b[j] == 'e')) ++j;
            if (i < b.size()) b.replace(i, j - i, kTokens[pick(std::size(kTokens))]);
            break;
        }
        case 4:  // insert a token
            b.insert(qsizetype(at), kTokens[pick(std::size(kTokens))]);
            break;
        case 5: {  // deep nesting of the format's brackets
            static const char* const kOpen[] = {"[", "{", "<x>", "subgraph{", "{\"a\":"};
            b.insert(qsizetype(at), QByteArray(kOpen[pick(std::size(kOpen))]).repeated(int(100 + pick(100000))));
            break;
        }
        case 6:  // delete a span
            b.remove(qsizetype(at), qsizetype(pick(200)));
            break;
        case 7: {  // swap two lines
            QList<QByteArray> lines = b.split('\n');
            if (lines.size() > 2) lines.swapItemsAt(qsizetype(pick(size_t(lines.size()))), qsizetype(pick(size_t(lines.size()))));
            b = lines.join('\n');
            break;
        }
        case 8: {  // a JSON string value becomes a number ("kind": "llm" → "kind": 5: once an internal error)
            const qsizetype colon = b.indexOf("\": \"", qsizetype(at));
            const qsizetype end = colon < 0 ? -1 : b.indexOf('"', colon + 4);
            if (end > colon) b.replace(colon + 3, end - colon - 2, QByteArray::number(qulonglong(pick(10))));
            break;
        }
        default:  // a NUL byte
            b.insert(qsizetype(at), '\0');
            break;
    }
}

}  // namespace

class TestFuzz : public QObject {
    Q_OBJECT
    QTemporaryDir dir;
    std::vector<Sample> samples;

private slots:
    void initTestCase() {
        const QString ref = QString(ORRERY_TEST_DIR) + "/reference";
        const std::vector<std::tuple<QString, QString>> files = {
            {ref + "/ns3-hpcc/config_incast_dcqcn.txt", "hpcc-config"},
            {ref + "/ns3-hpcc/topology.txt", "hpcc"},
            {ref + "/ns3-hpcc/flow_incast.txt", "hpcc-flows"},
            {ref + "/formats/astra-network-yaml/hgx_h100_16gpu.yml", "astra-yaml"},
            {ref + "/formats/astra-network-yaml/Ring_FullyConnected_Switch.yml", "astra-yaml"},
            {ref + "/formats/simai-workload/microAllReduce.txt", "simai-workload"},
            {ref + "/formats/simai-workload/workload_analytical.txt", "simai-workload"},
            {ref + "/formats/simai-topology/Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", "hpcc"},
            {ref + "/formats/chakra-et/all_reduce.0.et", "chakra"},
            {ref + "/formats/msccl/custom_allreduce.xml", "msccl"},
            {ref + "/formats/msccl/allreduce_packet.json", "mscclpp"},
            {QString(ORRERY_SOURCE_DIR) + "/presets/scenarios/demo.json", "orrery"},
        };
        for (const auto& [file, from] : files) samples.push_back({QFileInfo(file).fileName(), from, read_all(file)});
        // The config names its topology and flows: they sit beside the mutants, unmutated.
        for (const char* f : {"topology.txt", "flow_incast.txt", "trace.txt"}) QVERIFY(QFile::copy(ref + "/ns3-hpcc/" + f, dir.filePath(f)));
        // A small MoE training job with a sweep (the bundled Wormhole MoE rows take seconds to prepare: too slow
        // to validate hundreds of times, and they exercise the same readers).
        const QByteArray moe = R"({"format": "orrery-scenario", "version": 1, "name": "small moe",
  "topology": {"generator": "rail-optimized", "gpus": 16, "gpus_per_server": 8, "tiers": 2,
               "link_defaults": {"all": {"rate": "400Gbps", "delay": "1us"}}},
  "network": {"preset": "reference-400g"}, "cc": {"preset": "dcqcn-400g"},
  "workload": {"kind": "llm", "network_mode": "packet", "gpu": "H100",
               "model": {"layers": 4, "hidden": 1024, "heads": 16, "ffn": 4096, "seq": 512, "vocab": 1000, "experts": 8, "top_k": 2},
               "parallel": {"tp": 2, "ep": 4, "dp": 4, "pp": 2, "micro_batches": 2},
               "collectives": {"algorithm": "ring", "channels": 2}},
  "skipping": {"enabled": true, "theta": 0.05},
  "output": {"record": ["fct", "queues"], "sample_interval": "10us"},
  "sweep": {"parameters": [{"path": "cc.algorithm", "values": ["dcqcn", "hpcc"]}], "seeds": [1, 2]}}
)";
        samples.push_back({"moe.json", "orrery", moe});
        // The same job on the flow level with PXN, and SimAI's estimate of a SimAI file beside the mutants.
        QByteArray flow = moe;
        flow.replace("\"network_mode\": \"packet\"", "\"network_mode\": \"flow\"");
        flow.replace("\"channels\": 2}", "\"channels\": 8, \"pxn\": true}");
        samples.push_back({"moe_flow.json", "orrery", flow});
        QVERIFY(QFile::copy(ref + "/formats/simai-workload/microAllReduce.txt", dir.filePath("simai.txt")));
        const QByteArray busbw = R"({"format": "orrery-scenario", "version": 1, "name": "busbw",
  "topology": {"generator": "rail-optimized", "gpus": 8, "gpus_per_server": 8},
  "workload": {"kind": "llm", "gpu": "H100", "import": {"format": "simai", "path": "simai.txt"},
               "parallel": {"tp": 8, "dp": 1},
               "collectives": {"model": "busbw", "busbw": {"nvlink": "360GiB/s", "nic": "48.5GiB/s", "gpus_per_server": 8, "nics_per_server": 8,
                                                        "overlap": {"dp": 0, "tp": 0.5, "ep": 0, "pp": 1}}}}}
)";
        samples.push_back({"busbw.json", "orrery", busbw});
        // GraphML and DOT as the CLI writes them.
        for (const char* ext : {"graphml", "dot"}) {
            QProcess p;
            p.start(ORRERY_CLI, {"fabric", "fat-tree:k=4", "-o", dir.filePath(QString("fabric.") + ext)});
            QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
            samples.push_back({QString("fabric.") + ext, ext, read_all(dir.filePath(QString("fabric.") + ext))});
        }
    }

    void mutants_end_in_a_documented_exit_code() {
        const int cases = qEnvironmentVariableIsSet("ORRERY_FUZZ_CASES") ? qEnvironmentVariableIntValue("ORRERY_FUZZ_CASES") : 240;
        const uint64_t seed = qEnvironmentVariableIsSet("ORRERY_FUZZ_SEED") ? qEnvironmentVariable("ORRERY_FUZZ_SEED").toULongLong() : 1;
        const int timeout_ms = qEnvironmentVariableIsSet("ORRERY_FUZZ_TIMEOUT_MS") ? qEnvironmentVariableIntValue("ORRERY_FUZZ_TIMEOUT_MS") : 20000;
        std::mt19937_64 random(seed);
        std::map<int, int> codes;
        QStringList bad;
        for (int c = 0; c < cases; ++c) {
            const Sample& s = samples[size_t(random() % samples.size())];
            QByteArray bytes = s.bytes;
            const int mutations = int(1 + random() % 3);
            for (int m = 0; m < mutations; ++m) mutate(bytes, random);
            const QString file = dir.filePath(s.name);
            {
                QFile out(file);
                QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
                out.write(bytes);
            }
            QProcess p;
            p.setWorkingDirectory(dir.path());
            p.start(ORRERY_CLI, {"validate", s.name, "--from", s.from});
            const bool ended = p.waitForFinished(timeout_ms);
            QString verdict;
            if (!ended) {
                p.kill();
                p.waitForFinished();
                verdict = QString("no end within %1 s").arg(timeout_ms / 1000);
            } else if (p.exitStatus() == QProcess::CrashExit) {
                verdict = "killed by a signal";
            } else if (p.exitCode() > 2) {
                verdict = QString("exit %1").arg(p.exitCode());
            }
            if (ended && p.exitStatus() == QProcess::NormalExit) ++codes[p.exitCode()];
            if (!verdict.isEmpty()) {
                // Keep the mutant for a look: case number, seed and sample name say how to make it again.
                const QString kept = dir.filePath(QString("failed-%1-%2").arg(c).arg(s.name));
                QFile::copy(file, kept);
                const QString err = QString::fromUtf8(p.readAllStandardError()).section('\n', 0, 0).left(200);
                bad << QString("case %1 (%2, seed %3): %4: %5  [kept as %6]").arg(c).arg(s.name).arg(seed).arg(verdict, err, kept);
            }
        }
        qInfo("%d mutants (seed %llu): exit 0: %d, exit 1: %d, exit 2: %d, other: %lld", cases, (unsigned long long)seed, codes[0], codes[1], codes[2],
              (long long)bad.size());
        if (!bad.isEmpty()) dir.setAutoRemove(false);
        QVERIFY2(bad.isEmpty(), qPrintable("\n" + bad.join("\n")));
        QVERIFY(codes[1] > cases / 4);  // the mutator does break files: most are refused, with a message
    }
};

QTEST_GUILESS_MAIN(TestFuzz)
#include "test_fuzz.moc"
