// engine/common: quantities with units, diagnostics' suggestions, SHA-256, the reference ECMP hash.
#include <QtTest>

#include "common/diagnostics.h"
#include "common/nesting.h"
#include "common/quantity.h"
#include "common/sha256.h"
#include "topology/ecmp_hash.h"
#include "topology/fabric.h"

using namespace orrery;

class TestCommon : public QObject {
    Q_OBJECT
private slots:
    void rates_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qlonglong>("bps");
        QTest::newRow("Gbps") << "100Gbps" << 100'000'000'000LL;
        QTest::newRow("Mb/s") << "1000Mb/s" << 1'000'000'000LL;
        QTest::newRow("fraction") << "2.5Gbps" << 2'500'000'000LL;
        QTest::newRow("bytes") << "900GBps" << 7'200'000'000'000LL;
        QTest::newRow("binary") << "1Kibps" << 1024LL;
        QTest::newRow("plain bps") << "42bps" << 42LL;
    }
    void rates() {
        QFETCH(QString, text);
        QFETCH(qlonglong, bps);
        auto r = parse_rate(text.toStdString());
        QVERIFY(r.has_value());
        QCOMPARE(r->count, bps);
        QCOMPARE(parse_rate(format_rate(*r))->count, bps);
    }
    void times_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("unitless");
        QTest::addColumn<qlonglong>("ps");
        QTest::newRow("ns") << "1000ns" << false << 1'000'000LL;
        QTest::newRow("ms fraction (SimAI)") << "0.000025ms" << false << 25'000LL;
        QTest::newRow("us") << "2.5us" << false << 2'500'000LL;
        QTest::newRow("bare seconds in ns-3 files") << "0.000001" << true << 1'000'000LL;
        QTest::newRow("s") << "2s" << false << 2'000'000'000'000LL;
    }
    void times() {
        QFETCH(QString, text);
        QFETCH(bool, unitless);
        QFETCH(qlonglong, ps);
        auto t = parse_time(text.toStdString(), unitless);
        QVERIFY(t.has_value());
        QCOMPARE(t->count, ps);
        QCOMPARE(parse_time(format_time(*t), false)->count, ps);
    }
    void rejects_bad_quantities() {
        std::string why;
        QVERIFY(!parse_rate("100", &why));
        QCOMPARE(why, std::string("a rate needs a unit, like \"100Gbps\" or \"400Gb/s\""));
        QVERIFY(!parse_rate("fast", &why));
        QVERIFY(!parse_time("1000", false, &why));
        QVERIFY(!parse_time("-1us", false, &why));
        QCOMPARE(why, std::string("a time cannot be negative"));
        QVERIFY(!parse_size("12 parsecs", &why));
        QCOMPARE(why, std::string("unknown size unit 'parsecs'; write it like \"1000B\", \"64KB\" or \"32MiB\""));
    }
    void sizes() {
        QCOMPARE(parse_size("32MiB")->count, 33'554'432LL);
        QCOMPARE(parse_size("1600KB")->count, 1'600'000LL);
        QCOMPARE(format_size(Bytes(33'554'432)), std::string("32MiB"));
        QCOMPARE(format_size(Bytes(1'600'000)), std::string("1600KB"));
        QCOMPARE(format_size(Bytes(1048)), std::string("1048B"));
    }
    void suggestions() {
        QCOMPARE(closest_match("topolgy", {"topology", "network", "cc"}), std::string("topology"));
        QCOMPARE(closest_match("hostsPerLeaf", {"hosts_per_leaf", "leaves"}), std::string("hosts_per_leaf"));
        QCOMPARE(closest_match("zzzzzz", {"topology", "network"}), std::string());
    }
    void sha256_known_vector() {
        QCOMPARE(sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }
    void murmur3_known_vectors() {
        // MurmurHash3_x86_32("test", seed 0) = 0xba6bd213 (the published value; "test" as one little-endian word).
        const uint32_t word = 't' | ('e' << 8) | ('s' << 16) | (uint32_t('t') << 24);
        QCOMPARE(murmur3_32(&word, 1, 0), 0xba6bd213u);
        QCOMPARE(murmur3_32(nullptr, 0, 1), 0x514e28b7u);
        // The key is (sip, dip, sport | dport << 16); the seed is the switch id, so switches split differently.
        QVERIFY(ecmp_hash(node_ip(1), node_ip(0), 10000, 100, 16) != ecmp_hash(node_ip(1), node_ip(0), 10000, 100, 17));
    }
    void utf8_is_rfc3629() {
        QVERIFY(valid_utf8("plain ASCII"));
        QVERIFY(valid_utf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));  // é, €, an emoji, U+10FFFF
        QVERIFY(!valid_utf8("\xED\xA0\x80"));      // a UTF-16 surrogate (U+D800) written as UTF-8: JSON writers throw on it
        QVERIFY(!valid_utf8("\xE0\x80\x80"));      // overlong NUL
        QVERIFY(!valid_utf8("\xF0\x80\x80\x80"));  // overlong
        QVERIFY(!valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
        QVERIFY(!valid_utf8("\xC3"));              // cut short
        QVERIFY(!valid_utf8("\xE2\x82"));
        QVERIFY(!valid_utf8("\xA9"));              // a lone continuation
    }
    void reference_addresses() {
        QCOMPARE(node_ip(4), 0x0b000401u);
        QCOMPARE(node_ip(300), 0x0b012c01u);
        QCOMPARE(ip_node(node_ip(300)), NodeId(300));
    }
};

QTEST_GUILESS_MAIN(TestCommon)
#include "test_common.moc"
