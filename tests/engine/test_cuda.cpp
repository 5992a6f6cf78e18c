// engine/runtime/cuda: the shared ECMP hash gives the same answer on the GPU as on the CPU.
#include <QtTest>

#include "runtime/cuda/device.h"
#include "topology/ecmp_hash.h"
#include "topology/fabric.h"

using namespace orrery;

class TestCuda : public QObject {
    Q_OBJECT
private slots:
    void ecmp_hash_matches_host() {
        std::string why;
        std::vector<cuda::DeviceInfo> devices = cuda::list_devices(&why);
        if (devices.empty()) QSKIP(("skipped: no GPU (" + why + ")").c_str());
        const size_t n = 100000;
        std::vector<uint32_t> keys(3 * n), seeds(n), gpu(n);
        for (size_t i = 0; i < n; ++i) {
            keys[3 * i] = node_ip(NodeId(i % 4096));
            keys[3 * i + 1] = node_ip(NodeId((i * 7) % 4096));
            keys[3 * i + 2] = uint32_t(10000 + i % 50) | (100u << 16);
            seeds[i] = uint32_t(i % 4500);
        }
        QVERIFY2(cuda::ecmp_hashes_on_device(0, keys.data(), seeds.data(), gpu.data(), n, &why), why.c_str());
        for (size_t i = 0; i < n; ++i) QCOMPARE(gpu[i], murmur3_32(&keys[3 * i], 3, seeds[i]));
    }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
